"""A bot's standard error in the referee's words: how much it wrote, and what it said last.

The sandbox drains a bot's stderr on its monitor thread; the referee must neither miss what the
monitor has not read yet nor count only what it read itself.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from arena.referee.outcomes import Failure
from arena.referee.sandbox import Sandbox
from arena.referee.sandbox.monitor import Monitor
from arena.referee.transport import PipeTransport

from .games import TEST_BOTS, bot_of, builtin, play

# ----------------------------------------------------------------- what the transcript counts


def test_the_transcript_counts_the_bytes_the_bot_wrote_to_stderr(
    full_sandbox: Callable[..., Sandbox],
) -> None:
    result = play(full_sandbox(), bot_of("protocol", "exits_midgame"), builtin("random"))
    white = result.transcript["players"]["white"]
    assert white["stderr_tail"] == "exits_midgame: giving up after three actions\n"
    assert white["stderr_bytes"] == len(white["stderr_tail"].encode()) == 45


def test_stderr_bytes_counts_everything_though_only_the_tail_is_kept(
    full_sandbox: Callable[..., Sandbox],
) -> None:
    sandbox = full_sandbox(stderr_bytes=4096)
    code = "import sys\nfor i in range(100): sys.stderr.write('x' * 999 + '\\n')\n"
    bot = sandbox.launch(TEST_BOTS / "honest" / "echo", ["python3", "-c", code])
    transport = PipeTransport(bot, stderr_limit=4096)
    try:
        assert transport.wait_exit(transport.clock() + 20) == 0
        assert bot.stderr_pipe.eof.wait(10), "the monitor did not read the stderr to its end"
        assert transport.stderr_bytes == 100_000
        assert len(transport.stderr_tail) == 4096
    finally:
        transport.kill()


# ----------------------------------------------------------------- the reason has the last words


@pytest.fixture
def idle_monitor(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sandbox's monitor thread never gets to a bot (as on a machine whose cores are all
    busy): it drains no stderr until the bot is killed."""
    monkeypatch.setattr(Monitor, "add", lambda self, bot: None)


def test_a_crash_reason_has_the_bots_last_words_even_before_the_monitor_read_them(
    full_sandbox: Callable[..., Sandbox], idle_monitor: None
) -> None:
    result = play(full_sandbox(), bot_of("protocol", "exits_midgame"), builtin("random"))
    assert result.outcome.termination is Failure.CRASH
    assert result.reason == (
        "white exited at ply 7 (exit code 3); stderr: exits_midgame: giving up after three actions"
    )
    assert result.transcript["players"]["white"]["stderr_bytes"] == 45


def test_draining_to_a_deadline_waits_for_the_end_of_file_not_a_fixed_time() -> None:
    from arena.referee.transport import LocalProcess

    # The bot exits at once; a child it left writes its last words a moment later.
    code = (
        "import subprocess, sys\n"
        "subprocess.Popen(['sh', '-c', 'sleep 0.3; echo late words >&2'])\n"
        "sys.exit(1)\n"
    )
    transport = PipeTransport(LocalProcess(["python3", "-c", code]))
    try:
        assert transport.wait_exit(transport.clock() + 10) == 1
        started = transport.clock()
        transport.drain_stderr(started + 10)
        assert transport.stderr_tail == "late words\n"
        assert transport.clock() - started < 5, "it returned at the end of file"
        transport.drain_stderr(transport.clock() + 10)  # at end of file already: no wait
    finally:
        transport.kill()
