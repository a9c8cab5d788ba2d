"""Yangsh and its seven-ring variant (yangsh.txt, RULINGS.md 5): the same rules on a chessboard."""

import pytest

from engine import IllegalAction, Phase, Result, State, Termination
from tests.engine.helpers import B, W, crowd, legal, moves_from, setup

# White's d4 has nothing on its lines; the other rings stand off them.
OPEN_D4 = dict(wr="d4 a2 a3 b1 c1", br="f1 g2 g3 h2 h3", v="yangsh")


def test_yangsh_rings_cannot_be_placed_on_corners():
    s = State("yangsh")
    assert len(legal(s)) == 60
    assert not {"a1", "a8", "h1", "h8"} & set(legal(s))
    with pytest.raises(IllegalAction):
        s.play("a1")
    s.play("b2")
    assert "h8" not in legal(s)  # black neither


def test_yangsh_ring_may_move_onto_a_corner():
    s = setup(W, wr="b2 c5 c6 c7 d7", br="f1 g2 g3 h2 h3", v="yangsh")
    assert "b2-a1" in legal(s)
    s.play("b2-a1")
    assert "a1" in s.points(s.rings[W])


def test_yangsh_rings_move_in_eight_directions_like_a_queen():
    s = setup(W, **OPEN_D4)
    assert len(moves_from(s, "d4")) == 27  # a queen's moves from d4 on an empty board
    assert {"d4-a1", "d4-h8", "d4-a7", "d4-g1", "d4-d8", "d4-d1", "d4-a4", "d4-h4"} <= set(legal(s))


def test_yangsh_rings_jump_markers_along_diagonals_and_flip_them():
    s = setup(W, **OPEN_D4, wm="e5", bm="f6")
    assert [t for t in legal(s) if t.startswith("d4-") and t[3] > "d" and t[4] > "4"] == ["d4-g7"]
    s.play("d4-g7")
    assert s.points(s.markers[W]) == ["d4", "f6"]
    assert s.points(s.markers[B]) == ["e5"]


def test_yangsh_ring_cannot_jump_a_ring():
    s = setup(W, wr="d4 a2 a3 b1 c1", br="e3 g2 g3 h2 h3", v="yangsh")
    assert "d4-f2" not in legal(s) and "d4-g1" not in legal(s)


@pytest.mark.parametrize(
    ("ring", "move", "markers", "row"),
    [
        ("e3", "e3-e4", "a3 b3 c3 d3", "xa3-e3"),  # along a rank
        ("c5", "c5-d6", "c1 c2 c3 c4", "xc1-c5"),  # along a file
        ("f6", "f6-f7", "b2 c3 d4 e5", "xb2-f6"),  # along a diagonal
        ("e1", "e1-f1", "a5 b4 c3 d2", "xa5-e1"),  # along an anti-diagonal
    ],
)
def test_yangsh_rows_along_ranks_files_and_both_diagonals(ring, move, markers, row):
    s = setup(W, wr=f"{ring} h4 h5 h6 h7", br="a7 b7 b8 c8 d8", wm=markers, v="yangsh")
    s.play(move)
    assert (s.turn, s.next) == (W, Phase.REMOVE_ROW)
    assert legal(s) == [row]


def test_yangsh_markers_on_a_corner_count_in_a_row():
    s = setup(W, wr="a5 h4 h5 h6 h7", br="c7 b7 b8 c8 d8", wm="a1 a2 a3 a4", v="yangsh")
    s.play("a5-b6")
    assert legal(s) == ["xa1-a5"]


def test_yangsh_second_intact_row_must_also_be_taken():
    # Ruling 5: d1's ring jumps d2 and d3 (black), which complete a rank and a diagonal.
    s = setup(
        W,
        wr="d1 a4 a5 a6 b5",
        br="b8 c8 d8 e8 f8",
        wm="e2 f2 g2 h2 e4 f5 g6 h7",
        bm="d2 d3",
        v="yangsh",
    )
    s.play("d1-d4")
    assert legal(s) == ["xd2-h2", "xd3-h7"]
    s.play("xd3-h7")
    s.play("xa4")
    assert legal(s) == ["xd2-h2"]
    s.play("xd2-h2")
    s.play("xa5")
    assert s.removed == [2, 0]
    assert (s.turn, s.next) == (B, Phase.MOVE)


def test_yangsh_pool_holds_45_markers_and_runs_out_as_in_yinsh():
    assert State("yangsh").pool == 45
    wm, bm = crowd("yangsh", "h5 a2 a3 b1 c1 f1 g2 g3 h2 h3 h6", 44)
    s = setup(W, wr="h5 a2 a3 b1 c1", br="f1 g2 g3 h2 h3", wm=wm, bm=bm, v="yangsh")
    assert s.pool == 1
    s.play("h5-h6")
    assert (s.outcome.result, s.outcome.termination) == (Result.DRAW, Termination.POOL_EXHAUSTED)


def test_yangsh7_places_seven_rings_each():
    s = State("yangsh7")
    for _ in range(14):
        assert s.next is Phase.PLACE
        s.push(s.legal_actions()[0])
    assert (s.next, s.turn) == (Phase.MOVE, W)
    assert s.rings[W].bit_count() == s.rings[B].bit_count() == 7


def test_yangsh7_fourth_row_does_not_win():
    s = setup(
        W,
        wr="e3 h4 h5 h6",
        br="a7 b7 b8 c8 d8 a6 b6",
        wm="a3 b3 c3 d3",
        v="yangsh7",
        removed=(3, 0),
    )
    s.play("e3-e4")
    s.play("xa3-e3")
    s.play("xh4")
    assert s.removed == [4, 0] and not s.is_over()


def test_yangsh7_needs_five_rows():
    s = setup(
        W,
        wr="e3 h4 h5",
        br="a7 b7 b8 c8 d8 a6 b6",
        wm="a3 b3 c3 d3",
        v="yangsh7",
        removed=(4, 0),
    )
    s.play("e3-e4")
    s.play("xa3-e3")
    s.play("xh4")
    assert (s.outcome.result, s.outcome.termination) == (Result.WHITE, Termination.ROWS)
    assert s.removed == [5, 0]
