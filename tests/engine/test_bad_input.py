"""Any input at all: notation, records, positions and shell commands are read or refused with a
clear ValueError (NotationError, RecordError, InvalidAction, IllegalAction), never anything
else, and a refused input changes nothing."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import (
    Action,
    NotationError,
    Record,
    RecordError,
    State,
    read_moves,
    read_records,
    write_records,
)
from engine.cli import Shell

# Pieces that look like notation, so that the fuzzing reaches the rules, not just the syntax.
_WORDS = st.sampled_from(
    [
        "e3",
        "a5",
        "b5",
        "c6",
        "d6",
        "e4",
        "h7",
        "g2",
        "g3",
        "g8",
        "h7-g7",
        "a2-h9",
        "xc2-c6",
        "xa5",
        "xg5-g9xa5",
        "pass",
        "resign",
        "k7",
        "a1",
        "z9",
        "e5-e5",
        ";",
        "...",
        "x",
        "-",
        "",
    ]
)
_NUMBERED = st.tuples(st.integers(0, 14), st.lists(_WORDS, min_size=1, max_size=3)).map(
    lambda t: f"{t[0]}.{';'.join(t[1])}"
)
_LINES = st.lists(_NUMBERED | _WORDS | st.text(max_size=6), max_size=14).map(" ".join)


@settings(max_examples=300)
@given(text=_LINES, variant=st.sampled_from(["yinsh", "blitz", "yangsh", "yangsh7"]))
def test_any_line_of_moves_is_read_or_refused_with_a_notation_error(text, variant):
    try:
        moves = read_moves(text, variant)
    except NotationError as e:
        assert str(e).startswith("move")  # names the move (or "moves")
    else:
        assert isinstance(moves.state, State)


_HEADER = st.tuples(
    st.sampled_from(["Variant", "Result", "Termination", "White", "Date", "X", "bad name"]),
    st.sampled_from(
        [
            "yinsh",
            "yangsh",
            "1-0",
            "0-1",
            "1/2-1/2",
            "*",
            "rows",
            "time",
            "crash",
            "pool-exhausted",
            'a "quote"',
            "\\",
            "",
        ]
    )
    | st.text(max_size=8),
).map(lambda t: f'[{t[0]} "{t[1]}"]')


@settings(max_examples=300)
@given(headers=st.lists(_HEADER | st.text(max_size=10), max_size=5), moves=_LINES)
def test_any_record_file_is_read_or_refused_with_a_record_error(headers, moves):
    text = "\n".join([*headers, "", moves])
    try:
        record = Record.parse(text)
    except RecordError as e:
        assert str(e)
    else:
        assert Record.parse(record.to_text()) == record
        # A file that reads as one game reads as that game among many too (an empty one, of
        # blank lines and comments only, as no game).
        empty = all(not x.strip() or x.strip().startswith("#") for x in text.split("\n"))
        assert list(read_records(text)) == ([] if empty else [record])
    try:
        records = list(read_records(text))
    except RecordError as e:
        assert str(e).startswith("game ")
    else:
        assert list(read_records(write_records(records))) == records


_COMMANDS = st.sampled_from(
    [
        "new",
        "new yangsh",
        "new chess",
        "play",
        "undo",
        "moves",
        "state",
        "perft 1",
        "perft x",
        "json",
        "notation",
        "notation short",
        "notation medium",
        "setpos",
        "setpos w wr=a2",
        "setpos b wr=e5 br=f6 wm=e6",
        "setpos q",
        "quit now",
        "foo",
    ]
)


@settings(max_examples=200)
@given(
    lines=st.lists(
        _COMMANDS
        | st.lists(_WORDS, max_size=4).map(lambda w: "play " + " ".join(w))
        | st.text(max_size=12),
        max_size=12,
    )
)
def test_the_shell_answers_every_line_and_keeps_running(lines):
    shell = Shell()
    for line in lines:
        before = shell.state.key() if line.split()[:1] == ["play"] else None
        answer = shell.handle(line)
        if answer is None:  # quit
            assert line.split()[0].lower() == "quit"
            break
        assert answer and "\n" not in answer
        if answer.startswith("error") and before is not None:
            assert shell.state.key() == before  # a refused play applies nothing


@settings(max_examples=300)
@given(token=st.text(max_size=10) | _WORDS)
def test_any_token_is_an_action_or_a_clear_refusal(token):
    s = State("yinsh")
    try:
        action = s.parse_action(token)
    except ValueError as e:
        assert str(e)
        assert s.key() == State("yinsh").key()
    else:
        assert isinstance(action, Action)
