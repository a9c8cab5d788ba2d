"""A bot's standard error in the referee's words: how much it wrote, and what it said last.

The sandbox drains a bot's stderr on its monitor thread; the referee must neither miss what the
monitor has not read yet nor count only what it read itself.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

import engine
from arena.referee import match
from arena.referee.match import PLY_STDERR_LIMIT
from arena.referee.outcomes import Failure
from arena.referee.protocol import Request
from arena.referee.reasons import stderr_summary
from arena.referee.sandbox import Sandbox
from arena.referee.sandbox.monitor import Monitor
from arena.referee.transport import PipeTransport

from .fakes import Exit, Think, first_legal
from .games import TEST_BOTS, bot_of, builtin, play
from .test_match import Game

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


# ----------------------------------------------------------------- what it wrote on each move


def diarist(say):
    """A brain that writes ``say(k)`` to stderr while thinking on its k-th request (k from 1)."""
    asked = {"n": 0}

    def brain(message):
        if isinstance(message, Request):
            asked["n"] += 1
            return Think(5, {"type": "action", "action": message.actions[0]}, say(asked["n"]))
        return first_legal(message)

    return brain


def test_each_move_has_the_stderr_its_bot_wrote_while_thinking_on_it() -> None:
    result = Game(white=diarist(lambda k: f"move {k}\nthought hard\n".encode())).play()
    moves = [m for m in result.transcript["moves"] if m.get("ms") is not None]
    white = [m for m in moves if m["color"] == "white"]
    assert [m["stderr"] for m in white] == [
        f"move {k}\nthought hard\n" for k in range(1, len(white) + 1)
    ]
    assert all("stderr" not in m for m in moves if m["color"] == "black")  # it wrote nothing
    player = result.transcript["players"]["white"]
    assert player["stderr_tail"].endswith(f"move {len(white)}\nthought hard\n")  # the tail stays
    assert player["stderr_bytes"] == sum(len(m["stderr"]) for m in white)


def test_a_real_bots_move_has_the_lines_it_wrote_before_answering(
    full_sandbox: Callable[..., Sandbox],
) -> None:
    result = play(full_sandbox(), bot_of("honest", "diary"), builtin("random"), seed=3)
    white = [m for m in result.transcript["moves"] if m["color"] == "white" and "ms" in m]
    assert white
    for m in white:
        assert m["stderr"].startswith(f"DIARY-MARKER-5e2b plays {m['action']} from ")
        assert m["stderr"].count("\n") == 1  # not the start-up line, not the next move's


def test_a_long_move_log_keeps_its_end_and_says_how_much_it_was() -> None:
    long = b"".join(b"line %d\n" % i for i in range(2000))
    result = Game(white=diarist(lambda k: long if k == 2 else b"")).play()
    white = [m for m in result.transcript["moves"] if m["color"] == "white" and "ms" in m]
    assert "stderr" not in white[0]
    kept = white[1]["stderr"]
    assert len(kept.encode()) <= PLY_STDERR_LIMIT
    assert kept.endswith("line 1999\n") and kept.startswith("line ")  # whole lines
    assert white[1]["stderr_bytes"] == len(long)


def test_a_games_move_logs_stop_at_their_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(match, "GAME_STDERR_LIMIT", 30)
    result = Game(white=diarist(lambda k: b"twelve bytes")).play()
    white = [m for m in result.transcript["moves"] if m["color"] == "white" and "ms" in m]
    assert [m.get("stderr") for m in white[:4]] == ["twelve bytes", "twelve bytes", " bytes", None]
    assert [m.get("stderr_bytes") for m in white[:4]] == [None, None, 12, 12]
    assert result.transcript["players"]["white"]["stderr_bytes"] == 12 * len(white)


def test_a_move_log_is_cut_between_characters_not_inside_one() -> None:
    text = "é" * PLY_STDERR_LIMIT  # two bytes each: a byte cut would split one
    result = Game(white=diarist(lambda k: text.encode() if k == 1 else b"")).play()
    first = next(m for m in result.transcript["moves"] if m["color"] == "white" and "ms" in m)
    assert set(first["stderr"]) == {"é"}


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


# ----------------------------------------------------------------- the words of a crash

PYTHON = """\
Traceback (most recent call last):
  File "/bot/main.py", line 12, in <module>
    main()
  File "/bot/main.py", line 9, in main
    raise ValueError("no legal action in " + repr(actions))
ValueError: no legal action in []
"""

PYTHON_311 = """\
Traceback (most recent call last):
  File "/bot/main.py", line 4, in <module>
    print(1 / 0)
          ~~^~~
ZeroDivisionError: division by zero
"""

PYTHON_INTERRUPT = """\
Traceback (most recent call last):
  File "/bot/main.py", line 3, in <module>
    time.sleep(5)
KeyboardInterrupt
"""

NODE = """\
/bot/main.js:5
    const move = state.moves[0].name;
                                ^

TypeError: Cannot read properties of undefined (reading 'name')
    at Interface.<anonymous> (/bot/main.js:5:33)
    at Interface.emit (node:events:517:28)
    at [_onLine] [as _onLine] (node:internal/readline/interface:416:12)
    at [_normalWrite] [as _normalWrite] (node:internal/readline/interface:610:22)

Node.js v18.19.0
"""

RUST = """\
thread 'main' panicked at src/main.rs:27:14:
index out of bounds: the len is 0 but the index is 0
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
"""

RUST_OLD = """\
thread 'main' panicked at 'called `Option::unwrap()` on a `None` value', src/main.rs:8:31
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
"""

JAVA = """\
Exception in thread "main" java.lang.IllegalStateException: no legal action
\tat Bot.choose(Bot.java:42)
\tat Bot.main(Bot.java:12)
"""

JAVA_CAUSED = """\
Exception in thread "main" java.lang.RuntimeException: move failed
\tat Bot.main(Bot.java:12)
Caused by: java.lang.NullPointerException: Cannot invoke "String.length()" because "s" is null
\tat Bot.parse(Bot.java:30)
\t... 1 more
"""

# The sandbox gives every JVM the bot's memory bound through JAVA_TOOL_OPTIONS; it says so.
JAVA_PICKED_UP = "Picked up JAVA_TOOL_OPTIONS: -XX:MaxRAM=512m\n"

GO = """\
panic: runtime error: index out of range [5] with length 3

goroutine 1 [running]:
main.main()
\t/bot/main.go:8 +0x1d
exit status 2
"""

CPP = """\
terminate called after throwing an instance of 'std::runtime_error'
  what():  no legal action
"""

PLAIN = """\
thinking about e5
thinking about f6
giving up after three actions

"""


@pytest.mark.parametrize(
    ("stderr", "summary"),
    [
        pytest.param(
            PYTHON,
            'File "/bot/main.py", line 9, in main | '
            'raise ValueError("no legal action in " + repr(actions)) | '
            "ValueError: no legal action in []",
            id="python-traceback",
        ),
        pytest.param(
            PYTHON_311,
            'File "/bot/main.py", line 4, in <module> | print(1 / 0) | '
            "ZeroDivisionError: division by zero",
            id="python-3.11-markers",
        ),
        pytest.param(
            PYTHON_INTERRUPT,
            'File "/bot/main.py", line 3, in <module> | time.sleep(5) | KeyboardInterrupt',
            id="python-exception-not-named-error",
        ),
        pytest.param(
            NODE,
            "TypeError: Cannot read properties of undefined (reading 'name') | "
            "at Interface.<anonymous> (/bot/main.js:5:33)",
            id="node-typeerror-and-banner",
        ),
        pytest.param(
            RUST,
            "thread 'main' panicked at src/main.rs:27:14: | "
            "index out of bounds: the len is 0 but the index is 0",
            id="rust-panic",
        ),
        pytest.param(
            RUST_OLD,
            "thread 'main' panicked at 'called `Option::unwrap()` on a `None` value', "
            "src/main.rs:8:31",
            id="rust-panic-before-1.73",
        ),
        pytest.param(
            JAVA,
            'Exception in thread "main" java.lang.IllegalStateException: no legal action | '
            "at Bot.choose(Bot.java:42)",
            id="java-exception",
        ),
        pytest.param(
            JAVA_CAUSED,
            'Caused by: java.lang.NullPointerException: Cannot invoke "String.length()" because '
            '"s" is null | at Bot.parse(Bot.java:30)',
            id="java-caused-by",
        ),
        pytest.param(
            JAVA_PICKED_UP + JAVA,
            'Exception in thread "main" java.lang.IllegalStateException: no legal action | '
            "at Bot.choose(Bot.java:42)",
            id="java-exception-after-the-options-notice",
        ),
        pytest.param(JAVA_PICKED_UP, "", id="java-silent-but-the-options-notice"),
        pytest.param(
            GO, "panic: runtime error: index out of range [5] with length 3", id="go-panic"
        ),
        pytest.param(
            CPP,
            "terminate called after throwing an instance of 'std::runtime_error' | "
            "what():  no legal action",
            id="cpp-exception",
        ),
        pytest.param(PLAIN, "giving up after three actions", id="plain-text"),
        pytest.param("", "", id="nothing"),
        pytest.param("\n \n", "", id="blank"),
    ],
)
def test_a_crash_is_summed_up_by_its_error_lines_not_trailing_banners(stderr, summary):
    assert stderr_summary(stderr) == summary


def test_a_summary_is_bounded():
    long = "ValueError: " + "x" * 1000
    summary = stderr_summary(f"Traceback (most recent call last):\n  File 'a'\n    b\n{long}\n")
    assert len(summary) <= 300 and summary.endswith("...")
    lines = "\n".join(f"Error {i}:" for i in range(50))
    assert stderr_summary(lines).count(" | ") <= 2


def test_a_nodejs_crash_reason_quotes_the_error_not_the_version_banner():
    game = Game(black=lambda m: Exit(1, NODE.encode()))
    result = game.play()
    assert result.outcome == engine.Outcome(engine.Result.WHITE, Failure.CRASH)
    assert result.reason == (
        "black exited during start-up (exit code 1); stderr: TypeError: Cannot read properties "
        "of undefined (reading 'name') | at Interface.<anonymous> (/bot/main.js:5:33)"
    )
