"""The sandbox package's parts on their own: the lease a bot gives back, the split into modules.

The sandbox against real programs is in test_sandbox.py.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.referee.sandbox import BotProcess, Lease, ProtectionLevel, Sandbox, SlotsExhausted
from arena.referee.sandbox.slots import SlotPool
from arena.referee.sandbox.staging import StagingArea

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "arena" / "referee" / "sandbox"
PRIVILEGED = {"spawn.py", "kill.py", "slots.py", "cgroups.py"}


def private_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "main.py").write_text("print('hi')\n")
    folder.chmod(0o700)
    (folder / "main.py").chmod(0o600)
    return folder


def make_lease(tmp_path: Path) -> tuple[Lease, SlotPool, list[Lease]]:
    pool = SlotPool(tmp_path / "locks", 64900, 1)
    returned: list[Lease] = []
    staging = tmp_path / "staging"
    staging.mkdir()
    lease = Lease(
        uid=64900,
        slot=pool.acquire(),
        slots=pool,
        staging=StagingArea(staging),
        on_return=returned.append,
    )
    return lease, pool, returned


def test_a_lease_gives_its_slot_back_once_the_bot_is_gone(tmp_path: Path) -> None:
    lease, pool, returned = make_lease(tmp_path)
    with pytest.raises(SlotsExhausted):
        pool.acquire()
    lease.give_back(clean=True)
    assert lease.slot is None and returned == [lease]
    assert pool.acquire().uid == 64900
    pool.close()


def test_a_lease_keeps_its_slot_when_something_of_the_bot_may_be_left(tmp_path: Path) -> None:
    lease, pool, returned = make_lease(tmp_path)
    lease.scratch = tmp_path / "scratch"
    lease.scratch.mkdir()
    lease.give_back(clean=False)
    assert not (tmp_path / "scratch").exists(), "the scratch folder goes in any case"
    assert returned == [lease], "the sandbox forgets the bot in any case"
    with pytest.raises(SlotsExhausted):
        pool.acquire()
    pool.close()


def test_a_lease_stages_a_private_folder_and_gives_the_copy_back(tmp_path: Path) -> None:
    lease, pool, _ = make_lease(tmp_path)
    folder = private_folder(tmp_path)
    copy = lease.stage(folder)
    assert copy != folder and (copy / "main.py").read_text() == "print('hi')\n"
    assert lease.staged == [copy]
    lease.give_back(clean=True)
    assert lease.staged == []
    pool.close()


def test_a_lease_without_staging_binds_the_folder_itself(tmp_path: Path) -> None:
    folder = private_folder(tmp_path)
    assert Lease(uid=os.getuid()).stage(folder) == folder


def test_a_bot_holds_its_lease_and_no_reference_to_its_sandbox(
    make_sandbox: Callable[..., Sandbox],
) -> None:
    sandbox = make_sandbox(level=ProtectionLevel.FULL, slots=1)
    folder = ROOT / "tests" / "bots" / "honest" / "echo"
    bot = sandbox.launch(folder, ["python3", "main.py"])
    assert isinstance(bot, BotProcess)
    assert not any(isinstance(value, Sandbox) for value in vars(bot).values())
    lease = next(value for value in vars(bot).values() if isinstance(value, Lease))
    assert lease.slot is not None and lease.uid == bot.uid == lease.slot.uid
    assert lease.cgroup is not None and bot.cgroup_directories == lease.cgroup.directories
    assert sandbox.running() == [bot]
    bot.kill()
    assert lease.slot is None and sandbox.running() == []
    sandbox.launch(folder, ["python3", "main.py"]).kill()  # the one slot is free again


def module_docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text())) or ""


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_each_sandbox_module_says_whether_it_is_privileged(path: Path) -> None:
    text = module_docstring(path)
    if path.name in ("__init__.py", "__main__.py"):
        return
    if path.name in PRIVILEGED:
        assert "\nPrivileged:" in text, f"{path.name} must say what it does as root"
    else:
        assert "\nPure:" in text or "privileged" in text.lower(), (
            f"{path.name} must say that it is not privileged"
        )
        assert "\nPrivileged:" not in text


def test_only_the_privileged_modules_send_signals_by_pidfd() -> None:
    for path in PACKAGE.glob("*.py"):
        if "pidfd_send_signal" in path.read_text():
            assert path.name in {"kill.py", "cgroups.py"}, path.name


def test_the_privileged_modules_stay_small() -> None:
    for name in PRIVILEGED:
        lines = len((PACKAGE / name).read_text().splitlines())
        assert lines <= 400, f"{name} has {lines} lines"
