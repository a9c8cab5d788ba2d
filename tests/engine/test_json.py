"""Positions as JSON (State.to_json / State.from_json): round trips and clear refusals."""

import contextlib
import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Forfeit, Outcome, Result, State, replay
from tests.engine.helpers import REAL_GAMES, W, crowd, legal, setup
from tests.engine.positions import BLOCKED_BOTH, CASE_1


def test_round_trip_of_a_position_in_every_phase():
    states = [State("yinsh"), State("yangsh7")]
    s = replay(CASE_1)
    states.append(s.copy())  # move
    s.play("i8-f5")
    states.append(s.copy())  # remove-row, after the move
    s.play("xc6-g6")
    states.append(s.copy())  # remove-ring
    blocked = setup(W, **BLOCKED_BOTH)
    blocked.play("pass")
    states.append(blocked.copy())  # one pass
    blocked.play("pass")
    states.append(blocked)  # over, no moves
    states.append(replay((REAL_GAMES / "bga_862307561.short.txt").read_text()))  # over, rows
    for s in states:
        data = s.to_json()
        for form in (data, json.dumps(data)):
            back = State.from_json(form)
            assert back.key() == s.key()
            assert legal(back) == legal(s)
            assert back.history == []


def test_the_json_form_holds_plain_named_fields():
    s = replay(CASE_1)
    s.play("i8-f5")
    data = s.to_json()
    assert data == {
        "variant": "yinsh",
        "turn": "white",
        "next": "remove-row",
        "moved": True,
        "rings": {"white": ["a5", "f5", "f7", "g2", "i11"], "black": s.points(s.rings[1])},
        "markers": {"white": s.points(s.markers[0]), "black": s.points(s.markers[1])},
        "removed": {"white": 0, "black": 0},
        "pool": 51 - 13,  # thirteen ring moves so far
        "passes": 0,
        "result": None,
        "termination": None,
    }


def test_points_may_be_upper_case():
    s = replay(CASE_1)
    data = s.to_json()
    for group in ("rings", "markers"):
        for colour in ("white", "black"):
            data[group][colour] = [p.upper() for p in data[group][colour]]
    assert State.from_json(data).key() == s.key()


def valid() -> dict:
    s = replay(CASE_1)
    s.play("i8-f5")
    return s.to_json()


DELETE = object()


def changed(**fields) -> dict:
    """The valid position with some fields replaced (``a__b`` for a nested field) or deleted."""
    data = copy.deepcopy(valid())
    for path, value in fields.items():
        target = data
        keys = path.split("__")
        for k in keys[:-1]:
            target = target[k]
        if value is DELETE:
            del target[keys[-1]]
        else:
            target[keys[-1]] = value
    return data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "JSON object"),
        (None, "JSON object"),
        (changed(variant="go"), "unknown variant"),
        (changed(variant=5), "wrong type"),
        (changed(variant=DELETE), "lacks 'variant'"),
        (changed(rings=["a2"]), "wrong type"),
        (changed(rings__white="a2"), "list of points"),
        (changed(rings__black=DELETE), "lacks 'black'"),
        (changed(turn="green"), "green"),
        (changed(turn=["white"]), "wrong type"),
        (changed(next="think"), "think"),
        (changed(markers__white=["z9"]), "'z9' is not on the board"),
        (changed(markers__white=["a2", "a2"]), "twice"),
        (changed(removed__white=-1), "removed.white"),
        (changed(removed__white=True), "removed.white"),
        (changed(removed=3), "wrong type"),
        (changed(pool=1.5), "pool"),
        (changed(pool=0), "pool must be"),
        (changed(passes="0"), "passes"),
        (changed(moved="yes"), "moved"),
        (changed(result="white"), "only for next=over"),
        (changed(next="over"), "needs a result"),
        (changed(next="move"), "complete row"),
        (changed(next="place"), "rings still to place"),
    ],
)
def test_bad_json_gets_a_clear_value_error(data, message):
    with pytest.raises(ValueError, match=message):
        State.from_json(data)


def test_two_pieces_on_one_point_are_refused():
    data = valid()
    data["markers"]["black"].append(data["rings"]["white"][0])
    data["pool"] -= 1
    with pytest.raises(ValueError, match="two pieces"):
        State.from_json(data)


def test_a_remove_row_position_needs_a_row():
    s = replay(CASE_1)
    data = s.to_json()
    data["next"] = "remove-row"
    with pytest.raises(ValueError, match="no row"):
        State.from_json(data)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (dict(removed={"white": 3, "black": 0}), "to win"),  # white has its three rings out
        (dict(passes=2), "pass"),  # two passes in a row end the game
    ],
)
def test_positions_the_rules_cannot_reach_are_refused(change, message):
    s = setup(W, wr="e5 k8 k9 k10 j11", br="a2 b1 d1 e1 f2")
    data = s.to_json()
    data.update(change)
    if "removed" in change:
        data["rings"]["white"] = ["e5", "k8"]
    with pytest.raises(ValueError, match=message):
        State.from_json(data)


def test_a_ring_move_with_an_empty_pool_is_refused():
    wm, bm = crowd("yinsh", "e5 k8 k9 k10 j11 a2 b1 d1 e1 f2", 51)
    s = setup(W, wr="e5 k8 k9 k10 j11", br="a2 b1 d1 e1 f2", wm=wm, bm=bm)
    assert s.is_over()  # the game ended when White had to move with an empty pool
    data = dict(s.to_json(), next="move", result=None, termination=None)
    with pytest.raises(ValueError, match="pool"):
        State.from_json(data)


def test_placement_positions_hold_no_markers_and_follow_the_turn_order():
    s = State("yinsh")
    s.play("e5")
    data = s.to_json()
    assert State.from_json(data).key() == s.key()
    wrong_turn = dict(data, turn="white")
    with pytest.raises(ValueError, match="turn"):
        State.from_json(wrong_turn)
    with_marker = dict(data, markers={"white": ["a2"], "black": []}, pool=50)
    with pytest.raises(ValueError, match="marker"):
        State.from_json(with_marker)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 60) | st.text(max_size=6),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, database=None)
@given(
    field=st.sampled_from(
        [
            "variant",
            "turn",
            "next",
            "moved",
            "rings",
            "markers",
            "removed",
            "pool",
            "passes",
            "result",
            "termination",
        ]
    ),
    sub=st.sampled_from([None, "white", "black"]),
    value=JSON,
)
def test_any_damaged_position_is_read_or_refused_with_a_value_error(field, sub, value):
    data = valid()
    if sub and isinstance(data[field], dict):
        data[field][sub] = value
    else:
        data[field] = value
    try:
        s = State.from_json(json.dumps(data))
    except ValueError:
        return
    assert State.from_json(s.to_json()).key() == s.key()


@settings(max_examples=200, deadline=None, database=None)
@given(value=JSON)
def test_any_json_value_is_read_or_refused_with_a_value_error(value):
    with contextlib.suppress(ValueError):
        State.from_json(json.dumps(value))


def test_a_finished_position_may_name_a_forfeit_the_rules_do_not_define():
    data = dict(replay(CASE_1).to_json(), next="over", result="black", termination="time")
    s = State.from_json(data)
    assert s.outcome == Outcome(Result.BLACK, Forfeit("time"))
    assert s.to_json()["termination"] == "time"
    with pytest.raises(ValueError, match="needs a result and a termination"):
        State.from_json(dict(data, termination="Out of time"))
