"""Rulebook sections D (placing the rings), E (moving a ring) and F (flipping markers).

Each test sets up a position like the rulebook's diagrams with ``State.from_setup`` (rings and
markers of each colour, the player to act) and plays tokens on it.
"""

import pytest

from engine import IllegalAction, Phase, State
from tests.engine.helpers import B, W, legal, moves_from, setup

# ------------------------------------------------------------------------ D: starting position


def test_game_starts_on_an_empty_board_with_white_placing_a_ring():
    s = State("yinsh")
    assert (s.next, s.turn) == (Phase.PLACE, W)
    assert s.rings == [0, 0] and s.markers == [0, 0]
    assert s.pool == 51


def test_a_ring_may_be_placed_on_any_intersection_including_the_edges():
    s = State("yinsh")
    assert len(legal(s)) == 85
    for edge in ("a2", "a5", "e1", "e10", "k7", "k10", "g11"):
        assert edge in legal(s)


def test_players_place_one_ring_at_a_time_in_turn():
    s = State("yinsh")
    s.play("e5")
    assert s.turn == B
    s.play("f6")
    assert s.turn == W
    assert s.points(s.rings[W]) == ["e5"] and s.points(s.rings[B]) == ["f6"]


def test_a_ring_cannot_be_placed_on_an_occupied_intersection():
    s = State("yinsh")
    s.play("e5")
    assert "e5" not in legal(s)
    with pytest.raises(IllegalAction):
        s.play("e5")


def test_no_ring_moves_during_placement_and_no_marker_leaves_the_pool():
    s = State("yinsh")
    for token in ["e3", "a5", "b5", "c6", "d6", "e4", "h7", "g2", "g3"]:
        s.play(token)
        assert s.next is Phase.PLACE
        assert all("-" not in t for t in legal(s))
    assert s.pool == 51


def test_after_the_tenth_ring_white_makes_the_first_move():
    s = State("yinsh")
    for token in ["e3", "a5", "b5", "c6", "d6", "e4", "h7", "g2", "g3", "g8"]:
        s.play(token)
    assert (s.next, s.turn) == (Phase.MOVE, W)
    assert all("-" in t for t in legal(s))
    assert len(legal(s)) == 86  # as in diagram 2 of the notation rules


# ------------------------------------------------------------------------ E: moving a ring


def column_moves(s, ring):
    """The destinations of a ring's moves along its own column."""
    return [p for p in moves_from(s, ring) if p[0] == ring[0]]


# Diagram 3 of the rulebook shows a black ring and the spaces it may reach. This position has the
# same kinds of obstacle, one per direction, around the black ring on e5:
#   up      e6, e7 vacant, then markers e8, e9, then e10 vacant: e6, e7 and e10 (slide then jump)
#   down    markers e4, e3, e2, e1 up to the edge: nothing
#   f5 way  f5, g5 vacant, then the white ring h5: f5 and g5
#   d5 way  markers d5, c5, b5, then a5 vacant: a5 (a run of three jumped)
#   f6 way  marker f6, then the black ring g7: nothing (markers then a ring)
#   d4 way  marker d4, then c3 and b2 vacant: c3 only (the first vacant space after the jump)
DIAGRAM_3 = dict(
    wr="h5 k8 k9 k10 j11",
    br="e5 g7 a2 b1 c1",
    wm="e8 e4 e2 c5 f6 d4",
    bm="e9 e3 e1 d5 b5",
)


def test_diagram_3_a_ring_reaches_exactly_the_marked_spaces():
    s = setup(B, **DIAGRAM_3)
    assert moves_from(s, "e5") == sorted(["e6", "e7", "e10", "f5", "g5", "a5", "c3"])


def test_a_move_takes_a_marker_from_the_pool_and_leaves_it_in_the_rings_start():
    s = setup(B, **DIAGRAM_3)
    pool = s.pool
    s.play("e5-f5")
    assert s.pool == pool - 1
    assert "e5" in s.points(s.markers[B])
    assert "f5" in s.points(s.rings[B]) and "e5" not in s.points(s.rings[B])


def test_ring_moves_only_in_a_straight_line():
    s = setup(B, **DIAGRAM_3)
    with pytest.raises(IllegalAction):
        s.play("e5-f7")  # not on a line through e5


def test_ring_may_move_over_any_number_of_vacant_spaces():
    s = setup(W, wr="a5 k7 k8 k9 k10", br="b1 c1 d1 e1 f2")
    assert moves_from(s, "a5") == sorted(
        ["a2", "a3", "a4"]
        + ["b5", "c5", "d5", "e5", "f5", "g5", "h5", "i5", "j5"]
        + ["b6", "c7", "d8", "e9", "f10", "g11"]
    )


def test_ring_cannot_land_on_a_marker():
    s = setup(B, **DIAGRAM_3)
    for marker in ("e8", "e9", "d5", "d4"):
        assert f"e5-{marker}" not in legal(s)


def test_ring_must_stop_on_the_first_vacant_space_after_jumping():
    s = setup(B, **DIAGRAM_3)
    assert "e5-c3" in legal(s)
    assert "e5-b2" not in legal(s)
    with pytest.raises(IllegalAction):
        s.play("e5-b2")


def test_ring_may_slide_then_jump_but_not_slide_after_jumping():
    s = setup(B, **DIAGRAM_3)
    assert "e5-e10" in legal(s)  # over e6, e7 (vacant), then e8, e9 (markers)
    s2 = setup(W, wr="c2 k8 k9 k10 j11", br="a2 b1 d1 e1 f2", wm="c4", bm="c5")
    # Up column c: c3 vacant, c4 and c5 markers, c6 to c8 vacant: c3 and c6 only. Down: c1.
    assert column_moves(s2, "c2") == ["c1", "c3", "c6"]


def test_ring_cannot_jump_over_a_ring():
    s = setup(W, wr="c2 k8 k9 k10 j11", br="c4 b1 d1 e1 f2")
    assert "c2-c3" in legal(s)
    assert not {"c2-c5", "c2-c6", "c2-c7", "c2-c8"} & set(legal(s))


def test_ring_cannot_jump_markers_when_a_ring_stands_right_behind_them():
    s = setup(W, wr="c2 k8 k9 k10 j11", br="c5 b1 d1 e1 f2", wm="c3", bm="c4")
    assert column_moves(s, "c2") == ["c1"]  # nothing up column c


def test_markers_running_to_the_edge_block_that_direction():
    s = setup(W, wr="c5 k8 k9 k10 j11", br="a2 b1 d1 e1 f2", wm="c6 c8", bm="c7")
    assert not [t for t in legal(s) if t in ("c5-c6", "c5-c7", "c5-c8")]
    assert "c5-c4" in legal(s)


def test_a_ring_jumps_markers_of_both_colours_alike():
    s = setup(W, wr="c2 k8 k9 k10 j11", br="a2 b1 d1 e1 f2", wm="c3 c5", bm="c4 c6")
    assert column_moves(s, "c2") == ["c1", "c7"]


# ------------------------------------------------------------------------ F: flipping markers


def test_moving_over_vacant_spaces_flips_nothing_and_ends_the_turn():
    s = setup(B, **DIAGRAM_3)
    before = (s.markers[W], s.markers[B])
    s.play("e5-g5")
    assert s.markers[W] == before[0]
    assert s.markers[B] == before[1] | (1 << s.geometry.index["e5"])
    assert (s.turn, s.next) == (W, Phase.MOVE)


def test_jumped_markers_flip_but_the_new_marker_does_not():
    # Diagram 4: the black ring jumps three white and two black markers; they all flip, and the
    # marker put in the ring stays black.
    s = setup(
        B,
        wr="a2 a5 k8 k9 k10",
        br="c2 b1 d1 e1 f2",
        wm="c3 c4 c6",
        bm="c5 c7",
    )
    s.play("c2-c8")
    assert s.points(s.markers[B]) == ["c2", "c3", "c4", "c6"]
    assert s.points(s.markers[W]) == ["c5", "c7"]
    assert s.points(s.rings[B]) == ["b1", "c8", "d1", "e1", "f2"]


def test_markers_flip_only_and_never_move():
    s = setup(B, **DIAGRAM_3)
    occupied = s.markers[W] | s.markers[B]
    s.play("e5-a5")  # jumps d5, c5, b5
    assert s.markers[W] | s.markers[B] == occupied | (1 << s.geometry.index["e5"])
    assert s.points(s.markers[W]) == sorted(["e8", "e4", "e2", "f6", "d4", "d5", "b5"])
    assert s.points(s.markers[B]) == sorted(["e9", "e3", "e1", "c5", "e5"])


def test_markers_outside_the_jumped_run_are_not_flipped():
    s = setup(B, **DIAGRAM_3)
    s.play("e5-e10")  # slides over e6, e7 and jumps e8, e9
    assert "e8" in s.points(s.markers[B]) and "e9" in s.points(s.markers[W])
    assert "e4" in s.points(s.markers[W]) and "e3" in s.points(s.markers[B])
