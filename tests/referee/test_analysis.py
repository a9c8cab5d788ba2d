"""One bot asked for one action (arena.referee.analysis), with real bots in the real sandbox:
an answer with its info, and each way a bot fails reported as the referee reports it in a game."""

import pytest

import engine
from arena.referee import Referee, TimeControl
from arena.referee.analysis import analyse, position

from .games import bot_of, builtin

#: The middle of a game: every ring placed and one marker down.
HISTORY = ["e5", "f6", "d4", "g7", "c3", "h8", "e7", "f4", "d6", "g5", "e5-e6"]


def test_search_answers_with_a_legal_action_and_its_info(full_sandbox):
    answer = analyse(
        Referee(full_sandbox()), builtin("search"), "yinsh", HISTORY, TimeControl(5000, 0)
    )
    state = position("yinsh", HISTORY)
    assert answer.ok and answer.action in {str(a) for a in state.legal_actions()}
    assert isinstance(answer.info, dict) and "depth" in answer.info
    assert answer.ms is not None and answer.termination == "" and answer.reason == ""


def test_black_to_move_is_asked_as_black(full_sandbox):
    answer = analyse(
        Referee(full_sandbox()), builtin("search"), "blitz", ["e5"], TimeControl(5000, 0)
    )
    assert answer.ok and answer.action in {
        str(a) for a in position("blitz", ["e5"]).legal_actions()
    }


@pytest.mark.parametrize(
    ("name", "termination", "fragment"),
    [
        ("slow", "time", "slow ran out of time (no answer after"),
        ("illegal_move", "illegal-move", "illegal_move played 'a2-a5', which is not legal"),
        ("garbage_json", "protocol-error", "garbage_json broke the protocol at ply 11"),
    ],
)
def test_a_failing_bot_is_reported_as_in_a_game(full_sandbox, name, termination, fragment):
    answer = analyse(
        Referee(full_sandbox()),
        bot_of("protocol", name),
        "yinsh",
        HISTORY[:10],
        TimeControl(1000, 0),
    )
    assert not answer.ok
    assert answer.termination == termination
    assert fragment in answer.reason, answer.reason
    assert "standard error" not in answer.reason


@pytest.mark.parametrize(
    ("history", "message"),
    [
        (["e5", "e5"], "action 2 ('e5')"),
        (["zz9"], "action 1 ('zz9')"),
    ],
)
def test_a_history_that_cannot_be_played_is_refused_before_any_bot_starts(history, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        position("yinsh", history)


def test_a_finished_game_has_nothing_to_ask():
    state = engine.State("blitz")
    history: list[str] = []
    while not state.is_over():
        legal = state.legal_actions()
        action = legal[(len(history) * 7) % len(legal)]
        state.play(str(action))
        history.append(str(action))
    with pytest.raises(ValueError, match="the game is over"):
        position("blitz", history)
