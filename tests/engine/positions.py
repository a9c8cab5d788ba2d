"""Hand-made positions shared by several test modules (as ``helpers.setup`` keyword arguments)."""

# White's three rings (two already removed) stand in corners of the board, every line out of them
# filled with markers up to the edge or up to a ring: white can only pass. Black can move.
BLOCKED_WHITE = dict(
    wr="a2 a5 g2",
    br="e5 f6 g6 h8 d7",
    wm="b2 b3 b6 c4 c5 d8 e9 g3 h3 h9 i10",
    bm="a3 a4 b5 c2 c7 d2 d5 e2 e6 f10 f2 f7 g11 g4 g5 g8 i4 j11 j5",
    removed=(2, 0),
)

# Both sides walled in the same way, two rings removed each: two passes end the game, drawn.
BLOCKED_BOTH = dict(
    wr="a2 a5 g2",
    br="g11 j5 j11",
    wm="b2 b3 b6 c4 c5 d8 e6 f7 g5 g6 g7 h3 h9 i4 j10 j8 j9",
    bm="a3 a4 b5 c2 c7 d2 d5 e2 e5 e9 f10 f2 f5 g10 g3 g4 g8 g9 h11 h5 i10 i11 i5 j6 j7",
    removed=(2, 2),
)

# Both walled in, white two rings removed and black one: two passes end the game, white wins.
BLOCKED_BOTH_UNEVEN = dict(
    wr="a3 a4 h3",
    br="g10 g11 h10 h11",
    wm="b3 b4 b6 c4 c5 c6 c7 d4 e10 e3 e4 f10 f8 g3 g5 g6 g8 h5 h6 h9 i11 j10 j11 j5 k10",
    bm="a2 a5 b5 c3 d3 d6 d7 d8 e7 e8 e9 f3 f4 f9 g2 g4 g7 g9 h4 h7 h8 i10 i4",
    removed=(2, 1),
)

# White's ring on c2 jumps c3 and c4 (black), which turn white: c3 completes the row c3-g3 along
# equal numbers, c4 completes the diagonal c4-g8. The two rows share no marker.
TWO_ROWS = dict(
    wr="c2 k8 k9 k10 j11",
    br="a2 b1 d1 e1 f2",
    wm="d3 e3 f3 g3 d5 e6 f7 g8",
    bm="c3 c4",
)

# Diagram 6, situation 1: white's ring leaves e5, whose new marker completes the column e3-e7 and
# the row c5-g5 at once; the rows cross on e5.
CROSSING = dict(
    wr="e5 k8 k9 k10 j11",
    br="a2 b1 d1 e1 f2",
    wm="e3 e4 e6 e7 c5 d5 f5 g5",
)

# White's ring on c2 jumps c3 (white, turns black: black's row c3-g3) and c4 (black, turns
# white: white's diagonal c4-g8).
BOTH = dict(
    wr="c2 k8 k9 k10 j11",
    br="a2 b1 d1 e1 f2",
    wm="c3 d5 e6 f7 g8",
    bm="c4 d3 e3 f3 g3",
)

# ------------------------------------------------------------------------ whole games

# Games built so that turn 23 is each of the three examples of "removing more than one row" in
# the official notation (notation.txt, section 5). White keeps rings on a5 and g2 to remove them,
# and its ring on i8 makes the move i8-f5 (through h7 and g6).
#  1. White's move makes two separate rows, c6-g6 (g6 flipped) and h7-h11 (h7 flipped).
#  2. Black's move 22 (g7-i7, flipping h7) makes h7-h11 for White; White's move makes c6-g6.
#  3. Black's move 22 (i7-f7, flipping h7 and g7) makes g3-g7 and h7-h11 for White.
CASE_1 = (
    "1.a5 2.d6 3.g2 4.h9 5.i8 6.h7 7.c4 8.g6 9.f8 10.b2 11.c4-c6 12.d6-e6 13.f8-h8 14.e6-e5 "
    "15.c6-f6 16.h9-h10 17.f6-f7 18.h10-i10 19.h8-h11 20.h7-h5 21.h11-i11 22.g6-g4"
)
CASE_2 = (
    "1.a5 2.d6 3.g2 4.e6 5.i8 6.h7 7.c6 8.b2 9.h8 10.b1 11.h8-h9 12.d6-d5 13.h9-h10 14.e6-g6 "
    "15.c6-f6 16.g6-g4 17.h10-h11 18.h7-g7 19.h11-i11 20.b2-b3 21.f6-f7 22.g7-i7"
)
CASE_3 = (
    "1.a5 2.h9 3.g2 4.g7 5.i8 6.b2 7.g3 8.c2 9.h8 10.d2 11.g3-g4 12.h9-h10 13.g4-g5 "
    "14.h10-i10 15.h8-h11 16.g7-h7 17.g5-g6 18.h7-i7 19.g6-f6 20.b2-b3 21.h11-i11 22.i7-f7"
)

# A game in which White walls its own rings in; move 53 is a pass.
WALLED_IN = (
    "1.e1 2.e2 3.d1 4.d2 5.c1 6.c2 7.b1 8.f2 9.b2 10.c3 11.b2-b6 12.c3-c6 13.b6-b3 14.c6-c4 "
    "15.b3-a2 16.c4-a4 17.a2-a3 18.a4-b4 19.a3-a5 20.b4-b5 21.a5-c7 22.b5-d7 23.c7-b7 24.d7-d9 "
    "25.b7-c8 26.d9-d8 27.c8-e10 28.d8-e9 29.e10-f10 30.e9-f9 31.f10-g11 32.f9-g10 33.g11-h11 "
    "34.g10-h10 35.h11-i11 36.h10-i10 37.i11-j11 38.i10-j10 39.j11-h9 40.j10-h8 41.h9-i9 "
    "42.h8-i8 43.i9-j9 44.i8-j8 45.j9-k10 46.j8-k9 47.k10-h7 48.k9-i7 49.h7-h3 50.f2-g3 "
    "51.h3-g2 52.i7-i4"
)
