"""Rulebook section G: forming a row, removing it and a ring; rulings 3 and 4."""

import pytest

from engine import IllegalAction, Phase
from tests.engine.helpers import B, W, legal, setup
from tests.engine.positions import BOTH, CROSSING, TWO_ROWS

# Rings that stay out of the way in the positions below.
SPARE_W = "k8 k9 k10 j11"
SPARE_B = "a2 b1 d1 e1 f2"

# ------------------------------------------------------------------------ G1: what a row is


@pytest.mark.parametrize(
    ("ring", "move", "markers", "row"),
    [
        ("e6", "e6-f7", "e2 e3 e4 e5", "xe2-e6"),  # along a column
        ("f4", "f4-f5", "b4 c4 d4 e4", "xb4-f4"),  # along equal numbers
        ("g7", "g7-g8", "c3 d4 e5 f6", "xc3-g7"),  # along the diagonal
    ],
)
def test_five_adjacent_markers_in_a_line_form_a_row(ring, move, markers, row):
    s = setup(W, wr=f"{ring} {SPARE_W}", br=SPARE_B, wm=markers)
    s.play(move)
    assert (s.turn, s.next) == (W, Phase.REMOVE_ROW)
    assert legal(s) == [row]


def test_four_markers_and_a_gap_are_no_row():
    s = setup(W, wr=f"e7 {SPARE_W}", br=SPARE_B, wm="e2 e3 e4 e5")
    s.play("e7-f8")  # the marker lands on e7: e6 is still empty
    assert (s.turn, s.next) == (B, Phase.MOVE)


def test_markers_of_the_other_colour_do_not_count_in_a_row():
    s = setup(W, wr=f"e6 {SPARE_W}", br=SPARE_B, wm="e2 e3 e5", bm="e4")
    s.play("e6-f7")
    assert (s.turn, s.next) == (B, Phase.MOVE)


def test_a_ring_in_the_middle_breaks_a_row():
    # Diagram 6, situation 3: the ring on c5 does not count as a marker.
    s = setup(W, wr=f"c7 {SPARE_W}", br="c5 b1 d1 e1 f2", wm="c3 c4 c6")
    s.play("c7-d8")
    assert s.points(s.markers[W]) == ["c3", "c4", "c6", "c7"]
    assert (s.turn, s.next) == (B, Phase.MOVE)


def test_the_marker_left_by_a_ring_completes_a_row_where_the_ring_stood():
    s = setup(W, wr=f"c5 {SPARE_W}", br="b1 d1 e1 f2 a2", wm="c3 c4 c6 c7")
    s.play("c5-d6")
    assert legal(s) == ["xc3-c7"]


def test_a_row_along_the_rings_own_line_of_travel():
    # The new marker on c4 and the three flipped markers c5-c7 make a row with c3.
    s = setup(W, wr=f"c4 {SPARE_W}", br="b1 d1 e1 f2 a2", wm="c3", bm="c5 c6 c7")
    s.play("c4-c8")
    assert legal(s) == ["xc3-c7"]


def test_a_row_that_does_not_touch_the_rings_start():
    # The ring on a4 jumps b4, which turns white and completes column b; a4 is not in the row.
    s = setup(W, wr=f"a4 {SPARE_W}", br="e1 d1 f2 g2 h3", wm="b2 b3 b5 b6", bm="b4")
    s.play("a4-c4")
    assert legal(s) == ["xb2-b6"]


# ------------------------------------------------------------------------ G2, G3: removing


def test_a_row_goes_back_to_the_pool_then_the_player_removes_a_ring_of_its_choice():
    s = setup(W, wr=f"e6 {SPARE_W}", br=SPARE_B, wm="e2 e3 e4 e5")
    s.play("e6-f7")
    pool = s.pool
    s.play("xe2-e6")
    assert s.pool == pool + 5
    assert s.markers[W] == 0
    assert (s.turn, s.next) == (W, Phase.REMOVE_RING)
    # Any of the player's rings, the one just moved included.
    assert legal(s) == ["xf7", "xj11", "xk10", "xk8", "xk9"]
    s.play("xk8")
    assert s.removed == [1, 0]
    assert "k8" not in s.points(s.rings[W])
    assert (s.turn, s.next) == (B, Phase.MOVE)


def test_a_row_must_be_removed_before_anything_else():
    s = setup(W, wr=f"e6 {SPARE_W}", br=SPARE_B, wm="e2 e3 e4 e5")
    s.play("e6-f7")
    with pytest.raises(IllegalAction):
        s.play("xk8")  # the ring comes after the row
    with pytest.raises(IllegalAction):
        s.play("f7-f8")  # the turn is not over


def test_only_the_players_own_rings_can_be_removed():
    s = setup(W, wr=f"e6 {SPARE_W}", br=SPARE_B, wm="e2 e3 e4 e5")
    s.play("e6-f7")
    s.play("xe2-e6")
    with pytest.raises(IllegalAction):
        s.play("xa2")


# ------------------------------------------------------------------------ G4: longer rows


def test_row_of_six_offers_two_choices():
    s = setup(W, wr=f"c6 {SPARE_W}", br="b1 d1 e1 f2 a2", wm="c2 c3 c4 c5 c7")
    s.play("c6-d7")
    assert legal(s) == ["xc2-c6", "xc3-c7"]


def test_row_of_seven_offers_three_choices():
    # Diagram 6, situation 2: any five adjacent markers of the seven.
    s = setup(W, wr=f"d5 {SPARE_W}", br="b1 a2 e1 f2 g2", wm="d1 d2 d3 d4 d6 d7")
    s.play("d5-e6")
    assert legal(s) == ["xd1-d5", "xd2-d6", "xd3-d7"]


def test_the_markers_left_of_a_long_row_stay_on_the_board():
    s = setup(W, wr=f"d5 {SPARE_W}", br="b1 a2 e1 f2 g2", wm="d1 d2 d3 d4 d6 d7")
    s.play("d5-e6")
    s.play("xd2-d6")
    s.play("xk8")
    assert s.points(s.markers[W]) == ["d1", "d7"]
    assert (s.turn, s.next) == (B, Phase.MOVE)


def test_five_markers_that_are_not_adjacent_cannot_be_removed():
    s = setup(W, wr=f"d5 {SPARE_W}", br="b1 a2 e1 f2 g2", wm="d1 d2 d3 d4 d6 d7")
    s.play("d5-e6")
    with pytest.raises(ValueError):
        s.play("xd1-d6")  # six markers are not a row
    with pytest.raises(IllegalAction):
        s.play("xc1-c5")  # not the player's markers


# ------------------------------------------------------------------------ G5: several rows


def test_two_separate_rows_are_both_removed_with_a_ring_each():
    s = setup(W, **TWO_ROWS)
    s.play("c2-c5")
    assert legal(s) == ["xc3-g3", "xc4-g8"]
    s.play("xc4-g8")
    s.play("xk8")
    # Ruling 3: the other row is still complete, so it must go too.
    assert (s.turn, s.next) == (W, Phase.REMOVE_ROW)
    assert legal(s) == ["xc3-g3"]
    s.play("xc3-g3")
    s.play("xk9")
    assert s.removed == [2, 0]
    assert (s.turn, s.next) == (B, Phase.MOVE)


def test_separate_rows_may_be_removed_in_either_order():
    s = setup(W, **TWO_ROWS)
    s.play("c2-c5")
    s.play("xc3-g3")
    s.play("xc5")
    assert legal(s) == ["xc4-g8"]


def test_intersecting_rows_only_one_is_removed():
    s = setup(W, **CROSSING)
    s.play("e5-f6")
    assert legal(s) == ["xc5-g5", "xe3-e7"]
    s.play("xe3-e7")
    s.play("xk8")
    assert s.removed == [1, 0]
    assert s.points(s.markers[W]) == ["c5", "d5", "f5", "g5"]  # the other row is broken
    assert (s.turn, s.next) == (B, Phase.MOVE)


def test_intersecting_rows_the_player_may_take_either():
    s = setup(W, **CROSSING)
    s.play("e5-f6")
    s.play("xc5-g5")
    s.play("xk8")
    assert s.points(s.markers[W]) == ["e3", "e4", "e6", "e7"]
    assert (s.turn, s.next) == (B, Phase.MOVE)


def test_a_long_row_and_a_crossing_row_offer_every_choice():
    # e2..e7 (six) and c5-g5 cross on e5: three candidate rows, two of them sharing e5.
    s = setup(W, wr="e5 k8 k9 k10 j11", br="a2 b1 d1 e1 f2", wm="e2 e3 e4 e6 e7 c5 d5 f5 g5")
    s.play("e5-f6")
    assert legal(s) == ["xc5-g5", "xe2-e6", "xe3-e7"]
    s.play("xe2-e6")
    s.play("xk8")
    assert (s.turn, s.next) == (B, Phase.MOVE)


# ------------------------------------------------------------------------ G6, G7: rows for the
# opponent (ruling 4)

# White's ring on c2 jumps its own marker c3, which turns black and completes black's c3-g3.
FOR_BLACK = dict(
    wr="c2 k8 k9 k10 j11",
    br="a2 b1 d1 e1 f2",
    wm="c3",
    bm="d3 e3 f3 g3",
)


def test_row_made_for_opponent_is_removed_before_its_move():
    s = setup(W, **FOR_BLACK)
    s.play("c2-c4")
    assert (s.turn, s.next) == (B, Phase.REMOVE_ROW)
    assert legal(s) == ["xc3-g3"]
    s.play("xc3-g3")
    # Black chooses freely which of its rings to remove.
    assert legal(s) == ["xa2", "xb1", "xd1", "xe1", "xf2"]
    s.play("xf2")
    assert s.removed == [0, 1]
    assert (s.turn, s.next) == (B, Phase.MOVE)
    s.play("a2-a5")
    assert (s.turn, s.next) == (W, Phase.MOVE)


def test_the_mover_cannot_remove_a_row_of_the_opponents_colour():
    s = setup(W, **FOR_BLACK)
    s.play("c2-c4")
    assert s.turn == B
    assert s.rows(W) == []


def test_mover_resolves_its_own_row_first_then_the_opponent_before_its_move():
    s = setup(W, **BOTH)
    s.play("c2-c5")
    assert (s.turn, s.next) == (W, Phase.REMOVE_ROW)
    assert legal(s) == ["xc4-g8"]
    s.play("xc4-g8")
    s.play("xk8")
    assert (s.turn, s.next) == (B, Phase.REMOVE_ROW)
    assert legal(s) == ["xc3-g3"]
    s.play("xc3-g3")
    s.play("xa2")
    assert s.removed == [1, 1]
    assert (s.turn, s.next) == (B, Phase.MOVE)


def test_two_rows_made_for_the_opponent_are_both_removed_before_its_move():
    # Two separate black rows made by one white move: black removes both, then moves.
    s = setup(
        W,
        wr="c2 k8 k9 k10 j11",
        br="a2 b1 d1 e1 f2",
        wm="c3 c4",
        bm="d3 e3 f3 g3 d5 e6 f7 g8",
    )
    s.play("c2-c5")
    assert (s.turn, s.next) == (B, Phase.REMOVE_ROW)
    assert legal(s) == ["xc3-g3", "xc4-g8"]
    s.play("xc3-g3")
    s.play("xa2")
    assert legal(s) == ["xc4-g8"]
    s.play("xc4-g8")
    s.play("xb1")
    assert (s.turn, s.next, s.removed) == (B, Phase.MOVE, [0, 2])


def test_after_removing_a_row_made_by_the_opponent_the_player_still_moves():
    s = setup(W, **FOR_BLACK)
    s.play("c2-c4")
    s.play("xc3-g3")
    s.play("xf2")
    assert not s.moved
    assert (s.turn, s.next) == (B, Phase.MOVE)


def test_a_set_up_position_starts_with_the_rows_of_the_player_to_act():
    s = setup(B, wr="k8 k9 k10 j11 h11", br=SPARE_B, bm="c3 d3 e3 f3 g3")
    assert (s.turn, s.next) == (B, Phase.REMOVE_ROW)
    with pytest.raises(ValueError, match="row"):
        setup(W, wr="k8 k9 k10 j11 h11", br=SPARE_B, bm="c3 d3 e3 f3 g3")
