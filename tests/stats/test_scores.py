"""Points, scores, standings and the cross-table: the one way every tournament counts."""

import pytest

import engine
from arena.stats.scores import (
    Score,
    cross_table,
    format_points,
    points,
    standings,
    standings_text,
)


def test_a_win_is_one_point_a_draw_half_a_loss_none():
    assert [points(r) for r in ("white", "draw", "black")] == [1.0, 0.5, 0.0]
    assert [points(r, "black") for r in ("white", "draw", "black")] == [0.0, 0.5, 1.0]
    assert points(engine.Result.DRAW) == 0.5  # the engine's results are the same strings


@pytest.mark.parametrize(("result", "side"), [("1-0", "white"), ("", "white"), ("draw", "red")])
def test_unknown_results_and_sides_are_refused(result, side):
    with pytest.raises(ValueError, match="white"):
        points(result, side)


def test_a_score_counts_from_its_own_side():
    s = Score()
    s.add("white", "white", 3)
    s.add("white", "black")
    s.add("draw", "black", 2)
    assert (s.wins, s.draws, s.losses, s.games, s.points) == (3, 2, 1, 6, 4.0)
    assert s.percent == pytest.approx(100 * 4 / 6) and Score().percent == 0.0


def test_standings_rank_by_points_then_sonneborn_berger_then_wins_then_seed():
    # b and d score 2 points, a and c 1; e never played.
    results = [
        ("a", "c", "white", 1),  # a beats c, the stronger...
        ("a", "b", "black", 2),  # ... but loses twice to b
        ("b", "d", "black", 1),
        ("a", "d", "draw", 0),  # no games: counts for nothing
        ("c", "d", "draw", 1),
        ("d", "c", "draw", 1),
    ]
    table = standings(["e", "d", "c", "b", "a"], results)
    by = {s.player: s for s in table}
    assert (by["a"].points, by["b"].points, by["c"].points, by["d"].points) == (1, 2, 1, 2)
    # b: 2/2 against a (1 point) and 0/1 against d (2 points): SB 1. d: 1/1 against b (2
    # points) and 1/2 against c (1 point): SB 2.5. a: 1/1 against c: SB 1, c: 1/2 against d:
    # SB 1, a won a game, c none.
    assert [s.player for s in table] == ["d", "b", "a", "c", "e"]
    assert [s.rank for s in table] == [1, 2, 3, 4, 5]
    assert (by["d"].tiebreak, by["b"].tiebreak) == (2.5, 1.0)
    assert (by["a"].tiebreak, by["c"].tiebreak, by["a"].wins, by["c"].wins) == (1.0, 1.0, 1, 0)
    assert (by["e"].games, by["e"].seed, by["a"].seed) == (0, 0, 4)
    tied = standings(["x", "y"], [("x", "y", "draw", 2)])
    assert [s.player for s in tied] == ["x", "y"]  # everything equal: the seed decides


def test_the_cross_table_follows_the_order_it_is_given():
    table = standings(["a", "b", "c"], [("a", "b", "white", 1), ("b", "a", "draw", 1)])
    assert [(s.player, cells) for s, cells in cross_table(table)] == [
        ("a", ["x", "1.5/2", ""]),
        ("b", ["0.5/2", "x", ""]),
        ("c", ["", "", "x"]),
    ]
    backwards = cross_table(table[::-1])
    assert [cells for _, cells in backwards][0] == ["x", "", ""]
    assert [cells for _, cells in backwards][2] == ["", "1.5/2", "x"]


def test_a_result_of_someone_else_is_refused():
    with pytest.raises(ValueError, match="'z' played but is not one of the players"):
        standings(["a", "b"], [("a", "z", "white", 1)])


def test_the_standings_as_text():
    table = standings(["ann", "bob"], [("ann", "bob", "white", 1), ("bob", "ann", "draw", 1)])
    lines = standings_text(table, str.upper).splitlines()
    assert lines[0].split() == ["#", "bot", "points", "games", "+", "=", "-"]
    assert lines[1].split() == ["1", "ANN", "1.5", "2", "1", "1", "0"]
    assert lines[2].split() == ["2", "BOB", "0.5", "2", "0", "1", "1"]
    assert format_points(0.0) == "0" and format_points(10.5) == "10.5"
