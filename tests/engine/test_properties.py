"""Properties of the engine over random games of every variant (hypothesis picks the seeds)."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import (
    Action,
    Kind,
    NotationError,
    Outcome,
    Phase,
    Record,
    Result,
    State,
    ending,
    read_moves,
    read_records,
    split_turns,
    variant,
    write_moves,
    write_records,
)
from tests.engine.helpers import VARIANT_NAMES, legal, random_game, snapshot

SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
GAMES = st.tuples(st.integers(0, 2**32 - 1), st.booleans())


def game(name: str, seed_and_seek: tuple[int, bool]) -> State:
    seed, seek_rows = seed_and_seek
    return random_game(name, seed, seek_rows)


def positions(name: str, actions: list[Action]):
    """Every position of a game in turn, as one state stepped forward (yields before each push)."""
    s = State(name)
    for a in actions:
        yield s, a
        s.push(a)
    yield s, None


# ------------------------------------------------------------------------ notation and records


@pytest.mark.parametrize("name", VARIANT_NAMES)
@pytest.mark.parametrize("long", [True, False], ids=["long", "short"])
@SETTINGS
@given(g=GAMES)
def test_writing_a_game_then_reading_it_gives_the_same_actions(name, long, g):
    s = game(name, g)
    text = write_moves(s.history, name, long=long)
    back = read_moves(text, name).state
    assert back.history == s.history
    assert [str(a) for a in back.history] == [str(a) for a in s.history]
    assert back.key() == s.key()
    # Upper case and a space after each move number read the same.
    spaced = re.sub(r"(\d+)\.", r"\1. ", text.upper())
    assert read_moves(spaced, name).state.history == s.history


@pytest.mark.parametrize("name", VARIANT_NAMES)
@SETTINGS
@given(g=GAMES)
def test_short_form_names_a_row_exactly_when_the_reader_needs_it(name, g):
    s = game(name, g)
    text = write_moves(s.history, name, long=False)
    turns = text.split()
    for k, turn in enumerate(turns):
        parts = turn.split(";")
        for j, part in enumerate(parts):
            m = re.fullmatch(r"(\d+\.)?x([a-k]\d+-[a-k]\d+)x([a-k]\d+)", part)
            if not m:
                continue
            # Without the row, the reader must fail or remove a different row.
            parts_without = [*parts[:j], f"{m.group(1) or ''}x{m.group(3)}", *parts[j + 1 :]]
            cut = " ".join([*turns[:k], ";".join(parts_without), *turns[k + 1 :]])
            try:
                other = read_moves(cut, name).state.history
            except NotationError as e:
                assert "ambiguous" in str(e)
            else:
                assert other != s.history
    # And the long form, with every row named, gives the same game.
    assert read_moves(write_moves(s.history, name), name).state.history == s.history


@pytest.mark.parametrize("name", VARIANT_NAMES)
@SETTINGS
@given(g=GAMES, white=st.text(max_size=20), event=st.text(max_size=20))
def test_a_record_reads_back_as_the_same_game(name, g, white, event):
    s = game(name, g)
    # The writer turns a newline in a header into a space (a header is one line); the rest,
    # quotes, backslashes, form feeds and other line separators included, must come back as is.
    white, event = white.replace("\n", " "), event.replace("\n", " ")
    record = Record.from_state(s, White=white, Event=event, Black='a "quoted" \\ name')
    for long in (True, False):
        back = Record.parse(record.to_text(long=long))
        assert back == record
        assert back.replay().key() == s.key()


_VALUES = st.text(max_size=12).map(lambda t: t.replace("\n", " "))
_HEADERS = st.dictionaries(
    st.sampled_from(["Event", "Site", "Date", "Round", "White", "Black", "Custom"]), _VALUES
)
# A game: its variant and seed, where it stops (None: played out; else a share of its turns),
# whether a stopped game was forfeited (else it is unfinished), and its headers.
_FILE_GAMES = st.tuples(
    st.sampled_from(VARIANT_NAMES),
    GAMES,
    st.none() | st.floats(0, 1),
    st.booleans(),
    _HEADERS,
)


def file_game(name, g, stop, forfeit, headers) -> Record:
    s = game(name, g)
    if stop is None:
        return Record.from_state(s, **headers)
    turns = split_turns(s.history, name)
    kept = turns[: int(stop * (len(turns) - 1))]  # never the last turn: the game goes on
    outcome = Outcome(Result.BLACK, ending("crash")) if forfeit else None
    return Record(variant(name), [a for t in kept for a in t], outcome, headers)


@settings(SETTINGS, max_examples=40)
@given(games=st.lists(_FILE_GAMES, max_size=5), long=st.booleans())
def test_a_file_of_many_games_reads_back_as_the_same_games(games, long):
    """parse(write(games)) == games, whatever the games: played out, unfinished, forfeited
    before any move (a game without moves), with any headers."""
    records = [file_game(*g) for g in games]
    text = write_records(records, long=long)
    assert list(read_records(text)) == records
    # Read from an open file's lines as well as from its text.
    assert list(read_records(line + "\n" for line in text.split("\n"))) == records
    if len(records) == 1:
        assert Record.parse(text) == records[0]


@pytest.mark.parametrize("name", VARIANT_NAMES)
@SETTINGS
@given(g=GAMES)
def test_a_game_cut_short_reads_back_up_to_its_last_complete_turn(name, g):
    s = game(name, g)
    turns = split_turns(s.history, name)
    for n in range(len(turns)):
        actions = [a for t in turns[:n] for a in t]
        assert read_moves(write_moves(actions, name), name).state.history == actions


# ------------------------------------------------------------------------ positions


@pytest.mark.parametrize("name", VARIANT_NAMES)
@SETTINGS
@given(g=GAMES)
def test_every_position_survives_a_json_round_trip(name, g):
    s = game(name, g)
    for here, _ in positions(name, s.history):
        text = json.dumps(here.to_json())
        back = State.from_json(text)
        assert back.key() == here.key()
        assert legal(back) == legal(here)
        assert back.to_json() == here.to_json()


@pytest.mark.parametrize("name", VARIANT_NAMES)
@SETTINGS
@given(g=GAMES)
def test_undo_restores_every_position_exactly(name, g):
    s = game(name, g)
    keys = [here.key() for here, _ in positions(name, s.history)]
    replayed = State(name)
    for a in s.history:
        replayed.push(a)
    assert replayed.key() == keys[-1]
    for k in range(len(keys) - 1, 0, -1):
        assert replayed.key() == keys[k]
        replayed.pop()
    assert replayed.key() == State(name).key() == keys[0]
    assert replayed.history == []


@pytest.mark.parametrize("name", VARIANT_NAMES)
@SETTINGS
@given(g=GAMES)
def test_markers_on_the_board_plus_the_pool_stay_constant(name, g):
    s = game(name, g)
    total = variant(name).markers
    rings = variant(name).rings
    for here, _ in positions(name, s.history):
        assert (here.markers[0] | here.markers[1]).bit_count() + here.pool == total
        assert here.markers[0] & here.markers[1] == 0
        assert here.rings[0] & here.rings[1] == 0
        assert (here.rings[0] | here.rings[1]) & (here.markers[0] | here.markers[1]) == 0
        if here.next is not Phase.PLACE:
            for c in (0, 1):
                assert here.rings[c].bit_count() + here.removed[c] == rings


@pytest.mark.parametrize("name", VARIANT_NAMES)
@SETTINGS
@given(g=GAMES)
def test_no_move_lands_on_a_marker_or_jumps_a_ring(name, g):
    s = game(name, g)
    for here, _ in positions(name, s.history):
        geo = here.geometry
        rings = here.rings[0] | here.rings[1]
        markers = here.markers[0] | here.markers[1]
        for a in here.legal_actions():
            if a.kind != Kind.MOVE:
                continue
            src, dst = geo.index[a.a], geo.index[a.b]
            assert (1 << src) & here.rings[here.turn]
            assert not (1 << dst) & (rings | markers), f"{a} lands on a piece"
            path = [i for r in geo.rays[src] if dst in r for i in r[: r.index(dst)]]
            assert not any((1 << i) & rings for i in path), f"{a} jumps a ring"
            # Vacant spaces, then markers, then the landing space: never a gap after a marker.
            occupied = [bool((1 << i) & markers) for i in path]
            assert occupied == sorted(occupied), f"{a} moves on after jumping"


@pytest.mark.parametrize("name", VARIANT_NAMES)
@settings(SETTINGS, max_examples=6)
@given(g=GAMES)
def test_every_legal_action_applies_and_undoes(name, g):
    s = game(name, g)
    for here, _ in positions(name, s.history):
        key = here.key()
        for a in here.legal_actions():
            assert Action.parse(str(a)) == a
            assert here.is_legal(a)
            trial = here.copy()
            assert trial.play(str(a)) == a
            assert trial.history[-1] == a
            here.push(a)
            assert here.key() == trial.key()
            here.pop()
            assert here.key() == key


@pytest.mark.parametrize("name", VARIANT_NAMES)
@SETTINGS
@given(g=GAMES)
def test_copy_is_independent(name, g):
    s = game(name, g)
    for here, a in positions(name, s.history):
        if a is None:
            break
        before = snapshot(here), list(here.history)
        c = here.copy()
        c.push(a)
        assert (snapshot(here), here.history) == before
        assert c.history[:-1] == here.history
        c.pop()
        assert c.key() == here.key()
        bare = here.copy(stack=False)
        assert bare.key() == here.key() and bare.history == []


@pytest.mark.parametrize("name", VARIANT_NAMES)
@SETTINGS
@given(g=GAMES)
def test_a_game_ends_exactly_when_no_action_is_left(name, g):
    s = game(name, g)
    for here, a in positions(name, s.history):
        assert here.is_over() == (a is None)
        assert (here.outcome is not None) == here.is_over()
    assert s.outcome.termination.by_rules
    w, b = s.removed
    need = variant(name).rows_to_win
    if s.outcome.termination.value == "rows":
        assert s.removed[s.outcome.winner] == need
    else:
        assert max(w, b) < need
        expected = "white" if w > b else "black" if b > w else "draw"
        assert s.outcome.result.value == expected


@pytest.mark.parametrize("name", VARIANT_NAMES)
@SETTINGS
@given(g=GAMES)
def test_turns_group_one_players_actions(name, g):
    s = game(name, g)
    turns = split_turns(s.history, name)
    assert [a for t in turns for a in t] == s.history
    replay = State(name)
    for k, turn in enumerate(turns):
        assert replay.turn == k % 2  # White's turns are the odd-numbered ones
        for a in turn:
            assert replay.turn == k % 2
            replay.push(a)
        # A turn holds one placement, ring move or pass; none only if its removals won the game.
        moves = sum(a.kind in (Kind.MOVE, Kind.PLACE, Kind.PASS) for a in turn)
        assert moves == 1 or (moves == 0 and replay.is_over())
