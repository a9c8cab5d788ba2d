"""Watching a match while it is played: its actions as the referee plays them, and the feed its
page polls.

The worker gives the referee a :class:`Recorder` (``on_played``): each action a bot plays
becomes a :class:`~arena.games.models.LiveMove` row (the action, its think time, both clocks),
written by a thread of the recorder's within ``INTERVAL_S`` seconds, so that the game never
waits for the database. The rows of a claim are its own (``attempt``): a new claim of the match
starts afresh, and :func:`clear` deletes them when the match closes (its record then holds the
game).

:func:`feed` is what ``/matches/<id>/live.json?since=N`` answers: the frames of the replay
widget after ply ``N`` (:func:`arena.replay.replay_frames`), the clocks, and whether the game
is over. Everything in it is public: no bot's ``info``, standard error or failure details,
whoever asks (the finished game's page shows its owner more).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from datetime import UTC, datetime
from typing import TypedDict

from django.db import DatabaseError, connection, connections
from django.utils import timezone

import engine
from arena.games.models import LiveMove, Match, MatchRecord
from arena.referee.game import Played, TimeControl
from arena.replay import Frame, GameData, replay_frames
from arena.worker import ProcessThread

__all__ = ["INTERVAL_S", "Clocks", "Feed", "GameData", "Recorder", "Side", "clear", "feed"]

log = logging.getLogger(__name__)

#: A worker writes a game's new actions at most this often (seconds): how far behind the game
#: a watcher can be, beside the page's polling.
INTERVAL_S = 0.2


class Recorder:
    """Writes the actions of one claim of a match as the referee plays them (``on_played``),
    used as a context manager around the game.

    The rows an earlier claim of the match left are deleted first. In a worker (no transaction
    open) the process's writer thread (:class:`_Writer`, one per process, on a connection of
    its own kept from game to game) writes them at most every ``interval`` seconds from the
    game's start, so that the game never waits for the database and a watcher is at most that
    far behind; what is not yet written when the game ends is dropped (the record replaces it):
    a game over within ``interval`` costs the database nothing here. A caller inside a
    transaction (a test) holds the match where another connection cannot see it: each action
    is then written at once, on the caller's connection.

    Either way the writes skip PostgreSQL's wait for the disk (``synchronous_commit`` off on
    that connection: a crash may lose the last live actions, which the record replaces anyway);
    the result is written after, durably as ever. A database that fails under the recorder
    costs the watchers this game's live view, never the game: the error is logged and the
    recorder stops writing (the writer reconnects for the next game).
    """

    def __init__(self, match_id: int, attempt: int, *, interval: float = INTERVAL_S) -> None:
        self.match_id = match_id
        self.attempt = attempt
        self.interval = interval
        self.failed = False
        self._pending: list[tuple[Played, float]] = []
        self._lock = threading.Lock()
        self._writer: _Writer | None = None
        self._scheduled = False
        self._closed = False
        self._earlier_cleared = False
        self._last = 0.0

    def __enter__(self) -> Recorder:
        if connection.in_atomic_block:
            _session("SET synchronous_commit TO OFF")
        else:
            self._writer = _Writer.of_this_process()
            self._last = time.monotonic()  # the first write comes ``interval`` after the start
        return self

    def __exit__(self, *exc: object) -> None:
        if self._writer is None:
            _session("RESET synchronous_commit")
            return
        with self._lock:
            self._closed = True
            self._pending = []
        self._writer.forget(self)

    def __call__(self, played: Played) -> None:
        # The game's own thread: only the action and its time are kept here, everything else
        # (the row, the SQL) is the writer's. A model instance made here cost the game about
        # 0.1 ms an action.
        if self.failed:
            return
        action = (played, time.time())
        if self._writer is None:
            if not self._earlier_cleared:
                self._earlier_cleared = True
                self._clear_earlier()
            self._write([action])
            return
        with self._lock:
            self._pending.append(action)
            if self._scheduled:
                return
            self._scheduled = True
        self._writer.schedule(self, max(time.monotonic(), self._last + self.interval))

    def _flush(self) -> None:
        """The writer's turn: the earlier claim's rows go (once), then the pending rows."""
        with self._lock:
            rows, self._pending = self._pending, []
            self._scheduled = False
            if self._closed:  # the game is over: its record replaces the live rows
                return
        if not self._earlier_cleared:
            self._earlier_cleared = True
            try:
                self._clear_earlier()
            except DatabaseError as e:
                self._fail(e)
                return
        if rows:
            self._last = time.monotonic()
            self._write(rows)

    def _clear_earlier(self) -> None:
        LiveMove.objects.filter(match_id=self.match_id).exclude(attempt=self.attempt).delete()

    def _write(self, actions: list[tuple[Played, float]]) -> None:
        """Insert these actions, as many a statement as the database takes: a row saved at a
        time held the worker's interpreter lock (and the game's thread waiting for it) for
        about 0.45 ms each."""
        if self.failed:
            return
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
            )
            for played, at in actions
        ]
        step = _rows_a_statement()
        try:
            with connection.cursor() as cursor:
                for start in range(0, len(rows), step):
                    chunk = rows[start : start + step]
                    cursor.execute(_insert_sql(len(chunk)), [v for row in chunk for v in row])
        except DatabaseError as e:
            self._fail(e)

    def _fail(self, e: DatabaseError) -> None:
        self.failed = True
        log.warning("match %s: its live moves are no longer written: %s", self.match_id, e)


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


class _Writer(ProcessThread):
    """The thread that writes the live moves of every recorder of a worker process, each at
    its time, on one connection kept open from game to game (``synchronous_commit`` off): a
    game pays for neither a thread nor a connection of its own. Idle for ``IDLE_CLOSE_S``, it
    closes its connection (a worker with no games holds none)."""

    IDLE_CLOSE_S = 10.0
    kind = "live-moves"

    def __init__(self) -> None:
        super().__init__()
        self._due: list[tuple[float, int, Recorder]] = []
        self._order = itertools.count()
        self._ready = threading.Condition()
        self._fresh = True  # a connection to set up before the next write
        self._letting_go = False
        self._let_go = threading.Event()

    def schedule(self, recorder: Recorder, at: float) -> None:
        with self._ready:
            heapq.heappush(self._due, (at, next(self._order), recorder))
            self._ready.notify()

    def forget(self, recorder: Recorder) -> None:
        """Drop the turns of a recorder whose game is over."""
        with self._ready:
            due = [turn for turn in self._due if turn[2] is not recorder]
            if len(due) != len(self._due):
                heapq.heapify(due)
                self._due = due
                self._ready.notify()

    def let_go(self, timeout: float = 30.0) -> None:
        """Close the connection now (and wait for it), before a database is dropped."""
        with self._ready:
            self._let_go.clear()
            self._letting_go = True
            self._ready.notify()
        self._let_go.wait(timeout)

    def run(self) -> None:
        while True:
            recorder = self._next()
            if recorder is None:  # idle, or asked to let go of the connection
                if not self._fresh:
                    connections.close_all()
                    self._fresh = True
                self._let_go.set()
                continue
            try:
                if self._fresh:
                    _session("SET synchronous_commit TO OFF")
                    self._fresh = False
                recorder._flush()
            except Exception:
                log.exception("match %s: the live moves' writer failed", recorder.match_id)
                recorder.failed = True
            if recorder.failed:  # the database failed it: a new connection for the next
                connections.close_all()
                self._fresh = True

    def _next(self) -> Recorder | None:
        """The next recorder whose turn has come; None when idle or asked to let go."""
        with self._ready:
            while True:
                if self._letting_go:
                    self._letting_go = False
                    return None
                now = time.monotonic()
                if self._due and self._due[0][0] <= now:
                    return heapq.heappop(self._due)[2]
                if self._due:
                    self._ready.wait(self._due[0][0] - now)
                elif not self._ready.wait(self.IDLE_CLOSE_S) and not self._due:
                    return None


def _session(sql: str) -> None:
    """Set up this thread's connection (PostgreSQL only); a failure costs only the setting."""
    if connection.vendor != "postgresql":
        return
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql)
    except DatabaseError as e:
        log.warning("live moves: %s failed: %s", sql, e)


def release_connection() -> None:
    """Have this process's live-moves writer, if it has one, close its database connection
    now (it opens another for the next game): before a test database is dropped."""
    writer = _Writer.existing()
    if writer is not None:
        writer.let_go()


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


def feed(match: Match, since: int = 0) -> Feed:
    """What a watcher of ``match`` is told: the frames after ply ``since``, the clocks, and
    whether the game is over (then its page is the replay).

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
