"""Game-record files (engine/record.py): headers and moves, read back as the same game."""

import enum
import pickle

import pytest

from engine import (
    Forfeit,
    Outcome,
    Record,
    RecordError,
    Result,
    State,
    Termination,
    ending,
    read_moves,
    read_records,
    replay,
    variant,
    write_records,
)
from tests.engine.helpers import REAL_GAMES
from tests.engine.positions import CASE_1

REAL = sorted(p for p in REAL_GAMES.glob("*.txt") if p.name != "README.md")
# Black wins by rows at move 46; and a game in progress.
FINISHED = (REAL_GAMES / "Y-DrMih-Dumbot-2026-02-20-0858.long.txt").read_text().strip()
UNFINISHED = "1.e3 2.a5 3.b5 4.c6 5.d6 6.e4 7.h7 8.g2 9.g3 10.g8 11.h7-g7 12.g8-g9"


def record_text(moves: str, **headers: str) -> str:
    lines = [f'[{k} "{v}"]' for k, v in headers.items()]
    return "\n".join(lines) + "\n\n" + moves + "\n"


# ------------------------------------------------------------------------ reading and writing


@pytest.mark.parametrize("path", REAL, ids=[p.name for p in REAL])
def test_real_games_read_as_records_and_back(path):
    record = Record.parse(path.read_text())
    assert record.variant.name == "yinsh"
    assert record.outcome is not None
    for long in (True, False):
        text = record.to_text(long=long)
        assert Record.parse(text) == record
    assert record.replay().key() == read_moves(path.read_text()).state.key()


def test_a_played_record_pickles_small_and_replays_the_same_game():
    # A worker hands its results to another process pickled: the actions a game played carry
    # their board's tables, which must not go with them.
    record = Record.from_state(read_moves(FINISHED).state)
    assert all(a.data is not None for a in record.actions)
    data = pickle.dumps(record)
    back = pickle.loads(data)
    assert back == record and back.to_text() == record.to_text()
    assert back.replay().key() == record.replay().key()
    assert len(data) < 40 * len(record.actions)


def test_a_record_has_headers_in_a_fixed_order_then_the_moves():
    s = replay(FINISHED)
    record = Record.from_state(
        s, Black="greedy 1.0", White="random 1.0", Date="2026.11.22", Custom="x", Event="test"
    )
    text = record.to_text()
    head, _, body = text.partition("\n\n")
    assert head.splitlines() == [
        '[Event "test"]',
        '[Date "2026.11.22"]',
        '[White "random 1.0"]',
        '[Black "greedy 1.0"]',
        '[Variant "yinsh"]',
        f'[Result "{s.outcome.result.score}"]',
        f'[Termination "{s.outcome.termination.value}"]',
        '[Custom "x"]',
    ]
    assert all(len(line) <= 100 for line in body.splitlines())
    assert " ".join(body.split()) == " ".join(FINISHED.split())
    back = Record.parse(text)
    assert back == record
    assert back.headers == {
        "Black": "greedy 1.0",
        "White": "random 1.0",
        "Date": "2026.11.22",
        "Custom": "x",
        "Event": "test",
    }
    assert back.replay().key() == s.key()


def test_header_values_escape_quotes_and_backslashes():
    s = replay(UNFINISHED)
    record = Record.from_state(s, White='Ann "the bot" \\ v2', Black="\f\u2028odd")
    text = record.to_text()
    assert '[White "Ann \\"the bot\\" \\\\ v2"]' in text
    assert Record.parse(text) == record


def test_a_newline_in_a_header_value_is_written_as_a_space():
    record = Record.from_state(replay(UNFINISHED), Event="two\nlines")
    assert Record.parse(record.to_text()).headers["Event"] == "two lines"


def test_an_unfinished_game_has_result_star_and_no_termination():
    record = Record.from_state(replay(UNFINISHED))
    text = record.to_text()
    assert '[Result "*"]' in text and "Termination" not in text
    assert Record.parse(text).outcome is None


def test_comments_blank_lines_and_windows_line_ends_are_allowed():
    text = '# a comment\r\n[Variant "blitz"]\r\n\r\n1.e3 2.a5\r\n# another\r\n3.b5\r\n'
    record = Record.parse(text)
    assert record.variant is variant("blitz")
    assert [str(a) for a in record.actions] == ["e3", "a5", "b5"]


def test_a_bare_line_of_moves_is_a_record_of_the_default_variant():
    record = Record.parse("1.e3 2.a5", default_variant="yangsh")
    assert record.variant.name == "yangsh" and len(record.actions) == 2


def test_an_empty_game_is_a_record_too():
    record = Record(variant("yangsh7"))
    assert Record.parse(record.to_text()) == record


# ------------------------------------------------------------------------ results and endings


def test_a_record_of_a_game_ended_by_rows_checks_the_result():
    text = record_text(FINISHED, Result="0-1", Termination="rows")
    record = Record.parse(text)
    assert record.outcome == Outcome(Result.BLACK, Termination.ROWS)
    with pytest.raises(RecordError, match="Result 1-0, but the moves give 0-1"):
        Record.parse(record_text(FINISHED, Result="1-0", Termination="rows"))


def test_a_record_claiming_rows_that_does_not_end_that_way_is_refused():
    with pytest.raises(RecordError, match="Termination rows, but the moves reach an unfinished"):
        Record.parse(record_text(UNFINISHED, Result="1-0", Termination="rows"))
    with pytest.raises(RecordError, match="Termination pool-exhausted, but the moves reach rows"):
        Record.parse(record_text(FINISHED, Result="0-1", Termination="pool-exhausted"))


def test_a_result_without_a_termination_must_be_what_the_moves_give():
    assert Record.parse(record_text(FINISHED, Result="0-1")).outcome.result is Result.BLACK
    with pytest.raises(RecordError, match="unfinished"):
        Record.parse(record_text(UNFINISHED, Result="1-0"))


def test_a_forfeit_with_a_result_is_accepted_with_an_unfinished_last_turn():
    # White ran out of time after removing its first row, before removing a ring.
    moves = f"{CASE_1} 23.i8-f5;xc6-g6"
    record = Record.parse(record_text(moves, Result="0-1", Termination="time"))
    assert record.outcome == Outcome(Result.BLACK, Forfeit("time"))
    assert str(record.actions[-1]) == "xc6-g6"
    assert Record.parse(record.to_text(long=False)) == record
    assert record.to_text().rstrip().endswith("23.i8-f5;xc6-g6")


@pytest.mark.parametrize("termination", ["time", "crash", "illegal-move", "resignation"])
def test_a_forfeit_needs_a_result(termination):
    with pytest.raises(RecordError, match=f"Termination {termination} needs a Result"):
        Record.parse(record_text(UNFINISHED, Termination=termination))


def test_a_forfeit_cannot_follow_moves_that_already_ended_the_game():
    with pytest.raises(RecordError, match="Termination time but the moves end the game by rows"):
        Record.parse(record_text(FINISHED, Result="1-0", Termination="time"))


def test_a_forfeit_may_not_leave_an_earlier_turn_unfinished():
    moves = f"{CASE_1} 23.i8-f5;xc6-g6 24.a2-a3"
    with pytest.raises(RecordError, match="incomplete"):
        Record.parse(record_text(moves, Result="0-1", Termination="time"))


def test_a_resign_token_ends_the_game_for_the_player_to_move():
    text = (REAL_GAMES / "Y-BestBot-BOkpc-2026-03-13-1856.long.txt").read_text()
    record = Record.parse(text)
    assert record.outcome == Outcome(Result.WHITE, Termination.RESIGNATION)
    assert Record.parse(text.replace("\n", "") + "\n").outcome == record.outcome
    # The record writes the resignation as its headers, not as a move.
    assert "resign" not in record.to_text().split("\n\n", 1)[1]
    with pytest.raises(RecordError, match="end in a resignation, but Termination is time"):
        Record.parse(record_text(text.strip(), Result="1-0", Termination="time"))
    with pytest.raises(RecordError, match="Result 0-1, but the moves give 1-0"):
        Record.parse(record_text(text.strip(), Result="0-1"))


def test_a_record_claiming_no_moves_must_end_with_two_passes():
    with pytest.raises(RecordError, match="Termination no-moves, but the moves reach rows"):
        Record.parse(record_text(FINISHED, Result="0-1", Termination="no-moves"))
    with pytest.raises(RecordError, match="Termination no-moves, but the moves reach an unfin"):
        Record.parse(record_text(UNFINISHED, Result="1/2-1/2", Termination="no-moves"))


def test_from_state_takes_a_forfeit_outcome():
    s = replay(UNFINISHED)
    record = Record.from_state(s, Outcome(Result.WHITE, Forfeit("crash")))
    assert Record.parse(record.to_text()) == record


class RefereeEnding(enum.StrEnum):
    """A referee's own endings, as the engine sees them: any enum with ``value`` and
    ``by_rules``."""

    TIME = "time"
    SANDBOX = "sandbox-violation"

    @property
    def by_rules(self) -> bool:
        return False


@pytest.mark.parametrize("ending", list(RefereeEnding))
def test_a_referees_own_ending_is_written_and_read_back_as_a_forfeit_of_that_token(ending):
    s = replay(UNFINISHED)
    record = Record.from_state(s, Outcome(Result.BLACK, ending))
    assert f'[Termination "{ending.value}"]' in record.to_text()
    again = Record.parse(record.to_text())
    assert again.outcome == Outcome(Result.BLACK, Forfeit(ending.value)) == record.outcome
    assert again.outcome is not None and again.outcome.termination.value == ending.value
    assert type(again.outcome.termination) is Forfeit


@pytest.mark.parametrize("token", ["time", "crash", "no-start", "sandbox-violation", "boredom"])
def test_a_termination_the_rules_do_not_define_is_a_forfeit_keeping_its_token(token):
    moves = f"{CASE_1} 23.i8-f5;xc6-g6"
    record = Record.parse(record_text(moves, Result="1-0", Termination=token))
    assert record.outcome == Outcome(Result.WHITE, Forfeit(token))
    assert not record.outcome.termination.by_rules
    assert f'[Termination "{token}"]' in record.to_text()


def test_the_rules_endings_are_never_forfeits():
    assert [t.value for t in Termination] == ["rows", "pool-exhausted", "no-moves", "resignation"]
    assert ending("rows") is Termination.ROWS and ending("resignation") is Termination.RESIGNATION
    with pytest.raises(ValueError, match="an ending of the rules"):
        Forfeit("rows")


# ------------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[Variant "yinsh"\n\n1.e3', 'line 1: not a header line like \\[Name "value"\\]'),
        ("[Variant yinsh]\n\n1.e3", "line 1: not a header line"),
        ('[Variant "yinsh"]\n\n1.e3\n[White "x"]', "line 4: a header after the moves"),
        ('[White "a"]\n[White "b"]\n\n1.e3', "line 2: header White given twice"),
        ('[Variant "chess"]\n\n1.e3', "unknown variant 'chess'"),
        ('[Result "2-0"]\n\n1.e3', "Result must be 1-0, 0-1, 1/2-1/2 or \\*, not '2-0'"),
        ('[Termination "Boredom"]\n\n1.e3', "bad Termination 'Boredom'"),
        ('[Termination "out of time"]\n\n1.e3', "bad Termination 'out of time'"),
        ('[Termination "time-"]\n\n1.e3', "bad Termination 'time-'"),
    ],
)
def test_bad_headers_are_refused_with_the_line(text, message):
    with pytest.raises(RecordError, match=message):
        Record.parse(text)


def test_a_bad_move_names_the_token_the_move_number_and_the_position():
    with pytest.raises(RecordError) as e:
        Record.parse(record_text("1.e3 2.a5 3.e3", Variant="yinsh"))
    text = str(e.value)
    assert (
        "move 3" in text and "'3.e3'" in text and "position: next=place turn=w wr=e3 br=a5" in text
    )


def test_a_yangsh_record_refuses_a_corner():
    with pytest.raises(
        RecordError, match=r"move 1, '1\.a1': a1 is not legal: no ring may be placed on a corner"
    ):
        Record.parse(record_text("1.a1", Variant="yangsh"))


def test_records_of_every_variant_read_back():
    for name in ("yinsh", "blitz", "yangsh", "yangsh7"):
        s = State(name)
        for _ in range(30):
            if s.is_over():
                break
            s.push(sorted(s.legal_actions(), key=str)[0])
        record = Record.from_state(s)
        assert Record.parse(record.to_text()) == record


# ------------------------------------------------------------------------ files of many games


def test_a_file_of_many_games_reads_one_game_after_another():
    finished = Record.parse(FINISHED)
    games = [
        Record.from_state(replay(UNFINISHED), Event="cup", Round="1"),
        finished,
        # Forfeited before the first move: headers only; the next game starts with an Event,
        # a header this one does not have.
        Record(variant("blitz"), [], Outcome(Result.WHITE, ending("crash")), {"Round": "3"}),
        Record(variant("yangsh"), [], None, {"Event": "cup"}),
    ]
    text = write_records(games)
    assert "\n\n[Event" in text and text.count('[Variant "') == 4
    assert list(read_records(text)) == games
    assert list(read_records(write_records(games, long=False))) == games


def test_records_joined_with_blank_lines_or_none_read_as_many_games():
    a = Record.from_state(replay(UNFINISHED), White="a")
    b = Record.parse(FINISHED)
    for sep in ("\n", "", "\n\n# next game\n\n"):
        assert list(read_records(a.to_text() + sep + b.to_text())) == [a, b]
    assert list(read_records("")) == []


def test_headers_split_by_a_blank_line_are_still_one_game():
    text = '[Variant "blitz"]\n\n[White "a"]\n\n1.e3 2.a5\n'
    (game,) = read_records(text)
    assert game == Record.parse(text)
    assert game.variant.name == "blitz" and game.headers == {"White": "a"}


def test_a_file_of_one_game_still_refuses_a_second():
    text = write_records([Record.parse(FINISHED), Record.from_state(replay(UNFINISHED))])
    with pytest.raises(RecordError, match="a header after the moves"):
        Record.parse(text)


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ('[Variant "yinsh"]\n\n1.e3 2.a5 3.e3\n', "game 2, line 10: move 3, '3.e3'"),
        ('[Variant "yinsh"]\n\n1.e3 2.a5\n3.b5 4.c6\n5.b5', "game 2, line 12: move 5, '5.b5'"),
        ('[Variant "yinsh"]\n[White x]\n\n1.e3', "game 2, line 9: not a header line"),
        ('[Variant "chess"]\n\n1.e3', "game 2, line 8: unknown variant 'chess'"),
        ('[Variant "yinsh"]\n[Result "1-0"]\n\n1.e3', "game 2, line 9: Result 1-0, but"),
        ('[White "a"]\n[White "b"]\n\n1.e3', "game 2, line 9: header White given twice"),
    ],
)
def test_an_error_names_the_game_and_the_line(second, message):
    first = Record.from_state(replay(UNFINISHED), White="a", Black="b").to_text()
    assert first.count("\n") == 6  # the second game starts on line 8
    games = read_records(first + "\n" + second)
    assert next(games) == Record.parse(first)  # games are read one at a time
    with pytest.raises(RecordError, match=message) as e:
        next(games)
    assert e.value.game == 2 and e.value.line == int(message.split()[3].rstrip(":"))


def test_a_file_of_one_game_names_the_line_of_a_wrong_result():
    with pytest.raises(RecordError, match=r"^line 2: Result 1-0, but the moves give"):
        Record.parse('[Variant "yinsh"]\n[Result "1-0"]\n\n1.e3')
