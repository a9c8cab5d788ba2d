"""The State API around the rules: set-ups, parsing actions, errors, variants."""

import pytest

from engine import (
    PASS,
    Action,
    IllegalAction,
    InvalidAction,
    Kind,
    State,
    variant,
)
from tests.engine.helpers import W, setup


def test_action_tokens_read_in_either_case_and_write_in_notation_order():
    assert Action.parse("E5") == Action(Kind.PLACE, "e5")
    assert Action.parse("a2-H9") == Action(Kind.MOVE, "a2", "h9")
    assert Action.parse("xc6-c2") == Action.parse("xc2-c6") == Action(Kind.REMOVE_ROW, "c2", "c6")
    assert str(Action.parse("XG9-G5")) == "xg5-g9"
    assert str(Action.parse("xk10-g6")) == "xg6-k10"  # letter first, then number
    assert str(Action.parse("xc10-c6")) == "xc6-c10"
    assert Action.parse("xa5") == Action(Kind.REMOVE_RING, "a5")
    assert Action.parse("PASS") is PASS


@pytest.mark.parametrize("token", ["", "e", "5", "e5-", "x", "xa5-", "a2-b3-c4", "pass2", "e5 f6"])
def test_a_token_that_is_no_action_is_invalid(token):
    with pytest.raises(InvalidAction):
        Action.parse(token)


def test_parse_action_tells_syntax_board_and_rules_apart():
    s = State("yinsh")
    with pytest.raises(InvalidAction, match=r"not an action: 'e5-'.*position: next=place"):
        s.parse_action("e5-")
    with pytest.raises(InvalidAction, match="z9 names a point that is not on the YINSH board"):
        s.parse_action("z9")
    with pytest.raises(InvalidAction, match="not on the YINSH board"):
        s.parse_action("a1")
    with pytest.raises(IllegalAction, match="e5-e6 is not legal: white must place a ring now"):
        s.parse_action("e5-e6")
    assert s.parse_action("E5").data is not None  # the canonical action, with its board data


def test_push_accepts_an_action_without_board_data():
    s = setup(W, wr="e5 k8 k9 k10 j11", br="a2 b1 d1 e1 f2")
    other = s.copy()
    s.push(Action.parse("e5-e6"))
    other.play("e5-e6")
    assert s.key() == other.key()
    assert s.is_legal(Action.parse("a2-a3")) and not s.is_legal(Action.parse("e6-e7"))


def test_actions_of_another_variant_are_looked_up_on_this_board():
    yangsh = State("yangsh")
    hex_action = State("yinsh").legal_actions()[0]  # a2, carrying the YINSH board's data
    yangsh.play(hex_action)
    assert yangsh.points(yangsh.rings[W]) == ["a2"]


def test_from_setup_refuses_impossible_positions():
    with pytest.raises(InvalidAction, match="'z1' is not a point"):
        setup(W, wr="z1 k8 k9 k10 j11", br="a2 b1 d1 e1 f2")
    with pytest.raises(ValueError, match="white rings name a point twice"):
        setup(W, wr="k8 k8 k9 k10 j11", br="a2 b1 d1 e1 f2")
    with pytest.raises(ValueError, match="two pieces on e5"):
        setup(W, wr="e5 k8 k9 k10 j11", br="a2 b1 d1 e1 f2", bm="e5")
    with pytest.raises(ValueError, match="white has 5 rings on the board and 1 removed"):
        setup(W, wr="e5 k8 k9 k10 j11", br="a2 b1 d1 e1 f2", removed=(1, 0))
    with pytest.raises(ValueError, match="fewer than 3 removed"):
        setup(W, wr="e5 k8", br="a2 b1 d1 e1 f2")
    with pytest.raises(ValueError, match="fewer than 1 removed"):
        setup(W, wr="e5 k8 k9 k10", br="a2 b1 d1 e1 f2", v="blitz")


def test_rows_lists_the_rows_of_either_colour():
    s = setup(W, wr="c2 k8 k9 k10 j11", br="a2 b1 d1 e1 f2", wm="c3", bm="d3 e3 f3 g3")
    s.play("c2-c4")
    assert [str(r) for r in s.rows()] == ["xc3-g3"]  # the player to act: black
    assert s.rows(W) == []


def test_variants_are_found_by_name():
    assert variant(" Yangsh7 ").rings == 7
    assert variant(variant("blitz")) is variant("blitz")
    with pytest.raises(
        ValueError, match="unknown variant 'go' \\(known: blitz, yangsh, yangsh7, yinsh\\)"
    ):
        State("go")


def test_describe_is_one_line_with_the_result_once_over():
    s = setup(W, wr="e6 k8 k9", br="a2 b1 d1 e1 f2", wm="e2 e3 e4 e5", removed=(2, 0))
    assert s.describe() == "next=move turn=w wr=e6,k8,k9 br=a2,b1,d1,e1,f2 wm=e2,e3,e4,e5 bm="
    for token in ("e6-f7", "xe2-e6", "xk8"):
        s.play(token)
    assert s.describe().endswith(" result=white")
    assert repr(s).startswith("<State yinsh next=over")


def test_illegal_actions_say_why_in_words():
    s = State("yinsh")
    for token in "e3 a5 b5 c6 d6 e4 h7 g2 g3 g8".split():
        s.play(token)
    reasons = {
        "a2-a3": "there is no white ring on a2",
        "e3-e9": "the ring on e4 is in the way",
        "e3-f5": "are not on one line",
        "xa5": "white must move a ring now",
        "e5": "white must move a ring now",
        "pass": "white has a ring that can move",
    }
    for token, words in reasons.items():
        with pytest.raises(IllegalAction, match=words):
            s.play(token)
    s = State.from_setup(
        "yinsh",
        0,
        ["a2", "c3", "e5", "g7", "i9"],
        ["k10", "b1", "d1", "f2", "h3"],
        ["a3", "a4"],
        ["b4"],
    )
    with pytest.raises(IllegalAction, match="holds a marker"):
        s.play("a2-a4")
    s = State.from_setup(
        "yinsh", 0, ["a2", "c3", "e5", "g7", "i9"], ["k10", "b1", "d1", "f2", "h3"], ["a3"], []
    )
    with pytest.raises(IllegalAction, match="first vacant space after them, a4"):
        s.play("a2-a5")


def test_a_yangsh_corner_refusal_names_the_corner_rule():
    s = State("yangsh")
    with pytest.raises(IllegalAction, match="corner"):
        s.play("a1")
    s.play("b2")
    with pytest.raises(IllegalAction, match="b2 is taken"):
        s.play("b2")
