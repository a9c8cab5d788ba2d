"""Fixtures and helpers for tests that play real games between real bot processes."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import engine
from arena.referee import GameConfig, GameResult, Referee, TimeControl
from arena.referee.bots import BotSpec
from arena.referee.sandbox import Sandbox
from arena.referee.sandbox.procfs import real_uid

ROOT = Path(__file__).resolve().parent.parent.parent
BOTS = ROOT / "bots"
TEST_BOTS = ROOT / "tests" / "data" / "bots"
VARIANTS = ("yinsh", "blitz", "yangsh", "yangsh7")


def builtin(name: str) -> BotSpec:
    return BotSpec.load(BOTS / name, trusted=True)


def bot_of(kind: str, name: str) -> BotSpec:
    return BotSpec.load(TEST_BOTS / kind / name)


def play(
    sandbox: Sandbox,
    white: BotSpec,
    black: BotSpec,
    *,
    variant: str = "yinsh",
    time: str = "30+0",
    seed: int = 1,
    **referee,
) -> GameResult:
    referee.setdefault("startup_timeout_s", 20.0)
    cfg = GameConfig(variant, white, black, TimeControl.parse(time), seed=seed)
    return Referee(sandbox, **referee).play(cfg)


def check_record(result: GameResult) -> None:
    """The record replays, and says what the result says."""
    parsed = engine.Record.parse(result.record_text())
    assert parsed.outcome == result.outcome
    assert parsed.actions == result.record.actions
    assert engine.Record.parse(result.record_text(long=False)).actions == parsed.actions


def processes_with_cmdline(fragment: bytes, uids: range | None = None) -> list[int]:
    """Host pids whose command line contains ``fragment`` (and that run as one of ``uids``:
    the test's own slots, when a sandboxed bot started them)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if fragment in (entry / "cmdline").read_bytes() and (
                    uids is None or real_uid(int(entry.name)) in uids
                ):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def read_until(proc: subprocess.Popen[bytes], needle: str, timeout: float) -> str:
    """What ``proc`` wrote to its stdout until ``needle`` appeared (fails after ``timeout``)."""
    assert proc.stdout is not None
    seen = ""
    deadline = time.monotonic() + timeout
    while needle not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"{needle!r} did not appear in time; output so far:\n{seen}"
        ready, _, _ = select.select([proc.stdout], [], [], left)
        if ready:
            chunk = os.read(proc.stdout.fileno(), 65536).decode()
            if not chunk:
                break
            seen += chunk
    return seen


def interrupted(
    args: Sequence[str], env: dict[str, str], *, after: str = "done", timeout: float = 120
) -> tuple[int, str]:
    """Run a command until it writes ``after``, then press Ctrl-C (SIGINT): its exit status and
    everything it wrote."""
    proc = subprocess.Popen(
        args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        first = read_until(proc, after, timeout=timeout)
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, first + rest.decode()
