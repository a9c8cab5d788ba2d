"""The streams the site's pages listen to (:mod:`arena.web.streams`).

- A match being played: ``/matches/<id>/live/events`` sends the live feed
  (:func:`arena.games.live.feed`, what ``live.json`` answers) whenever the game moves on: a new
  action, a new claim, the end. Each event's id is ``<claim>.<plies>``; a reconnecting browser
  sends it back and gets only what it lacks. As ``live.json``, it gives a bot's ``info`` only to
  those who may read that bot's logs.
- The pages of things under way (a trial, a test or a challenge, a tournament, a bot whose
  version is being checked): ``.../events`` sends ``changed`` when what the page shows changed,
  and the page fetches itself again (``arena/static/arena/site.js``). What is watched is a
  small signature of the thing (statuses, counts), whose digest is the event's id: the page
  gives its own digest in the stream's address (``?v=``), so a change between the page's
  rendering and the stream's start is not missed. Each stream tells no more than its page: a
  trial's only to those who may see the trial.

A stream whose thing is over, and already shown so, answers 204: the browser then stops
opening it again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

from django.db.models import Count, Max
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    JsonResponse,
)
from django.shortcuts import get_object_or_404
from django.urls import reverse

from arena.admission import trials
from arena.admission.models import Trial
from arena.bots.models import Bot, BotVersion
from arena.duels.models import Duel
from arena.games import live, privacy
from arena.games.models import LiveMove, Match
from arena.tournaments.models import Tournament
from arena.web import streams

__all__ = ["changes_url", "match_events", "thing_events"]

#: What a thing looks like now (a signature whose every change the page shows) and whether it
#: is over; None when there is no such thing (any more).
Look = Callable[[], tuple[object, bool] | None]


# ----------------------------------------------------------------------------- a live match


def match_events(request: HttpRequest, pk: int) -> HttpResponseBase:
    """A match's live feed as a stream: an event ``feed`` (the data of ``live.json``) each time
    the game moves on, from the ply of the last event the browser had (``Last-Event-ID``, else
    ``?since=<claim>.<plies>`` or ``?since=<plies>``)."""
    match = Match.objects.select_related("white__bot", "black__bot").filter(pk=pk).first()
    if match is None:
        return JsonResponse({"error": f"there is no match {pk}"}, status=404)
    text = streams.last_event_id(request, request.GET.get("since", "0"))
    position = _position(text)
    if position is None:
        return JsonResponse(
            {"error": f"since must be <claim>.<plies> or <plies>, not {text[:20]!r}"}, status=400
        )
    logs = privacy.visible_colours(request.user, match)
    return streams.response(_MatchWatch(match, logs, *position))


def _position(text: str) -> tuple[int | None, int] | None:
    """``<claim>.<plies>`` or ``<plies>`` read (None: neither).

    >>> _position("2.14"), _position("7"), _position("x"), _position("-1")
    ((2, 14), (None, 7), None, None)
    """
    claim, _, plies = text.rpartition(".")
    if not (plies.isascii() and plies.isdigit()):
        return None
    if claim and not (claim.isascii() and claim.isdigit()):
        return None
    return (int(claim) if claim else None), int(plies)


class _MatchWatch:
    """A stream's look at a match: its status, its claim and its newest action (two indexed
    queries); when one of them changed, the feed after the ply the watcher has."""

    def __init__(self, match: Match, logs: frozenset[str], claim: int | None, plies: int) -> None:
        self.match = match
        self.logs = logs
        self.claim = claim
        self.plies = plies
        self.seen: tuple[object, ...] | None = None

    def __call__(self) -> tuple[Sequence[streams.Event], bool]:
        row = Match.objects.filter(pk=self.match.pk).values_list("status", "attempts").first()
        if row is None:
            return (), True
        status, claim = row
        newest = LiveMove.objects.filter(match_id=self.match.pk, attempt=claim).aggregate(
            ply=Max("ply")
        )["ply"]
        seen = (status, claim, newest)
        if seen == self.seen:
            return (), False
        self.seen = seen
        match = Match.objects.select_related("white__bot", "black__bot").get(pk=self.match.pk)
        # A game played again starts from its opening for its watchers too.
        since = self.plies if self.claim in (None, match.attempts) else 0
        fed = live.feed(match, since, self.logs)
        self.claim, self.plies = fed["attempt"], fed["plies"]
        event = streams.Event("feed", json.dumps(fed), f"{self.claim}.{self.plies}")
        return (event,), fed["over"]


# ----------------------------------------------------------------------------- pages that change


def _digest(signature: object) -> str:
    return hashlib.blake2b(repr(signature).encode(), digest_size=8).hexdigest()


def _matches(**of: Any) -> list[tuple[str, int]]:
    """How many matches of a tournament or a duel are in each status (one grouped count on an
    indexed foreign key)."""
    rows = Match.objects.filter(**of).values("status").annotate(n=Count("id")).order_by("status")
    return [(row["status"], row["n"]) for row in rows]


def _trial(request: HttpRequest, pk: int) -> Look:
    if not trials.visible(request.user).filter(pk=pk).exists():
        raise Http404(f"you have no trial {pk}")

    def look() -> tuple[object, bool] | None:
        trial = trials.visible(request.user).filter(pk=pk).values_list("status", flat=True)
        status = trial.first()
        if status is None:
            return None
        return status, status not in (Trial.Status.QUEUED, Trial.Status.RUNNING)

    return look


def _duel(kind: str) -> Callable[[HttpRequest, int], Look]:
    def watch(request: HttpRequest, pk: int) -> Look:
        get_object_or_404(Duel, pk=pk, kind=kind)
        fields = ("status", "wins", "draws", "losses", "pairs_made")

        def look() -> tuple[object, bool] | None:
            row = Duel.objects.filter(pk=pk).values_list(*fields).first()
            if row is None:
                return None
            return (row, _matches(duel_id=pk)), row[0] != Duel.Status.RUNNING

        return look

    return watch


#: A tournament's page follows it while it may change: running, or paused (its games under way
#: finish, and its organiser may resume it).
_TOURNAMENT_GOING = (Tournament.Status.RUNNING, Tournament.Status.PAUSED)


def _tournament(request: HttpRequest, pk: int) -> Look:
    get_object_or_404(Tournament, pk=pk)

    def look() -> tuple[object, bool] | None:
        status = Tournament.objects.filter(pk=pk).values_list("status", flat=True).first()
        if status is None:
            return None
        return (status, _matches(tournament_id=pk)), status not in _TOURNAMENT_GOING

    return look


_CHECKING = (BotVersion.Status.PENDING, BotVersion.Status.CHECKING)


def _bot(request: HttpRequest, key: str) -> Look:
    bot = get_object_or_404(Bot, name=key)

    def look() -> tuple[object, bool] | None:
        if not Bot.objects.filter(pk=bot.pk).exists():
            return None
        versions = list(BotVersion.objects.filter(bot=bot).values_list("pk", "status"))
        return sorted(versions), not any(status in _CHECKING for _, status in versions)

    return look


_WATCHES: dict[str, Callable[[HttpRequest, Any], Look]] = {
    "trial": _trial,
    "test": _duel("test"),
    "challenge": _duel("challenge"),
    "tournament": _tournament,
    "bot": _bot,
}


def thing_events(request: HttpRequest, kind: str, key: int | str) -> HttpResponseBase:
    """``changed`` each time what a page of ``kind`` shows changed: from the version the browser
    had (``Last-Event-ID``, else ``?v=``, which the page gave). 404 for what the viewer may not
    see; 204 when the thing is over and the page already shows it so."""
    look = _WATCHES[kind](request, key)
    first = look()
    if first is None:
        raise Http404
    had = streams.last_event_id(request, request.GET.get("v", ""))
    if first[1] and _digest(first[0]) == had:
        return HttpResponse(status=204)
    return streams.response(_ChangeWatch(look, had))


class _ChangeWatch:
    def __init__(self, look: Look, had: str) -> None:
        self.look = look
        self.had = had

    def __call__(self) -> tuple[Sequence[streams.Event], bool]:
        seen = self.look()
        if seen is None:
            return (), True
        signature, over = seen
        digest = _digest(signature)
        if digest == self.had:
            return (), over
        self.had = digest
        return (streams.Event("changed", json.dumps({"over": over}), digest),), over


def changes_url(request: HttpRequest, kind: str, key: int | str) -> str:
    """The address of the stream of a page of ``kind`` (``trial``, ``test``, ``challenge``,
    ``tournament``, ``bot``), with the version the page shows now."""
    seen = _WATCHES[kind](request, key)()
    digest = "" if seen is None else _digest(seen[0])
    return f"{reverse(f'{kind}-events', args=[key])}?v={digest}"
