"""Honest bots built the way common runtimes work play normally in the full sandbox.

Each plays real games against the random bot (both colours) through the referee and the FULL
sandbox, and reports on its standard error (kept in the transcript) what it did besides playing:

* a Java bot reads a file of its folder the four usual ways (the JDK's file I/O probes
  ``socket()`` as it starts), and its JVM sizes its heap from the bot's memory bound;
* a Python bot thinks in worker processes started by a fork server, with a ``Manager``, both
  talking over unix sockets in its private ``/tmp`` (the default start method from Python 3.14);
* a Python bot keeps a pool of 64 threads, all alive at once;
* a Rust bot in today's style (edition 2024, ``let ... else``, a Cargo.lock of version 4) is
  built as the arena builds an upload, with the toolchain the workers offer.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arena.referee import GameResult
from arena.referee.bots import BotSpec
from arena.referee.build import Builder, BuildFailed
from arena.referee.sandbox import Sandbox
from arena.referee.sandbox.settings import BOT_PATH
from tests.conftest import skip_unless_required

from .games import TEST_BOTS, bot_of, builtin, check_record, play

HONEST = TEST_BOTS / "honest"


@pytest.fixture
def java_bot(tmp_path: Path) -> BotSpec:
    javac = shutil.which("javac")
    if javac is None:
        skip_unless_required("no Java compiler (javac) to build the Java honest bot")
    assert javac is not None
    folder = tmp_path / "java_files"
    shutil.copytree(HONEST / "java_files", folder)
    subprocess.run([javac, "-d", str(folder), str(folder / "Main.java")], check=True)
    for p in (folder, *folder.iterdir()):
        p.chmod(0o755)
    return BotSpec.load(folder)


def play_both_colours(box: Sandbox, bot: BotSpec) -> list[str]:
    """Two games against the random bot, played to their end by the rules; the bot's standard
    error of each."""
    tails = []
    for white, black in ((bot, builtin("random")), (builtin("random"), bot)):
        result: GameResult = play(box, white, black, startup_timeout_s=60.0)
        assert result.outcome.termination.by_rules, result.reason
        assert result.fault is None
        check_record(result)
        colour = "white" if white is bot else "black"
        tails.append(result.transcript["players"][colour]["stderr_tail"])
    return tails


def last_json(tail: str) -> dict[str, Any]:
    lines = [line for line in tail.splitlines() if line.startswith("{")]
    assert lines, tail
    report: dict[str, Any] = json.loads(lines[-1])
    return report


def test_a_java_bot_reading_its_files_plays_and_sees_its_memory_bound(
    full_sandbox: Callable[..., Sandbox], java_bot: BotSpec
) -> None:
    box = full_sandbox()
    for tail in play_both_colours(box, java_bot):
        first_line = "opening book: e5 f6"
        assert f"java_files: read {' | '.join([first_line] * 4)}" in tail, tail
        # The JVM was told the bot's memory bound (256 MiB here), not the host's memory.
        heap = int(tail.split("; heap ")[1].split(" MiB")[0])
        assert 0 < heap <= box.settings.memory_mb, tail


def test_a_python_bot_with_forkserver_workers_and_a_manager_plays(
    full_sandbox: Callable[..., Sandbox],
) -> None:
    for tail in play_both_colours(full_sandbox(), bot_of("honest", "py_forkserver")):
        report = last_json(tail)
        assert report["start_method"] == "forkserver", tail
        assert report["moves"] > 10 and report["worker_pids"] >= 1, tail


def test_a_bot_with_a_pool_of_64_threads_plays(full_sandbox: Callable[..., Sandbox]) -> None:
    for tail in play_both_colours(full_sandbox(), bot_of("honest", "thread_pool")):
        report = last_json(tail)
        assert report["threads at once"] == 64, tail
        assert report["alive"] > 64, tail


def test_a_rust_bot_with_let_else_and_a_version_4_lock_file_builds_and_plays(
    full_sandbox: Callable[..., Sandbox], tmp_path: Path
) -> None:
    """Debian 12's own rustc 1.63 and cargo 1.65 refuse this bot (``lock file version 4``,
    ``let...else statements are unstable``); the workers' Rust (``rustc-web``) builds it."""
    missing = [c for c in ("rustc", "cargo") if shutil.which(c, path=BOT_PATH) is None]
    if missing:
        skip_unless_required(f"no Rust on {BOT_PATH} ({', '.join(missing)}): ./dev installs it")
    source = bot_of("honest", "rust_let_else")
    assert "version = 4" in (source.folder / "Cargo.lock").read_text()
    try:
        built = Builder(full_sandbox(), tmp_path / "builds").build(source)
    except BuildFailed as e:
        pytest.fail(f"{e.reason}; its log:\n{e.log}")
    assert built.spec.digest == source.digest and not built.spec.needs_build
    for tail in play_both_colours(full_sandbox(), built.spec):
        assert "rust_let_else: built by a toolchain with let-else; playing" in tail, tail
