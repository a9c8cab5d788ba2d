"""The boards: points, lines and rays, checked against the rule texts."""

import pytest

from engine import HEX, SQUARE8, State, geometry

HEX_COLUMNS = {
    "a": (2, 5),
    "b": (1, 7),
    "c": (1, 8),
    "d": (1, 9),
    "e": (1, 10),
    "f": (2, 10),
    "g": (2, 11),
    "h": (3, 11),
    "i": (4, 11),
    "j": (5, 11),
    "k": (7, 10),
}


def ray(g, start, direction):
    return [g.name(i) for i in g.rays[g.index[start]][direction]]


def test_hex_board_has_the_85_points_of_the_official_coordinates():
    expected = [f"{c}{n}" for c, (lo, hi) in HEX_COLUMNS.items() for n in range(lo, hi + 1)]
    assert len(expected) == 85
    assert HEX.points() == expected
    assert sorted(geometry(HEX).index) == sorted(expected)


def test_square_board_is_a_chessboard():
    g = geometry(SQUARE8)
    assert SQUARE8.size == 64
    assert sorted(g.index) == sorted(f"{c}{n}" for c in "abcdefgh" for n in range(1, 9))


def test_hex_lines_run_along_columns_numbers_and_the_letter_minus_number_diagonal():
    g = geometry(HEX)
    rays = {tuple(ray(g, "e5", d)) for d in range(6)}
    assert rays == {
        ("e6", "e7", "e8", "e9", "e10"),  # along the column
        ("e4", "e3", "e2", "e1"),
        ("f5", "g5", "h5", "i5", "j5"),  # along equal numbers
        ("d5", "c5", "b5", "a5"),
        ("f6", "g7", "h8", "i9", "j10"),  # letter index minus number constant
        ("d4", "c3", "b2"),  # a1 is not a point
    }


def test_hex_diagonal_through_e2_f3_g4_is_a_line():
    g = geometry(HEX)
    lines = [ray(g, "e2", d) for d in range(6)]
    assert ["f3", "g4", "h5", "i6", "j7", "k8"] in lines
    assert ["d1"] in lines


@pytest.mark.parametrize(
    ("point", "neighbours"),
    [
        ("a2", {"a3", "b2", "b3"}),  # a corner of the star: three directions only
        ("k10", {"k9", "j10", "j9"}),
        ("e1", {"e2", "d1", "f2"}),
        ("e10", {"e9", "d9", "f10"}),
        ("f6", {"f5", "f7", "e6", "g6", "e5", "g7"}),
    ],
)
def test_hex_neighbours(point, neighbours):
    g = geometry(HEX)
    found = {g.name(r[0]) for r in g.rays[g.index[point]] if r}
    assert found == neighbours


def test_square_rays_go_in_eight_directions_like_a_queen():
    g = geometry(SQUARE8)
    rays = {tuple(ray(g, "d4", d)) for d in range(8)}
    assert rays == {
        ("d5", "d6", "d7", "d8"),
        ("d3", "d2", "d1"),
        ("e4", "f4", "g4", "h4"),
        ("c4", "b4", "a4"),
        ("e5", "f6", "g7", "h8"),
        ("c3", "b2", "a1"),
        ("e3", "f2", "g1"),
        ("c5", "b6", "a7"),
    }


def test_lines_never_wrap_around_the_board_edge():
    for board in (HEX, SQUARE8):
        g = geometry(board)
        for i in g.points:
            c, n = g.name(i)[0], int(g.name(i)[1:])
            for r in g.rays[i]:
                steps = [(ord(g.name(j)[0]) - ord(c), int(g.name(j)[1:]) - n) for j in r]
                for k, (dc, dn) in enumerate(steps, 1):
                    assert (dc, dn) == (k * steps[0][0], k * steps[0][1])


def test_rows_of_five_are_every_run_of_five_points_on_a_line():
    # Counted by hand: a line of L points holds L - 4 runs of five. The YINSH columns (4, 7, 8, 9,
    # 10, 9, 10, 9, 8, 7, 4 points) give 41 runs, and so does each of the other two axes of the
    # six-fold symmetric board; a chessboard has 4 per rank and file and 16 per diagonal axis.
    for board, expected in ((HEX, 3 * 41), (SQUARE8, 8 * 4 + 8 * 4 + 2 * 16)):
        g = geometry(board)
        runs = set()
        for i in g.points:
            for r in g.rays[i]:
                if len(r) >= 4:
                    runs.add(frozenset([i, *r[:4]]))
        assert len(g.rows) == len(runs) == expected


def test_every_point_is_named_and_parsed_alike_by_state():
    s = State("yinsh")
    assert len(s.legal_actions()) == 85
    assert sorted(str(a) for a in s.legal_actions()) == sorted(HEX.points())
