"""Misbehaving bots (tests/data/bots/protocol/) in real sandboxed games: each loses cleanly.

Each plays White against the random bot. The sandbox fixtures check, when a test ends, that no
process, cgroup or staged folder of any bot is left.
"""

import json

import pytest

import engine
from arena.referee.outcomes import Failure as F
from tests.conftest import games_uids

from .games import bot_of, builtin, check_record, play, processes_with_cmdline

CASES = [
    # name, time control, termination, fragments of the reason
    ("garbage_json", "30+0", F.PROTOCOL, ["white broke the protocol at ply 1", "not JSON"]),
    ("bad_utf8", "30+0", F.PROTOCOL, ["not valid UTF-8"]),
    ("oversized_line", "30+0", F.PROTOCOL, ["more than 65536 bytes without a newline"]),
    ("endless_output", "30+0", F.PROTOCOL, ["more than 65536 bytes without a newline"]),
    ("illegal_move", "30+0", F.ILLEGAL_MOVE, ["white played 'a2-a5', which is not legal"]),
    ("wrong_type", "30+0", F.PROTOCOL, ["expected an action message, got a ready message"]),
    ("slow", "1+0", F.TIME, ["white ran out of time (no answer after"]),
    ("infinite_loop", "1+0", F.TIME, ["white ran out of time (no answer after"]),
    (
        "exits_midgame",
        "30+0",
        F.CRASH,
        ["white exited at ply 7 (exit code 3)", "giving up after three actions"],
    ),
    (
        "killed_by_signal",
        "30+0",
        F.CRASH,
        ["white exited at ply 5 (killed by signal 6 (SIGABRT))"],
    ),
]


@pytest.mark.parametrize(("name", "time", "termination", "fragments"), CASES)
def test_a_misbehaving_bot_loses_with_the_right_reason(
    full_sandbox, name, time, termination, fragments
):
    result = play(full_sandbox(), bot_of("protocol", name), builtin("random"), time=time)
    assert result.outcome == engine.Outcome(engine.Result.BLACK, termination), result.reason
    assert result.fault == "white"
    for fragment in fragments:
        assert fragment in result.reason, result.reason
    check_record(result)
    assert result.transcript["players"]["black"]["exit"] == "exit code 0"


def test_no_ready_in_time_is_no_start(full_sandbox):
    result = play(
        full_sandbox(), bot_of("protocol", "no_ready"), builtin("random"), startup_timeout_s=3.0
    )
    assert result.outcome == engine.Outcome(engine.Result.BLACK, F.NO_START)
    assert result.reason == "white sent no ready within 3 s"
    check_record(result)


def test_a_bot_that_ignores_end_is_killed_and_keeps_its_result(full_sandbox):
    result = play(full_sandbox(), bot_of("protocol", "ignores_end"), builtin("random"))
    assert result.outcome.termination.by_rules, result.reason
    white = result.transcript["players"]["white"]
    assert white["killed_after_grace"] is True
    assert white["sent_end"] is True
    assert "ignores_end: staying" in white["stderr_tail"]
    check_record(result)


def test_a_detached_grandchild_does_not_outlive_the_game(full_sandbox):
    result = play(full_sandbox(), bot_of("protocol", "orphan"), builtin("random"))
    assert result.outcome.termination is F.CRASH
    assert "white exited at ply 7 (exit code 0)" in result.reason
    assert "grandchild detached" in result.transcript["players"]["white"]["stderr_tail"]
    assert processes_with_cmdline(b"sleep\x0086399", games_uids()) == []


def test_the_stderr_tail_of_a_crash_is_in_the_transcript(full_sandbox):
    result = play(full_sandbox(), bot_of("protocol", "exits_midgame"), builtin("random"))
    tail = result.transcript["players"]["white"]["stderr_tail"]
    assert tail.strip() == "exits_midgame: giving up after three actions"


def test_nul_characters_from_a_bot_never_reach_the_transcript_or_the_reason(full_sandbox):
    """PostgreSQL refuses NUL in text and JSON: what a bot writes is stored with U+FFFD."""
    result = play(full_sandbox(), bot_of("protocol", "nul_chars"), builtin("random"))
    assert result.outcome == engine.Outcome(engine.Result.BLACK, F.CRASH), result.reason
    text = json.dumps(result.transcript, ensure_ascii=False)
    assert "\x00" not in text and "\\u0000" not in text
    assert "\x00" not in result.reason and "last\ufffdwords" in result.reason
    infos = [m["info"] for m in result.transcript["moves"] if "info" in m]
    assert infos == [{"a\ufffd": "b\ufffd0"}, {"a\ufffd": "b\ufffd1"}]
    assert "log\ufffdline" in result.transcript["players"]["white"]["stderr_tail"]
