"""The official notation (notation.txt): reading and writing whole games, long and short."""

import re

import pytest

from engine import (
    PASS,
    Action,
    Color,
    Kind,
    NotationError,
    Phase,
    Result,
    State,
    Termination,
    play_turn,
    read_moves,
    replay,
    split_turns,
    write_moves,
)
from tests.engine.helpers import REAL_GAMES, B, W, legal
from tests.engine.positions import CASE_1, CASE_2, CASE_3, WALLED_IN

GAMES = sorted(p.name.removesuffix(".long.txt") for p in REAL_GAMES.glob("*.long.txt"))

# As the sites recorded them (REAL_GAMES/README.md): winner, how, rings removed (white, black).
RESULTS = {
    "Y-BestBot-BOkpc-2026-03-13-1856": (W, "resign", None),
    "Y-BraveCombo-Dumbot-2026-03-20-0237": (B, "rows", (2, 3)),
    "Y-DrMih-Dumbot-2026-02-20-0858": (B, "rows", (2, 3)),
    "Y-DrMih-Dumbot-2026-02-23-1415": (W, "rows", (3, 1)),
    "Y-phiulbrich-BestBot-2026-03-21-2221": (B, "resign", None),
    "bga_862307561": (B, "rows", (2, 3)),
}


def text_of(game: str, form: str) -> str:
    return (REAL_GAMES / f"{game}.{form}.txt").read_text()


# ------------------------------------------------------------------------ real games


def test_all_six_real_games_are_here():
    assert sorted(RESULTS) == GAMES


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("form", ["long", "short"])
def test_real_game_replays_legally_with_the_recorded_result(game, form):
    moves = read_moves(text_of(game, form))
    s = moves.state
    winner, how, removed = RESULTS[game]
    if how == "resign":
        assert moves.resigned == winner.other
        assert not s.is_over()
    else:
        assert moves.resigned is None
        assert s.outcome.termination is Termination.ROWS
        assert s.outcome.winner == winner
        assert tuple(s.removed) == removed


@pytest.mark.parametrize("game", GAMES)
def test_real_game_long_and_short_forms_are_the_same_game(game):
    long = read_moves(text_of(game, "long")).state.history
    short = read_moves(text_of(game, "short")).state.history
    assert long == short


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("form", ["long", "short"])
def test_real_game_is_rewritten_byte_for_byte(game, form):
    text = text_of(game, form)
    moves = read_moves(text)
    written = write_moves(moves.state.history, long=form == "long")
    if moves.resigned is not None:
        written += f" {len(split_turns(moves.state.history)) + 1}.resign"
    assert written + "\n" == text


def test_a_real_game_ends_on_a_removal():
    s = replay(text_of("bga_862307561", "long"))
    assert s.history[-2:] == [Action.parse("xd6-h10"), Action.parse("xf10")]
    assert write_moves(s.history).endswith(" 70.h10-f10;xd6-h10xf10")
    assert write_moves(s.history, long=False).endswith(" 70.h10-f10;xf10")


def test_the_short_form_names_a_row_when_a_run_of_six_leaves_a_choice():
    text = text_of("Y-BraveCombo-Dumbot-2026-03-20-0237", "short")
    assert " 58.f5-f9;xf4-f8xc7 " in text
    cut = text.replace("58.f5-f9;xf4-f8xc7", "58.f5-f9;xc7")
    with pytest.raises(NotationError, match="ambiguous") as e:
        replay(cut)
    assert e.value.number == 58 and e.value.token == "58.f5-f9;xc7"
    assert "f3-f7, f4-f8" in str(e.value)
    assert "next=remove-row turn=b" in e.value.position


# ------------------------------------------------------------------------ notation.txt examples


def test_placing_and_moving_as_in_diagram_2():
    s = replay("1.e3 2.a5 3.b5 4.c6 5.d6 6.e4 7.h7 8.g2 9.g3 10.g8 11.h7-g7")
    assert s.points(s.rings[W]) == ["b5", "d6", "e3", "g3", "g7"]
    assert s.points(s.markers[W]) == ["h7"]
    assert s.turn == B


def test_move_numbers_count_each_players_turns():
    text = "1.e3 2.a5 3.b5 4.c6 5.d6 6.e4 7.h7 8.g2 9.g3 10.g8 11.h7-g7"
    s = replay(text)
    turns = split_turns(s.history)
    assert len(turns) == 11
    assert write_moves(s.history) == text


@pytest.mark.parametrize(
    ("game", "short", "long"),
    [
        (CASE_1, "23.i8-f5;xa5;xg2", "23.i8-f5;xc6-g6xa5;xh7-h11xg2"),
        (CASE_2, "23.xa5;i8-f5;xg2", "23.xh7-h11xa5;i8-f5;xc6-g6xg2"),
        (CASE_3, "23.xa5;xg2;i8-f5", "23.xg3-g7xa5;xh7-h11xg2;i8-f5"),
    ],
    ids=["two rows by one move", "one row each side of the move", "two rows before the move"],
)
def test_notation_examples_of_several_rows_read_and_write_in_both_forms(game, short, long):
    # The examples of notation.txt, section 5, in games built to reach them (positions.py). The
    # complete forms printed there (rows g5-g9 and a5-e5 with the ring a5) cannot both happen
    # on a board, so these games remove other rows with the same rings.
    for text in (f"{game} {short}", f"{game} {long}"):
        s = replay(text)
        assert s.removed == [2, 0]
        assert (s.turn, s.next) == (B, Phase.MOVE)
        assert write_moves(s.history, long=False) == f"{game} {short}"
        assert write_moves(s.history) == f"{game} {long}"
        assert len(split_turns(s.history)) == 23


def test_a_turn_starts_with_the_removal_of_a_row_made_by_the_opponent():
    s = replay(f"{CASE_2} 23.xa5;i8-f5;xg2")
    turn = split_turns(s.history)[-1]
    assert [a.kind for a in turn] == [
        Kind.REMOVE_ROW,
        Kind.REMOVE_RING,
        Kind.MOVE,
        Kind.REMOVE_ROW,
        Kind.REMOVE_RING,
    ]


def test_separate_rows_in_the_short_form_are_read_in_notation_order():
    # Engine convention: when every possible row is separate from the others, all must go, so
    # "xa5" takes the first in notation order (c6-g6) and "xg2" the next.
    s = replay(f"{CASE_1} 23.i8-f5;xa5;xg2")
    assert [str(a) for a in s.history[-4:]] == ["xc6-g6", "xa5", "xh7-h11", "xg2"]


def test_the_short_form_names_a_separate_row_taken_out_of_notation_order():
    s = replay(f"{CASE_1} 23.i8-f5;xh7-h11xa5;xc6-g6xg2")
    assert write_moves(s.history, long=False).endswith(" 23.i8-f5;xh7-h11xa5;xg2")
    assert replay(write_moves(s.history, long=False)).history == s.history


def test_upper_case_and_a_space_after_the_number_read_the_same():
    a = replay(f"{CASE_1} 23.i8-f5;xa5;xg2")
    b = replay(f"{CASE_1} 23. I8-F5;XA5;XG2".upper())
    c = replay(re.sub(r"(\d+)\.", r"\1. ", f"{CASE_1} 23.i8-f5;xc6-g6xa5;xh7-h11xg2"))
    assert a.history == b.history == c.history


def test_move_numbers_may_be_left_out():
    numbered = replay("1.e3 2.a5 3.b5 4.c6 5.d6 6.e4 7.h7 8.g2 9.g3 10.g8 11.h7-g7")
    bare = replay("e3 a5 b5 c6 d6 e4 h7 g2 g3 g8 h7-g7")
    assert bare.history == numbered.history


def test_a_pass_is_written_and_read_as_the_token_pass():
    s = replay(WALLED_IN)
    assert legal(s) == ["pass"]
    s.play("pass")
    s.play("i4-j5")  # black keeps white walled in
    assert legal(s) == ["pass"]
    s.play("pass")
    text = write_moves(s.history)
    assert text.endswith(" 52.i7-i4 53.pass 54.i4-j5 55.pass")
    assert write_moves(s.history, long=False) == text
    assert replay(text).history == s.history
    assert replay(text.upper()).history[-1] == PASS


# ------------------------------------------------------------------------ errors

OPENING = "1.e3 2.a5 3.b5 4.c6 5.d6 6.e4 7.h7 8.g2 9.g3 10.g8"


def error(text: str, **kw) -> NotationError:
    with pytest.raises(NotationError) as e:
        read_moves(text, **kw)
    return e.value


def assert_names(e: NotationError, token: str, number: int, position: str = "next="):
    assert e.token == token and e.number == number
    assert position in e.position
    text = str(e)
    assert f"move {number}" in text and repr(token) in text and f"(position: {e.position})" in text


def test_error_bad_token():
    e = error(f"{OPENING} 11.h7+g7")
    assert_names(e, "11.h7+g7", 11, "next=move turn=w")
    assert "h7+g7" in str(e)


def test_error_illegal_move():
    e = error(f"{OPENING} 11.g8-g9")  # black's ring
    assert_names(e, "11.g8-g9", 11, "next=move turn=w")
    assert "g8-g9 is not legal" in str(e)
    e = error(f"{OPENING} 11.h7-i9")  # not a line
    assert_names(e, "11.h7-i9", 11, "next=move turn=w")
    assert "h7-i9 is not legal: h7 and i9 are not on one line" in str(e)


def test_error_point_off_the_board():
    e = error("1.e3 2.a1")
    assert_names(e, "2.a1", 2, "next=place turn=b wr=e3")
    assert "a1" in str(e) and "not on the YINSH board" in str(e)


def test_error_wrong_move_number():
    e = error("1.e3 3.a5")
    assert_names(e, "3.a5", 2, "wr=e3")
    assert "expected move number 2" in str(e)


def test_error_wrong_parity_a_game_must_start_with_whites_move_1():
    e = error("2.e3")
    assert_names(e, "2.e3", 1, "next=place turn=w")
    assert "expected move number 1" in str(e)


def test_error_move_after_the_end():
    text = text_of("bga_862307561", "long").strip() + " 71.a2-a3"
    e = error(text)
    assert_names(e, "71.a2-a3", 71, "result=black")
    assert "already over" in str(e)


def test_error_incomplete_turn():
    e = error(f"{CASE_1} 23.i8-f5")
    assert_names(e, "23.i8-f5", 23, "next=remove-row turn=w")
    assert "white must still remove a row" in str(e)
    e = error(f"{CASE_1} 23.i8-f5;xa5")
    assert "white must still remove a row" in str(e)
    e = error(f"{CASE_2} 23.xa5")
    assert "white must still move" in str(e)


def test_error_part_after_the_turn_has_ended():
    e = error(f"{OPENING} 11.h7-g7;xa5")
    assert_names(e, "11.h7-g7;xa5", 11, "turn=b")
    assert "after white's turn has ended" in str(e)


def test_error_removal_without_a_row():
    e = error(f"{OPENING} 11.xg2")
    assert_names(e, "11.xg2", 11, "next=move turn=w")
    assert "no row" in str(e)


def test_error_removing_a_ring_of_the_opponent():
    e = error(f"{CASE_1} 23.i8-f5;xc6-g6xd2")
    assert_names(e, "23.i8-f5;xc6-g6xd2", 23, "next=remove-ring")


def test_error_ambiguous_short_removal():
    text = text_of("Y-DrMih-Dumbot-2026-02-20-0858", "short")
    assert text.strip().endswith("46.c5-d5;xc1-c5xf6")
    e = error(text.replace("46.c5-d5;xc1-c5xf6", "46.c5-d5;xf6"))
    assert_names(e, "46.c5-d5;xf6", 46, "next=remove-row turn=b")
    assert "ambiguous" in str(e) and "c1-c5, c2-c6" in str(e)


def test_error_empty_move():
    e = error(f"{OPENING} 11.")
    assert_names(e, "11.", 11, "next=move turn=w")


def test_error_moves_after_a_resignation():
    e = error(f"{OPENING} 11.resign 12.a5-a4")
    assert_names(e, "11.resign", 11, "next=move turn=w")


def test_error_resignation_after_the_end():
    text = text_of("bga_862307561", "long").strip() + " 71.resign"
    e = error(text)
    assert_names(e, "71.resign", 71, "result=black")


def test_replay_refuses_a_resignation_but_read_moves_reports_it():
    text = text_of("Y-BestBot-BOkpc-2026-03-13-1856", "long")
    moves = read_moves(text)
    assert moves.resigned == B and len(split_turns(moves.state.history)) == 11
    with pytest.raises(NotationError, match="resignation") as e:
        replay(text)
    assert_names(e.value, "12.resign", 12, "next=move turn=b")


# ------------------------------------------------------------------------ games cut short


def test_a_game_cut_between_a_row_and_its_ring_writes_the_row_alone():
    s = replay(CASE_1)
    s.play("i8-f5")
    s.play("xc6-g6")
    text = write_moves(s.history, long=False)
    assert text.endswith(" 23.i8-f5;xc6-g6")
    with pytest.raises(NotationError, match="incomplete"):
        read_moves(text)
    assert read_moves(text, unfinished=True).state.history == s.history


def test_only_the_last_turn_may_be_unfinished():
    with pytest.raises(NotationError, match="incomplete"):
        read_moves(f"{CASE_1} 23.i8-f5 24.a2-a3", unfinished=True)


def test_a_finished_game_has_a_result_and_nothing_more_to_play():
    s = replay(text_of("Y-DrMih-Dumbot-2026-02-23-1415", "short"))
    assert s.outcome.result is Result.WHITE
    assert s.legal_actions() == []
    assert State("yinsh").legal_actions() != []


# ------------------------------------------------------------------------ one turn at a time


def test_play_turn_plays_a_whole_turn_with_its_removals():
    s = replay(CASE_2)
    played = play_turn(s, "23.xa5;i8-f5;xg2")
    assert [str(a) for a in played] == ["xh7-h11", "xa5", "i8-f5", "xc6-g6", "xg2"]
    assert s.history[-5:] == played
    assert write_moves(s.history) == write_moves(replay(f"{CASE_2} 23.xa5;i8-f5;xg2").history)


def test_play_turn_is_all_or_nothing_and_checks_the_number():
    s = replay(CASE_1)
    before = s.key()
    with pytest.raises(NotationError, match="incomplete"):
        play_turn(s, "23.i8-f5;xa5")
    assert s.key() == before
    with pytest.raises(NotationError, match="expected move number 23"):
        play_turn(s, "24.i8-f5;xa5;xg2")
    assert s.key() == before
    play_turn(s, "i8-f5;xa5;xg2")  # the number may be left out
    assert s.turn == Color.BLACK


def test_play_turn_refuses_to_start_in_the_middle_of_a_turn():
    s = replay(CASE_1)
    s.play("i8-f5")
    with pytest.raises(NotationError, match="middle of a turn"):
        play_turn(s, "xa5;xg2")
