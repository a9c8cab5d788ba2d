"""Rulebook sections H (end of the game) and J (Blitz); rulings 1, 2 and 6; the double pass."""

import pytest

from engine import IllegalAction, Phase, Result, State, Termination
from tests.engine.helpers import B, W, crowd, legal, setup
from tests.engine.positions import BLOCKED_BOTH, BLOCKED_BOTH_UNEVEN, BLOCKED_WHITE

# ------------------------------------------------------------------------ H1, H2: three rows


def test_third_removed_ring_wins():
    s = setup(W, wr="e6 k8 k9", br="a2 b1 d1 e1 f2", wm="e2 e3 e4 e5", removed=(2, 0))
    s.play("e6-f7")
    s.play("xe2-e6")
    assert not s.is_over()
    s.play("xk8")
    assert s.is_over() and s.next is Phase.OVER
    assert (s.outcome.result, s.outcome.termination) == (Result.WHITE, Termination.ROWS)
    assert s.outcome.winner == W
    assert s.legal_actions() == []


def test_second_removed_ring_does_not_end_the_game():
    s = setup(W, wr="e6 k8 k9 k10", br="a2 b1 d1 e1 f2", wm="e2 e3 e4 e5", removed=(1, 0))
    s.play("e6-f7")
    s.play("xe2-e6")
    s.play("xk8")
    assert s.removed == [2, 0]
    assert (s.turn, s.next, s.outcome) == (B, Phase.MOVE, None)


# White's ring on c2 jumps c3 (white -> black: black's row c3-g3) and c4 (black -> white: white's
# diagonal c4-g8): both players' third rows at once.
BOTH_THIRD = dict(
    wr="c2 k8 k9",
    br="a2 b1 d1",
    wm="c3 d5 e6 f7 g8",
    bm="c4 d3 e3 f3 g3",
    removed=(2, 2),
)


def test_mover_third_row_wins_before_opponent_third_row():
    s = setup(W, **BOTH_THIRD)
    s.play("c2-c5")
    assert (s.turn, legal(s)) == (W, ["xc4-g8"])
    s.play("xc4-g8")
    s.play("xk8")
    assert s.outcome.result is Result.WHITE
    assert s.rows(B)  # black's row is still on the board: it never got to remove it


def test_row_made_for_opponent_can_give_it_the_win_before_its_move():
    s = setup(W, wr="c2 k8 k9 k10 j11", br="a2 b1 d1", wm="c3", bm="d3 e3 f3 g3", removed=(0, 2))
    s.play("c2-c4")
    s.play("xc3-g3")
    s.play("xa2")
    assert (s.outcome.result, s.outcome.termination) == (Result.BLACK, Termination.ROWS)


def test_a_winning_removal_ends_the_game_before_further_rows():
    # Two separate white rows at once, but the first ring removed is white's third.
    s = setup(
        W,
        wr="c2 k8 k9",
        br="a2 b1 d1 e1 f2",
        wm="d3 e3 f3 g3 d5 e6 f7 g8",
        bm="c3 c4",
        removed=(2, 0),
    )
    s.play("c2-c5")
    s.play("xc3-g3")
    s.play("xk8")
    assert s.outcome.result is Result.WHITE
    assert [str(r) for r in s.rows(W)] == ["xc4-g8"]  # left on the board


# ------------------------------------------------------------------------ H3 and ruling 2: the pool

POOL_RINGS = dict(wr="e5 k8 k9 k10", br="a2 b1 d1 e1 f2")


def pool_position(removed, count=50, turn=W, **extra):
    """A crowded position: the rings of POOL_RINGS, ``count`` markers, e6 left vacant."""
    rings = dict(POOL_RINGS, **{k: v for k, v in extra.items() if k in ("wr", "br")})
    wm0, bm0 = extra.get("wm", ""), extra.get("bm", "")
    keep = " ".join([rings["wr"], rings["br"], wm0, bm0, extra.get("vacant", "e6")])
    n = count - len(wm0.split()) - len(bm0.split())
    wm, bm = crowd("yinsh", keep, n)
    return setup(turn, rings["wr"], rings["br"], f"{wm} {wm0}", f"{bm} {bm0}", removed=removed)


def test_the_game_goes_on_while_the_pool_holds_a_marker():
    s = pool_position((1, 0))
    assert s.pool == 1
    assert (s.next, s.turn) == (Phase.MOVE, W)
    assert "e5-e6" in legal(s)


def test_pool_exhausted_more_rings_wins():
    s = pool_position((1, 0))
    s.play("e5-e6")  # the last marker; no row
    assert s.pool == 0
    assert (s.outcome.result, s.outcome.termination) == (Result.WHITE, Termination.POOL_EXHAUSTED)


def test_pool_exhausted_fewer_rings_loses():
    s = pool_position((1, 2), br="a2 b1 d1")
    s.play("e5-e6")
    assert s.outcome.result is Result.BLACK
    assert s.outcome.termination is Termination.POOL_EXHAUSTED


def test_pool_exhausted_equal_is_draw():
    s = pool_position((1, 1), br="a2 b1 d1 e1")
    s.play("e5-e6")
    assert (s.outcome.result, s.outcome.termination) == (Result.DRAW, Termination.POOL_EXHAUSTED)
    assert s.outcome.winner is None


def test_game_ends_when_a_player_must_move_and_the_pool_is_empty():
    s = pool_position((0, 0), count=51, wr="e5 k8 k9 k10 j11")
    assert s.pool == 0
    assert s.is_over()
    assert (s.outcome.result, s.outcome.termination) == (Result.DRAW, Termination.POOL_EXHAUSTED)


def test_last_marker_row_is_removed_and_play_continues():
    # Ruling 2: the last marker completes white's column i5-i9.
    s = pool_position(
        (1, 0), wr="i9 k8 k9 k10", wm="i5 i6 i7 i8", vacant="j10 e5 e6", br="a2 b1 d1 e1 f2"
    )
    assert s.pool == 1
    s.play("i9-j10")
    assert s.pool == 0
    assert (s.turn, s.next) == (W, Phase.REMOVE_ROW)
    s.play("xi5-i9")
    assert s.pool == 5
    s.play("xk8")
    assert (s.turn, s.next, s.outcome) == (B, Phase.MOVE, None)
    assert s.removed == [2, 0]


def test_last_marker_row_for_the_opponent_is_removed_and_play_continues():
    # White's last marker goes on h9 and its ring jumps i9, which turns black: column i5-i9.
    s = pool_position((1, 0), wr="h9 k8 k9 k10", wm="i9", bm="i5 i6 i7 i8", vacant="j9 e5 e6")
    assert s.pool == 1
    s.play("h9-j9")
    assert s.pool == 0
    assert (s.turn, s.next) == (B, Phase.REMOVE_ROW)
    s.play("xi5-i9")
    s.play("xa2")
    assert (s.turn, s.next, s.pool, s.outcome) == (B, Phase.MOVE, 5, None)


# ------------------------------------------------------------------------ J and ruling 6: Blitz


def test_blitz_first_row_wins():
    s = setup(W, wr="e6 k8 k9 k10 j11", br="a2 b1 d1 e1 f2", wm="e2 e3 e4 e5", v="blitz")
    s.play("e6-f7")
    s.play("xe2-e6")
    s.play("xj11")
    assert (s.outcome.result, s.outcome.termination) == (Result.WHITE, Termination.ROWS)


def test_blitz_row_made_for_the_opponent_wins_for_the_opponent():
    s = setup(W, wr="c2 k8 k9 k10 j11", br="a2 b1 d1 e1 f2", wm="c3", bm="d3 e3 f3 g3", v="blitz")
    s.play("c2-c4")
    assert (s.turn, s.next) == (B, Phase.REMOVE_ROW)
    s.play("xc3-g3")
    s.play("xa2")
    assert s.outcome.result is Result.BLACK


def test_blitz_mover_row_wins_before_opponent_row():
    s = setup(
        W,
        wr="c2 k8 k9 k10 j11",
        br="a2 b1 d1 e1 f2",
        wm="c3 d5 e6 f7 g8",
        bm="c4 d3 e3 f3 g3",
        v="blitz",
    )
    s.play("c2-c5")
    s.play("xc4-g8")
    s.play("xk8")
    assert s.outcome.result is Result.WHITE


def test_blitz_is_yinsh_in_everything_but_the_rows_to_win():
    yinsh, blitz = State("yinsh"), State("blitz")
    for token in ["e3", "a5", "b5", "c6", "d6", "e4", "h7", "g2", "g3", "g8", "h7-g7"]:
        yinsh.play(token)
        blitz.play(token)
        assert legal(yinsh) == legal(blitz)
    assert blitz.variant.rows_to_win == 1 and yinsh.variant.rows_to_win == 3


def test_blitz_pool_exhausted_without_a_row_is_a_draw():
    wm, bm = crowd("blitz", "e5 e6 k8 k9 k10 j11 a2 b1 d1 e1 f2", 50)
    s = State.from_setup(
        "blitz",
        W,
        ["e5", "k8", "k9", "k10", "j11"],
        ["a2", "b1", "d1", "e1", "f2"],
        wm.split(),
        bm.split(),
    )
    s.play("e5-e6")
    assert (s.outcome.result, s.outcome.termination) == (Result.DRAW, Termination.POOL_EXHAUSTED)


# ------------------------------------------------------------------------ ruling 1: passing
# The positions (in positions.py) wall rings in corners with markers up to the edge.


def test_blocked_player_passes():
    s = setup(W, **BLOCKED_WHITE)
    assert legal(s) == ["pass"]
    markers, pool = list(s.markers), s.pool
    s.play("pass")
    assert (s.turn, s.next) == (B, Phase.MOVE)
    assert s.markers == markers and s.pool == pool  # a pass takes no marker
    assert s.passes == 1 and not s.is_over()


def test_pass_is_illegal_while_a_ring_can_move():
    s = setup(W, wr="e5 k8 k9 k10 j11", br="a2 b1 d1 e1 f2")
    assert "pass" not in legal(s)
    with pytest.raises(IllegalAction):
        s.play("pass")


def test_pass_is_illegal_outside_the_move_phase():
    s = State("yinsh")
    with pytest.raises(IllegalAction):
        s.play("pass")


def test_a_move_between_two_passes_keeps_the_game_going():
    s = setup(W, **BLOCKED_WHITE)
    s.play("pass")
    s.play("h8-h7")  # black's h8 blocks none of white's lines
    assert s.passes == 0
    assert legal(s) == ["pass"]
    s.play("pass")
    assert (s.turn, s.next, s.outcome) == (B, Phase.MOVE, None)


def test_both_players_passing_in_succession_ends_the_game_as_a_draw_on_equal_rings():
    s = setup(W, **BLOCKED_BOTH)
    s.play("pass")
    assert legal(s) == ["pass"]
    s.play("pass")
    assert (s.outcome.result, s.outcome.termination) == (Result.DRAW, Termination.NO_MOVES)
    assert s.legal_actions() == []


def test_both_players_passing_more_rings_removed_wins():
    s = setup(W, **BLOCKED_BOTH_UNEVEN)
    s.play("pass")
    s.play("pass")
    assert (s.outcome.result, s.outcome.termination) == (Result.WHITE, Termination.NO_MOVES)
    assert Termination.NO_MOVES.by_rules


def test_undoing_a_pass_restores_the_count():
    s = setup(W, **BLOCKED_BOTH)
    key = s.key()
    s.play("pass")
    s.play("pass")
    s.pop()
    s.pop()
    assert s.key() == key and s.passes == 0
