"""Tournament state transitions (create, release, pause, resume, cancel) and their tables.

All of a tournament's matches are made when it is created, PENDING, in rounds (the circle
method, so that every entrant plays once per round when it can). :func:`release` queues the
next few, keeping ``TOURNAMENT_PARALLEL`` in flight; it runs when the tournament is created or
resumed, and inside the transaction that closes each of its matches (the games app announces
it: :mod:`arena.tournaments.receivers`).
"""

from __future__ import annotations

import io
import json
import random
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeGuard

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from arena import stats
from arena.bots.models import Bot, BotVersion, Variant
from arena.core import throttles
from arena.core.errors import Refused
from arena.games import downloads, privacy
from arena.games.models import Match, MatchRecord
from arena.games.services import opening_for, play_again, queue_pending
from arena.jobs.limits import match_time_control
from arena.notifications.models import Event
from arena.notifications.services import notify
from arena.referee.schedule import leg_seeds, round_robin
from arena.tournaments import limits
from arena.tournaments.models import Entry, Tournament

M = Match.Status
TS = Tournament.Status
_OPEN_MATCHES = (M.PENDING, M.QUEUED, M.RUNNING)


class TournamentError(Refused, ValueError):
    """A tournament that cannot be created as asked; the message says why."""


# ----------------------------------------------------------------------------- permissions


def can_organise(user: User | AnonymousUser) -> TypeGuard[User]:
    """Whether the user may create tournaments (only a user who has logged in may)."""
    if not user.is_authenticated:
        return False
    return bool(settings.OPEN_TOURNAMENTS or user.has_perm("tournaments.organise_tournament"))


def can_control(user: User | AnonymousUser, tournament: Tournament) -> bool:
    """Whether the user may pause, resume or cancel the tournament (its organiser, staff)."""
    return bool(user.is_authenticated and (user.pk == tournament.organiser_id or user.is_staff))


# ----------------------------------------------------------------------------- creating


def check_time_control(text: str) -> str:
    """The time control, normalised (:func:`arena.jobs.limits.match_time_control`); a
    :class:`TournamentError` says why not."""
    try:
        return match_time_control(text)
    except ValueError as e:
        raise TournamentError(str(e)) from None


def create(
    organiser: User | AnonymousUser,
    *,
    name: str,
    variant: str,
    time_control: str,
    games_per_pair: int,
    bots: Sequence[Bot],
    rated: bool | None = None,
) -> Tournament:
    """Create a round robin between the bots' active versions and start it. Every entrant's
    active version must declare the variant (a bot that does not is refused, by name).

    A rated tournament may include only bots that accept rated tournaments
    (:meth:`~arena.bots.models.Bot.accepts_rated_tournaments`: the organiser's own, built-in
    bots, and those whose owner accepts them); any other is refused, by name. ``rated`` None
    (a caller that does not say): rated when every entrant accepts, else unrated.

    The two games of a pair with the colours reversed (cycles ``2k`` and ``2k + 1`` of the
    schedule) share a seed and so an opening (``OPENING_PLIES`` ring placements drawn with
    it); with an odd ``games_per_pair`` the last game of each pair has its own."""
    if not can_organise(organiser):
        raise PermissionDenied("you may not organise tournaments")
    if variant not in Variant.values:
        raise TournamentError(f"unknown variant {variant!r}")
    tc = check_time_control(time_control)
    if not 1 <= games_per_pair <= limits.MAX_GAMES_PER_PAIR:
        raise TournamentError(f"games per pairing must be 1 to {limits.MAX_GAMES_PER_PAIR}")
    if not name.strip():
        raise TournamentError("a tournament needs a name")
    unique = list(dict.fromkeys(bots))
    if not limits.MIN_ENTRANTS <= len(unique) <= limits.MAX_ENTRANTS:
        raise TournamentError(
            f"a tournament needs {limits.MIN_ENTRANTS} to {limits.MAX_ENTRANTS} bots"
        )
    versions = {
        v.bot_id: v
        for v in BotVersion.objects.filter(
            bot__in=unique, status=BotVersion.Status.ACTIVE, bot__status=Bot.Status.ACTIVE
        )
    }
    missing = [b.name for b in unique if b.pk not in versions]
    if missing:
        raise TournamentError(f"no active version: {', '.join(missing)}")
    refused = [versions[b.pk] for b in unique if not versions[b.pk].plays(variant)]
    if refused:
        title = Variant(variant).label
        raise TournamentError(
            f"not playing {title}: "
            + "; ".join(f"{v.label} plays only {', '.join(v.variant_titles)}" for v in refused)
        )
    unwilling = [b.name for b in unique if not b.accepts_rated_tournaments(organiser.pk)]
    if rated is None:
        rated = not unwilling
    elif rated and unwilling:
        raise TournamentError(
            "a rated tournament may include other people's bots only if their owners accept "
            f"rated tournaments; these do not: {', '.join(unwilling)} (make it unrated, or "
            "leave them out)"
        )
    rng = random.Random()
    with throttles.limited(organiser, "tournament"), transaction.atomic():
        t = Tournament.objects.create(
            name=name.strip()[: limits.NAME_MAX_LENGTH],
            organiser=organiser,
            variant=variant,
            time_control=tc,
            games_per_pair=games_per_pair,
            rated=rated,
        )
        entrants = [versions[b.pk] for b in unique]
        Entry.objects.bulk_create(
            Entry(tournament=t, version=v, seed=i + 1) for i, v in enumerate(entrants)
        )
        schedule = round_robin(len(entrants), games_per_pair)
        seeds = leg_seeds(schedule, lambda: rng.randrange(2**31))
        starts = {s: opening_for(variant, s) for s in set(seeds)}
        matches = [
            Match(
                variant=variant,
                kind=Match.Kind.TOURNAMENT,
                status=M.PENDING,
                white=entrants[p.white],
                black=entrants[p.black],
                time_control=tc,
                seed=seed,
                opening=starts[seed],
                rated=rated,
                tournament=t,
                round=p.round,
            )
            for p, seed in zip(schedule, seeds, strict=True)
        ]
        Match.objects.bulk_create(matches, batch_size=1000)
        release(t.pk)
    return t


# ----------------------------------------------------------------------------- running


def release(tournament_id: int) -> int:
    """Queue the next pending matches of a running tournament, up to ``TOURNAMENT_PARALLEL``
    in flight; mark it finished when nothing is left. Returns how many were queued."""
    with transaction.atomic():
        t = Tournament.objects.select_for_update().get(pk=tournament_id)
        if t.status != TS.RUNNING:
            return 0
        matches = Match.objects.filter(tournament_id=tournament_id)
        room = (
            settings.TOURNAMENT_PARALLEL - matches.filter(status__in=[M.QUEUED, M.RUNNING]).count()
        )
        queued = 0
        if room > 0:
            ids = list(
                matches.filter(status=M.PENDING)
                .order_by("round", "pk")
                .values_list("pk", flat=True)[:room]
            )
            queued = queue_pending(ids)
        done = not matches.filter(status__in=_OPEN_MATCHES).exists()
        # Some games aborted (the machine failed them too often): it says so, not "finished".
        end = TS.INCOMPLETE if done and matches.filter(status=M.ABORTED).exists() else TS.FINISHED
        if done and Tournament.objects.filter(pk=tournament_id, status=TS.RUNNING).update(
            status=end, finished_at=timezone.now()
        ):
            t.status = end
            announce_finished(t)
        return queued


def announce_finished(tournament: Tournament) -> None:
    """The "tournament finished" notification, to its organiser and the owners of its
    entrants (each once), with the winner; sent once the transaction commits."""
    table = standings(tournament)
    top = table[0] if table else None
    winner = (
        f"{top.player.version.label} won with {stats.format_points(top.points)} points"
        if top
        else ""
    )
    text = f"{tournament.name} ({tournament.get_variant_display()}) finished"
    text += f": {winner} in {top.games} games." if top else "."
    if tournament.status == TS.INCOMPLETE:
        missing = Match.objects.filter(tournament=tournament, status=M.ABORTED).count()
        text += (
            f" It is incomplete: {missing} game{'s' if missing != 1 else ''} could not be"
            " played (the arena failed them); its organiser may have them played again."
        )
    users = [tournament.organiser_id] + [s.player.version.bot.owner_id for s in table]
    for user_id in dict.fromkeys(users):
        notify(
            user_id,
            Event.TOURNAMENT_FINISHED,
            f"Tournament {tournament.name} finished",
            text,
            tournament.get_absolute_url(),
            data={
                "tournament": tournament.pk,
                "name": tournament.name,
                "variant": tournament.variant,
                "standings": [
                    {"rank": s.rank, "version": s.player.version.label, "points": s.points}
                    for s in table
                ],
            },
        )


def pause(user: User | AnonymousUser, tournament: Tournament) -> bool:
    """RUNNING -> PAUSED; its queued matches go back to pending (running ones finish)."""
    if not can_control(user, tournament):
        raise PermissionDenied("only the organiser may pause the tournament")
    with transaction.atomic():
        if not Tournament.objects.filter(pk=tournament.pk, status=TS.RUNNING).update(
            status=TS.PAUSED
        ):
            return False
        # Their tasks find them PENDING and do nothing.
        Match.objects.filter(tournament=tournament, status=M.QUEUED).update(
            status=M.PENDING, queued_at=None
        )
    return True


def resume(user: User | AnonymousUser, tournament: Tournament) -> bool:
    """PAUSED -> RUNNING, and release matches again."""
    if not can_control(user, tournament):
        raise PermissionDenied("only the organiser may resume the tournament")
    with transaction.atomic():
        if not Tournament.objects.filter(pk=tournament.pk, status=TS.PAUSED).update(
            status=TS.RUNNING
        ):
            return False
        release(tournament.pk)
    return True


def play_missing_again(user: User | AnonymousUser, tournament: Tournament) -> bool:
    """INCOMPLETE -> RUNNING: its aborted games are played again (fresh attempts), and the
    tournament finishes when they do."""
    if not can_control(user, tournament):
        raise PermissionDenied("only the organiser may play the missing games again")
    with transaction.atomic():
        if not Tournament.objects.filter(pk=tournament.pk, status=TS.INCOMPLETE).update(
            status=TS.RUNNING, finished_at=None
        ):
            return False
        play_again(
            Match.objects.filter(tournament=tournament, status=M.ABORTED).values_list(
                "pk", flat=True
            )
        )
        release(tournament.pk)
    return True


def cancel(user: User | AnonymousUser, tournament: Tournament) -> bool:
    """Cancel a running or paused tournament: every match not finished is cancelled (a running
    game is stopped by its worker at the next heartbeat, its result discarded)."""
    if not can_control(user, tournament):
        raise PermissionDenied("only the organiser may cancel the tournament")
    with transaction.atomic():
        if not Tournament.objects.filter(
            pk=tournament.pk, status__in=[TS.RUNNING, TS.PAUSED]
        ).update(status=TS.CANCELLED, finished_at=timezone.now()):
            return False
        Match.objects.filter(tournament=tournament, status__in=_OPEN_MATCHES).update(
            status=M.CANCELLED, finished_at=timezone.now()
        )
    return True


# ----------------------------------------------------------------------------- tables


#: A row of a tournament's standings: the entry is its player.
Standing = stats.Standing[Entry]


@dataclass
class Progress:
    total: int
    finished: int
    running: int
    queued: int
    pending: int
    aborted: int
    cancelled: int

    @property
    def done(self) -> int:
        """The games played to their end: the finished ones. Cancelled and aborted games are
        counted apart, never as done."""
        return self.finished

    @property
    def percent(self) -> float:
        """How much of the tournament was played: finished games in per cent of all."""
        return 100.0 * self.done / self.total if self.total else 100.0

    def summary(self) -> str:
        """``3 of 200 games finished, 197 cancelled``: what is done, then what will never be."""
        apart = [
            f"{n} {what}"
            for n, what in ((self.aborted, "aborted"), (self.cancelled, "cancelled"))
            if n
        ]
        return ", ".join([f"{self.done} of {self.total} games finished", *apart])


def progress(tournament: Tournament) -> Progress:
    counts = dict(
        Match.objects.filter(tournament=tournament)
        .values_list("status")
        .annotate(n=Count("pk"))
        .values_list("status", "n")
    )
    return Progress(
        total=sum(counts.values()),
        finished=counts.get(M.FINISHED, 0),
        running=counts.get(M.RUNNING, 0),
        queued=counts.get(M.QUEUED, 0),
        pending=counts.get(M.PENDING, 0),
        aborted=counts.get(M.ABORTED, 0),
        cancelled=counts.get(M.CANCELLED, 0),
    )


def standings(tournament: Tournament) -> list[Standing]:
    """Points table, best first: points, then Sonneborn-Berger, then wins, then seed
    (:func:`arena.stats.standings`). Each row also has its score against each other entry
    (``against``)."""
    entries = list(tournament.entries.select_related("version__bot__owner").order_by("seed"))
    by_version = {e.version_id: e for e in entries}
    grouped = (
        Match.objects.filter(tournament=tournament, status=M.FINISHED)
        .values_list("white_id", "black_id", "result")
        .annotate(n=Count("pk"))
        .order_by()
    )
    return stats.standings(
        entries, [(by_version[w], by_version[b], result, n) for w, b, result, n in grouped]
    )


def crosstable(table: list[Standing]) -> list[tuple[Standing, list[str]]]:
    """Each standing with its row of cells against the others, in standings order:
    ``"1.5/2"``, ``""`` when they have not played, ``"x"`` on the diagonal
    (:func:`arena.stats.cross_table`)."""
    return stats.cross_table(table)


# ----------------------------------------------------------------------------- archive


def archive(tournament: Tournament, user: privacy.Viewer = None) -> bytes:
    """Every finished game of the tournament in one zip: the records (long and short form),
    the transcripts, all games in one file, and the standings.

    The transcripts are as ``user`` may read them (:func:`arena.games.privacy.transcript_for`):
    the stderr and ``info`` of their own bots only; None (anyone) sees no bot's."""
    slug = re.sub(r"[^a-z0-9]+", "-", tournament.name.lower()).strip("-") or "tournament"
    top = f"tournament-{tournament.pk}-{slug}"
    buf = io.BytesIO()
    table = standings(tournament)
    records = (
        MatchRecord.objects.filter(match__tournament=tournament, match__status=M.FINISHED)
        .select_related("match__white__bot", "match__black__bot")
        .order_by("match__round", "match__pk")
    )
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        everything = []
        for rec in records.iterator(chunk_size=200):
            name = f"round-{rec.match.round:03d}-match-{rec.match_id}"
            zf.writestr(f"{top}/records/{name}.txt", rec.record)
            zf.writestr(f"{top}/records-short/{name}.txt", rec.record_short)
            zf.writestr(
                f"{top}/transcripts/{name}.json",
                json.dumps(
                    privacy.transcript_for(user, rec.match, rec.transcript),
                    indent=1,
                    ensure_ascii=False,
                ),
            )
            everything.append(rec.record)
        zf.writestr(f"{top}/all-games.txt", "".join(downloads.games_file(everything)))
        zf.writestr(f"{top}/standings.txt", standings_text(tournament, table))
    return buf.getvalue()


def standings_text(tournament: Tournament, table: list[Standing]) -> str:
    p = progress(tournament)
    title = (
        f"{tournament.name} ({tournament.get_variant_display()}, {tournament.time_control}, "
        f"{tournament.games_per_pair} games per pairing): {p.summary()}"
    )
    return f"{title}\n\n{stats.standings_text(table, lambda e: e.version.label)}\n"
