"""Eviction from a worker's bot caches: idle entries and a size cap, never an entry in use
(by this process or another), never half of one. Ages are set on the files, not waited for."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from arena.referee.cachedir import evict, lease, locked

HOUR = 3600.0
ROOT = Path(__file__).resolve().parents[2]


def entry(folder: Path, key: str, *, size: int = 1000, age_h: float = 0.0) -> Path:
    """A cache entry of ``size`` bytes last used ``age_h`` hours ago."""
    path = folder / key
    (path / "bot").mkdir(parents=True)
    (path / "bot" / "main").write_bytes(b"x" * size)
    backdate(path, age_h)
    return path


def backdate(path: Path, age_h: float) -> None:
    t = time.time() - age_h * HOUR
    os.utime(path, (t, t))
    use = path.parent / f".{path.name}.use"
    if use.exists():
        os.utime(use, (t, t))


def names(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if not p.name.startswith(".")}


def test_entries_unused_for_the_idle_time_are_removed(tmp_path: Path) -> None:
    unpacked, builds = tmp_path / "cache", tmp_path / "builds"
    entry(unpacked, "old", age_h=80)
    entry(unpacked, "recent", age_h=1)
    entry(builds, "old-build", size=5000, age_h=100)
    report = evict([unpacked, builds], idle_s=72 * HOUR)
    assert sorted(report.removed) == ["builds/old-build", "cache/old"]
    assert report.freed_bytes == 6000 and report.left_bytes == 1000
    assert names(unpacked) == {"recent"} and names(builds) == set()
    assert [p.name for p in unpacked.iterdir()] == ["recent"]  # no use file, no leftovers


def test_the_last_use_is_the_lease_not_the_creation(tmp_path: Path) -> None:
    old = entry(tmp_path, "old", age_h=100)
    with lease(tmp_path, "old"):
        pass
    assert (tmp_path / ".old.use").stat().st_mtime > time.time() - HOUR
    assert evict([tmp_path], idle_s=72 * HOUR).removed == []
    backdate(old, 73)
    assert evict([tmp_path], idle_s=72 * HOUR).removed == [f"{tmp_path.name}/old"]
    assert not old.exists() and not (tmp_path / ".old.use").exists()


def test_an_entry_in_use_is_never_removed_however_old_or_big(tmp_path: Path) -> None:
    playing = entry(tmp_path, "playing", size=10_000)
    with lease(tmp_path, "playing"):
        backdate(playing, 500)
        report = evict([tmp_path], idle_s=HOUR, max_bytes=100)
        assert report.removed == [] and report.in_use == [f"{tmp_path.name}/playing"]
        assert (playing / "bot" / "main").stat().st_size == 10_000
    backdate(playing, 500)
    assert evict([tmp_path], idle_s=HOUR).removed == [f"{tmp_path.name}/playing"]


def test_an_entry_in_use_by_another_process_is_never_removed(tmp_path: Path) -> None:
    playing = entry(tmp_path, "playing", age_h=500)
    code = (
        "import sys; from pathlib import Path; from arena.referee.cachedir import lease\n"
        "with lease(Path(sys.argv[1]), 'playing'):\n"
        "    print('leased', flush=True); sys.stdin.readline()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "leased\n"
        backdate(playing, 500)
        assert evict([tmp_path], idle_s=HOUR).in_use == [f"{tmp_path.name}/playing"]
        assert playing.is_dir()
    finally:
        holder.communicate("done\n", timeout=60)
    backdate(playing, 500)
    assert evict([tmp_path], idle_s=HOUR).removed == [f"{tmp_path.name}/playing"]


def test_over_the_cap_the_least_recently_used_go_first(tmp_path: Path) -> None:
    for key, age in (("a", 5), ("b", 1), ("c", 3), ("d", 2)):
        entry(tmp_path, key, size=1000, age_h=age)
    report = evict([tmp_path], idle_s=0, max_bytes=2500)
    assert report.removed == [f"{tmp_path.name}/a", f"{tmp_path.name}/c"]
    assert names(tmp_path) == {"b", "d"} and report.left_bytes == 2000


def test_no_idle_time_and_no_cap_remove_nothing(tmp_path: Path) -> None:
    entry(tmp_path, "ancient", age_h=10_000)
    assert evict([tmp_path], idle_s=0, max_bytes=0).removed == []
    assert evict([tmp_path / "missing"], idle_s=HOUR).removed == []
    assert names(tmp_path) == {"ancient"}


def test_leftovers_of_dead_processes_go_with_the_idle_entries(tmp_path: Path) -> None:
    for name in (".unpack-x1", ".build-x2", ".evict-x3", ".unpack-fresh"):
        (tmp_path / name / "bot").mkdir(parents=True)
    (tmp_path / ".evict-fresh").mkdir()  # an entry renamed away is garbage at any age
    for name in (".unpack-x1", ".build-x2", ".evict-x3"):
        backdate(tmp_path / name, 100)
    evict([tmp_path], idle_s=HOUR)
    assert [p.name for p in tmp_path.iterdir()] == [".unpack-fresh"]  # still being written


def test_a_lease_on_an_entry_evicted_meanwhile_holds_the_new_one(tmp_path: Path) -> None:
    """The lock file goes with the entry; a lease taken afterwards locks the new file, which
    an eviction then sees."""
    entry(tmp_path, "bot", age_h=100)
    assert evict([tmp_path], idle_s=HOUR).removed == [f"{tmp_path.name}/bot"]
    with lease(tmp_path, "bot"):
        again = entry(tmp_path, "bot", age_h=100)  # unpacked again by the game
        backdate(again, 100)
        assert evict([tmp_path], idle_s=HOUR).in_use == [f"{tmp_path.name}/bot"]
    assert again.is_dir()


def test_a_lease_on_an_entry_that_never_came_leaves_nothing(tmp_path: Path) -> None:
    """A failed unpacking or build: the entry was leased and never made."""
    with lease(tmp_path, "failed"):
        assert (tmp_path / ".failed.use").exists()
    assert list(tmp_path.iterdir()) == []
    entry(tmp_path, "made")
    with lease(tmp_path, "made"):
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == [".made.use", "made"]


def test_the_last_of_several_leases_on_a_missing_entry_cleans_up(tmp_path: Path) -> None:
    with lease(tmp_path, "failed"):
        with lease(tmp_path, "failed"):
            pass
        assert (tmp_path / ".failed.use").exists()  # still held
    assert list(tmp_path.iterdir()) == []


def test_an_exclusive_lock_is_removed_when_released(tmp_path: Path) -> None:
    with locked(tmp_path, "key"):
        assert (tmp_path / ".key.lock").exists()
    assert list(tmp_path.iterdir()) == []


def test_eviction_removes_lock_and_use_files_of_entries_that_are_gone(tmp_path: Path) -> None:
    """Left by processes that died, or by older versions of the arena."""
    entry(tmp_path, "kept")
    for name in (".gone.use", ".gone.lock", ".kept.use", ".kept.lock", ".held.use"):
        (tmp_path / name).touch()
    with lease(tmp_path, "held"), locked(tmp_path, "building"):
        evict([tmp_path], idle_s=HOUR)
        assert sorted(p.name for p in tmp_path.iterdir()) == [
            ".building.lock",
            ".held.use",
            ".kept.use",
            "kept",
        ]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".kept.use", "kept"]
