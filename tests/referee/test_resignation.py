"""A real bot that resigns (tests/data/bots/honest/resigns: it places its rings, then resigns),
in real sandboxed games through the real transport, and on the analysis board."""

import engine
from arena.referee import Referee, TimeControl
from arena.referee.analysis import analyse

from .games import bot_of, builtin, check_record, play

RESIGNATION = engine.Termination.RESIGNATION


def test_a_bot_that_resigns_loses_by_resignation_and_is_told_so(full_sandbox):
    sandbox = full_sandbox()
    for colour, other, ply in (("white", "black", 11), ("black", "white", 12)):
        bots = (bot_of("honest", "resigns"), builtin("random"))
        white, black = bots if colour == "white" else bots[::-1]
        result = play(sandbox, white, black, time="30+0")
        assert result.outcome == engine.Outcome(engine.Result(other), RESIGNATION), result.reason
        assert result.fault is None
        assert result.reason == result.public_reason == f"{colour} resigned at ply {ply}"
        check_record(result)
        assert len(result.record.actions) == ply - 1
        resigned = result.transcript["moves"][-1]
        assert resigned["color"] == colour and resigned["action"] == "resign"
        assert resigned["info"] == {"eval": -100}
        assert "nothing left to hope for" in resigned["stderr"]
        player = result.transcript["players"][colour]
        # It was sent end, read it, and exited by itself.
        assert player["sent_end"] and player["exit"] == "exit code 0"
        assert "killed" not in player and "killed_after_grace" not in player
        assert f"told {other} ({colour} resigned at ply {ply})" in player["stderr_tail"]
        assert result.transcript["players"][other]["exit"] == "exit code 0"


def test_a_bot_that_resigns_on_the_analysis_board_answers_resign(full_sandbox):
    history = ["e5", "f6", "d4", "g7", "c3", "h8", "e7", "f4", "d6", "g5", "e5-e6"]
    answer = analyse(
        Referee(full_sandbox()), bot_of("honest", "resigns"), "yinsh", history, TimeControl(5000, 0)
    )
    assert answer.ok and answer.resigned
    assert answer.action == "resign" and answer.reason == "resigns in this position"
    assert answer.info == {"eval": -100} and answer.ms is not None
    assert answer.termination == ""
    # While placing its rings it plays, as any bot does.
    placing = analyse(
        Referee(full_sandbox()), bot_of("honest", "resigns"), "yinsh", ["e5"], TimeControl(5000, 0)
    )
    assert placing.ok and not placing.resigned and placing.reason == ""
