"""Watching a match while it is played: its actions as the referee plays them, and the feed its
page reads (and its event stream pushes: :mod:`arena.web.events`).

Each action a bot plays becomes a :class:`~arena.games.models.LiveMove` row (the action, its
think time, both clocks): the referee reports it (``on_played``) to the worker's sidecar
(:mod:`arena.jobs.sidecar`), which writes it with :class:`Moves` within a tick, so that the
game never waits for the database. The rows of a claim are its own (``attempt``): a new claim
of the match starts afresh, and they are deleted when the match closes (its record then holds
the game).

:func:`feed` is what ``/matches/<id>/live.json?since=N`` answers: the frames of the replay
widget after ply ``N`` (:func:`arena.games.replay.replay_frames`), the clocks, and whether the game
is over. Everything in it is public, but for a bot's ``info``, which is shown to those who may
read that bot's logs (its owner and the operators: ``logs``) as it arrives; never a standard
error or failure details (the finished game's page shows its owner those).
"""

from __future__ import annotations

import time
from collections.abc import Collection
from datetime import UTC, datetime
from typing import TypedDict

from django.db import connection
from django.utils import timezone

import engine
from arena.games.models import LiveMove, Match, MatchRecord
from arena.games.replay import Frame, GameData, replay_frames
from arena.referee.game import Played, TimeControl

__all__ = ["Clocks", "Feed", "GameData", "Moves", "Side", "clear", "feed", "timed"]


class Moves:
    """Writes the actions of one claim of a match, as a sidecar publishes them (a list of
    ``(Played, unix time)``; see :meth:`arena.jobs.sidecar.Tended.note`): one ``INSERT`` for as many
    actions as the database takes. The rows an earlier claim of the match left go first."""

    def __init__(self, match_id: int, attempt: int) -> None:
        self.match_id = match_id
        self.attempt = attempt
        self._earlier_cleared = False

    def __call__(self, actions: list[tuple[Played, float]]) -> None:
        if not self._earlier_cleared:
            LiveMove.objects.filter(match_id=self.match_id).exclude(attempt=self.attempt).delete()
            self._earlier_cleared = True
        ops = connection.ops
        rows = [
            (
                self.match_id,
                self.attempt,
                played.ply,
                played.color,
                played.action,
                None if played.think_ms is None else round(played.think_ms),
                played.clocks_ms[0],
                played.clocks_ms[1],
                played.turn,
                ops.adapt_datetimefield_value(datetime.fromtimestamp(at, UTC)),
                played.info,
            )
            for played, at in actions
        ]
        step = _rows_a_statement()
        with connection.cursor() as cursor:
            for start in range(0, len(rows), step):
                chunk = rows[start : start + step]
                cursor.execute(_insert_sql(len(chunk)), [v for row in chunk for v in row])


def timed(played: Played) -> tuple[Played, float]:
    """An action as the referee reports it (``on_played``), with the time it was played: what
    :class:`Moves` writes."""
    return played, time.time()


_COLUMNS = (
    "match_id",
    "attempt",
    "ply",
    "color",
    "action",
    "think_ms",
    "white_ms",
    "black_ms",
    "turn",
    "at",
    "info",
)


def _insert_sql(rows: int) -> str:
    """``INSERT`` of ``rows`` live moves (the columns of :data:`_COLUMNS`, in that order)."""
    q = connection.ops.quote_name
    one = "(" + ", ".join(["%s"] * len(_COLUMNS)) + ")"
    return (
        f"INSERT INTO {q(LiveMove._meta.db_table)} ({', '.join(q(c) for c in _COLUMNS)}) "
        f"VALUES {', '.join([one] * rows)}"
    )


def _rows_a_statement() -> int:
    """As many rows a statement as the database takes parameters, 500 at most (a long stall of
    the database can leave many waiting)."""
    return min(500, (connection.features.max_query_params or 5000) // len(_COLUMNS))


def clear(match_id: int, attempt: int | None = None) -> None:
    """Delete a match's live moves (it closed: its record, if any, holds the game), or those
    of one claim (which lost the match)."""
    rows = LiveMove.objects.filter(match_id=match_id)
    if attempt is not None:
        rows = rows.filter(attempt=attempt)
    rows.delete()


# ----------------------------------------------------------------------------- the feed


class Side(TypedDict):
    #: What the side's clock holds, in milliseconds, as of its last action.
    ms: int
    #: How long its last action took it (None before it acted, or after a forced pass).
    last_ms: int | None


class Clocks(TypedDict):
    white: Side
    black: Side
    #: Who acts now ("" when nobody does: the game is over or not started).
    turn: str
    #: How long ago the last action was played: the side to act has been thinking that long
    #: (None before the first action of the bots).
    running_ms: int | None


class Feed(TypedDict):
    match: int
    status: str
    over: bool
    #: The claim whose actions these are (a match played again starts from its opening).
    attempt: int
    #: How many actions the game has had so far (its opening's included).
    plies: int
    #: The frames below follow this ply: ``since``, or 0 when the game has fewer actions than
    #: ``since`` (it was started again): the watcher then starts afresh.
    after: int
    frames: list[Frame]
    #: None once the game is over.
    clocks: Clocks | None
    score: str
    termination: str
    #: The replay's board, players and first position, when ``after`` is 0.
    game: GameData | None
    #: The colours whose ``info`` the frames carry (the viewer's bots; none once it is over).
    logs: list[str]


def feed(match: Match, since: int = 0, logs: Collection[str] = ()) -> Feed:
    """What a watcher of ``match`` is told: the frames after ply ``since``, the clocks, and
    whether the game is over (then its page is the replay). The frames of the ``logs`` colours
    (those whose logs the watcher may read: :func:`arena.games.privacy.visible_colours`) carry
    their bot's ``info``.

    ``match`` needs its versions and their bots (``select_related``). Raises ``ValueError``
    for a negative ``since``.
    """
    if since < 0:
        raise ValueError(f"since must be a ply number, 0 or more, not {since}")
    headers = {"White": match.white.label, "Black": match.black.label}
    variant = engine.variant(match.variant)
    rows: list[LiveMove] = []
    record: engine.Record | None = None
    if match.is_over:
        stored = MatchRecord.objects.filter(match=match).only("record").first()
        if stored is not None:
            record = engine.Record.parse(stored.record)
    else:
        rows = list(
            LiveMove.objects.filter(match=match, attempt=match.attempts).order_by("ply")
            if match.status == Match.Status.RUNNING
            else []
        )
    if record is None:
        record = _record(variant, match.opening_actions, rows, headers)
    plies = len(record.actions)
    after = since if since <= plies else 0
    replay = replay_frames(record, after=after)
    frames = replay["frames"]
    shown = [c for c in ("white", "black") if c in logs] if rows else []
    by_ply = {row.ply: row for row in rows}
    for frame in frames:
        row = by_ply.get(frame["n"])
        if row is None:
            continue
        if row.think_ms is not None:
            frame["think_ms"] = row.think_ms
        if row.color in shown and row.info:
            frame["info"] = row.info
    game: GameData | None = None
    if after == 0:
        game = {
            "variant": replay["variant"],
            "title": replay["title"],
            "rings": replay["rings"],
            "rows_to_win": replay["rows_to_win"],
            "board": replay["board"],
            "white": replay["white"],
            "black": replay["black"],
            "initial": replay["initial"],
        }
    return {
        "match": match.pk,
        "status": match.status,
        "over": match.is_over,
        "attempt": match.attempts,
        "plies": plies,
        "after": after,
        "frames": frames,
        "clocks": None if match.is_over else _clocks(match, record, rows),
        "score": match.score,
        "termination": match.termination,
        "game": game,
        "logs": shown,
    }


def _record(
    variant: engine.Variant, opening: list[str], rows: list[LiveMove], headers: dict[str, str]
) -> engine.Record:
    """The game so far: the opening, then the actions recorded in order (up to a gap, or an
    action the rules refuse: neither happens with the referee's rows)."""
    state = engine.State(variant)
    for token in opening:
        state.play(token)
    for row in rows:
        if row.ply != len(state.history) + 1:
            break
        try:
            state.play(row.action)
        except ValueError:
            break
    return engine.Record(variant, list(state.history), None, headers)


def _clocks(match: Match, record: engine.Record, rows: list[LiveMove]) -> Clocks:
    if rows:
        last = rows[-1]
        sides = {"white": last.white_ms, "black": last.black_ms}
        turn = last.turn
        running = None
        if turn:
            running = max(0, round((timezone.now() - last.at).total_seconds() * 1000))
    else:
        initial = TimeControl.parse(match.time_control).initial_ms
        sides = {"white": initial, "black": initial}
        state = record.replay()
        turn = "" if state.is_over() else state.turn.label
        running = None
    thought: dict[str, int | None] = {"white": None, "black": None}
    for row in rows:
        thought[row.color] = row.think_ms
    return {
        "white": {"ms": sides["white"], "last_ms": thought["white"]},
        "black": {"ms": sides["black"], "last_ms": thought["black"]},
        "turn": turn,
        "running_ms": running,
    }
