"""A bot's standard error in the referee's words: how much it wrote, and what it said last.

The sandbox drains a bot's stderr on its monitor thread; the referee must neither miss what the
monitor has not read yet nor count only what it read itself.
"""

from __future__ import annotations

from collections.abc import Callable

from arena.referee.sandbox import Sandbox
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
