"""Remote bots: players whose program runs on their owner's machine and whose lines travel over
HTTP (docs/protocol.md, "Remote bots").

The referee talks to a remote side through a :class:`RemoteTransport`, as it talks to a
sandboxed bot through a pipe. The relay is the database, so that it works on the embedded
defaults (SQLite, the file broker) as on PostgreSQL, with no broker of its own:

* ``send(line)`` adds a :class:`~arena.games.models.RemoteLine` to the side's
  :class:`~arena.games.models.RemoteGame`;
* the bot's client, connecting out from its owner's machine, asks for work
  (:func:`pending`, a long poll), is given the newest unanswered line of each open game, and
  answers it (:func:`answer`), or forwards its program's standard error (:func:`add_log`);
* ``receive(deadline)`` looks for the answer every :data:`POLL_S` until the deadline.

The referee judges the answer as it judges a piped bot's line: an answer that is not a
protocol line, or an illegal action, loses as it would. A client that never connects loses by
"no start" when the start-up timeout passes; one that stops answering, on time. Time counts
from the moment the referee sends a line to the moment it sees the answer; the side's move
overhead is ``ARENA_REMOTE_LATENCY_MS`` instead of the pipes' (``Referee.play``'s
``overhead_ms``).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from arena.bots.models import Bot
from arena.core.errors import Refused
from arena.games.models import Match, RemoteGame, RemoteLine
from arena.referee.transport import Cancelled, Closed, LineTooLong, Timeout, ViolationLike

__all__ = [
    "LINE_LIMIT",
    "LOG_LIMIT",
    "POLL_S",
    "NotWaiting",
    "Pending",
    "RemoteError",
    "RemoteTransport",
    "UnknownGame",
    "add_log",
    "answer",
    "pending",
]

#: How often a waiting side (the referee, a client's long poll) looks at the database, seconds.
POLL_S = 0.05
#: The longest line a client may answer (longer is refused with a 400; the referee's own cap on
#: a line, which a longer answer breaks as a piped bot's would, is lower).
LINE_LIMIT = 256 * 1024
#: The end of the forwarded standard error a game keeps, in characters.
LOG_LIMIT = 64 * 1024
#: The most one request may forward to the log, in characters.
LOG_REQUEST_LIMIT = 64 * 1024


class RemoteError(Refused):
    """A client's request that cannot be done: a bad answer or log (400)."""


class UnknownGame(RemoteError):
    """A game the bot does not play (404)."""

    status = 404


class NotWaiting(RemoteError):
    """An answer to a line no longer waiting: answered already, a newer one sent, or the game
    over (409)."""

    status = 409


# ----------------------------------------------------------------------------- the referee's side


class RemoteTransport:
    """The referee's connection to one remote side of a game (the ``Transport`` protocol of
    :mod:`arena.referee.match`). Made on the worker, in the game's own thread."""

    def __init__(
        self,
        match: Match,
        attempt: int,
        color: str,
        bot_id: int,
        *,
        line_limit: int,
        cancel: threading.Event | None = None,
    ) -> None:
        self.game = RemoteGame.objects.create(
            match=match, attempt=attempt, color=color, bot_id=bot_id
        )
        self.line_limit = line_limit
        self.cancel = cancel
        self._current: int | None = None
        self._input_closed = False
        self._killed = False
        self._stderr_tail = ""
        self._stderr_bytes = 0

    # The standard error the client forwarded.

    @property
    def stderr_bytes(self) -> int:
        return self._stderr_bytes

    @property
    def stderr_tail(self) -> str:
        return self._stderr_tail

    def drain_stderr(self, deadline: float | None = None) -> None:
        row = RemoteGame.objects.filter(pk=self.game.pk).values("stderr_tail", "stderr_bytes")
        for values in row:
            self._stderr_tail = values["stderr_tail"]
            self._stderr_bytes = values["stderr_bytes"]

    # Lines.

    def send(self, data: bytes, deadline: float) -> None:
        if self._killed or self._input_closed:
            raise Closed("the remote game is closed")
        line = RemoteLine.objects.create(game=self.game, line=data.decode("utf-8").rstrip("\n"))
        self._current = line.pk

    def receive(self, deadline: float) -> bytes:
        """The answer to the line last sent, once the client has posted it; ``Timeout`` at the
        deadline. An answer over the line cap is cut there (the referee's ``LineTooLong``
        needs no more than that it has no end)."""
        if self._current is None or self._killed:
            raise Closed("nothing was asked")
        while True:
            if self.cancel is not None and self.cancel.is_set():
                raise Cancelled("cancelled")
            got = RemoteLine.objects.filter(pk=self._current, answer__isnull=False).values_list(
                "answer", flat=True
            )
            for text in got:
                self._current = None
                data = (text or "").encode("utf-8")
                if len(data) > self.line_limit:
                    raise LineTooLong(f"a line over {self.line_limit} bytes")
                return data + b"\n"
            if time.monotonic() >= deadline:
                raise Timeout("no answer before the deadline")
            time.sleep(min(POLL_S, max(0.0, deadline - time.monotonic())))

    def unsolicited(self) -> bytes:
        return b""  # a client answers a line or nothing

    def close_input(self) -> None:
        self._input_closed = True

    # The process: a remote bot has none here. It "exits" once the referee lets it go.

    def wait_exit(self, deadline: float) -> int | None:
        return 0 if (self._input_closed or self._killed) else None

    def poll(self) -> int | None:
        return 0 if (self._input_closed or self._killed) else None

    def pause(self) -> None:
        """Nothing to freeze: its program runs on its owner's machine."""

    def resume(self) -> None:
        """Nothing to thaw (see :meth:`pause`)."""

    def cpu_seconds(self) -> float:
        return 0.0

    def violation(self) -> ViolationLike | None:
        return None

    def setup_failure(self) -> str | None:
        return None

    def kill(self) -> None:
        """Close the game: its client is no longer given it (and stops its program)."""
        if not self._killed:
            self._killed = True
            RemoteGame.objects.filter(pk=self.game.pk, closed_at__isnull=True).update(
                closed_at=timezone.now()
            )


# ----------------------------------------------------------------------------- the client's side


@dataclass(frozen=True)
class Pending:
    """An open game of a remote bot, as its client is told: the newest unanswered line, if
    any (``seq`` answers it)."""

    game: int
    match: int
    color: str
    variant: str
    seq: int | None
    line: str | None

    def to_json(self) -> dict[str, object]:
        return {
            "game": self.game,
            "match": self.match,
            "color": self.color,
            "variant": self.variant,
            "seq": self.seq,
            "line": self.line,
        }


def _open_games(bot: Bot) -> list[Pending]:
    games = list(
        _live(RemoteGame.objects.filter(bot=bot))
        .order_by("pk")
        .values_list("pk", "match_id", "color", "match__variant")
    )
    if not games:
        return []
    waiting: dict[int, tuple[int, str]] = {}
    lines = (
        RemoteLine.objects.filter(game_id__in=[g[0] for g in games], answer__isnull=True)
        .order_by("pk")
        .values_list("game_id", "pk", "line")
    )
    for game_id, pk, line in lines:
        waiting[game_id] = (pk, line)  # the newest unanswered line of each game
    out = []
    for pk, match_id, color, variant in games:
        seq, text = waiting.get(pk, (None, None))
        out.append(Pending(pk, match_id, color, variant, seq, text))
    return out


def pending(bot: Bot, *, since: int, wait_s: float) -> tuple[list[Pending], int]:
    """The bot's open games and their lines waiting for an answer, with the cursor to pass as
    ``since`` next time (the newest line's ``seq``). Waits up to ``wait_s`` seconds (a long
    poll) while no line newer than ``since`` waits. Notes that the bot's client is there
    (:func:`mark_seen`)."""
    mark_seen(bot)
    deadline = time.monotonic() + max(0.0, wait_s)
    while True:
        games = _open_games(bot)
        newest = max((g.seq for g in games if g.seq is not None), default=0)
        if newest > since or time.monotonic() >= deadline:
            return games, max(newest, since)
        time.sleep(POLL_S * 2)


def mark_seen(bot: Bot) -> None:
    """Note that the bot's client asked for work now (:attr:`Bot.seen_at`, which the open
    ladder reads): one guarded ``UPDATE``, written at most every ``REMOTE_SEEN_WRITE_S``."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.REMOTE_SEEN_WRITE_S)
    Bot.objects.filter(Q(seen_at__isnull=True) | Q(seen_at__lt=stale), pk=bot.pk).update(
        seen_at=now
    )


def _live(games: QuerySet[RemoteGame]) -> QuerySet[RemoteGame]:
    """The games still played: open, of the claim that now holds their match (a claim that
    died leaves its games open; the match's next claim makes new ones)."""
    return games.filter(
        closed_at__isnull=True, match__status=Match.Status.RUNNING, match__attempts=F("attempt")
    )


def _game_of(bot: Bot, game_id: int) -> RemoteGame:
    game = RemoteGame.objects.filter(pk=game_id, bot=bot).first()
    if game is None:
        raise UnknownGame(f"{bot.name} plays no game {game_id}")
    return game


def answer(bot: Bot, game_id: int, seq: int, line: str) -> None:
    """Record the client's answer to the line ``seq`` of its game ``game_id``: refused (with
    the status code to send) for another bot's game, a closed game, a line already answered or
    not the one waiting, a line with a line break or over :data:`LINE_LIMIT`."""
    if "\n" in line or "\r" in line:
        raise RemoteError("an answer is one line: no line breaks")
    if len(line) > LINE_LIMIT:
        raise RemoteError(f"an answer is at most {LINE_LIMIT} characters")
    game = _game_of(bot, game_id)
    if not _live(RemoteGame.objects.filter(pk=game.pk)).exists():
        raise NotWaiting(f"game {game_id} is over")
    with transaction.atomic():
        newest = RemoteLine.objects.filter(game=game).order_by("-pk").values_list("pk", flat=True)
        if seq not in newest[:1]:
            raise NotWaiting(f"line {seq} is not the line game {game_id} waits on")
        done = RemoteLine.objects.filter(pk=seq, game=game, answer__isnull=True).update(
            answer=line, answered_at=timezone.now()
        )
    if not done:
        raise NotWaiting(f"line {seq} of game {game_id} was answered already")


def add_log(bot: Bot, game_id: int, text: str) -> None:
    """Add what the client forwarded of its program's standard error (or anything it wants its
    owner to read) to its game: the end of it is kept, :data:`LOG_LIMIT` characters."""
    if len(text) > LOG_REQUEST_LIMIT:
        raise RemoteError(f"a log request holds at most {LOG_REQUEST_LIMIT} characters")
    game = _game_of(bot, game_id)
    with transaction.atomic():
        row = RemoteGame.objects.select_for_update().filter(pk=game.pk).first()
        assert row is not None
        row.stderr_tail = (row.stderr_tail + text)[-LOG_LIMIT:]
        row.stderr_bytes += len(text.encode("utf-8"))
        row.save(update_fields=["stderr_tail", "stderr_bytes"])
