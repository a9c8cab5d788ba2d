"""Scheduled (recurring) tournaments: an organiser's :class:`~arena.tournaments.models.Schedule`
starts a tournament every ``interval_days`` days between the bots whose owners opted in
(:attr:`arena.bots.models.Bot.scheduled_events`).

A periodic task calls :func:`start_due`; each due schedule is claimed by moving its next start
on with a conditional UPDATE (``next_start`` still the one seen), so that two ticks or two
workers start an event once. The next start skips the periods missed while the arena was down:
one event, never a burst of catch-up events. The tournament itself is made by
:func:`arena.tournaments.services.create` from the opted-in bots' active versions that play the
variant at that moment (a rated event only those that accept rated tournaments); what it
refuses (too few entrants, more Swiss rounds than they can play) starts nothing, tells the
organiser and moves on.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from arena.bots.models import Bot, BotVersion, Variant
from arena.core.errors import Refused
from arena.notifications.models import Event
from arena.notifications.services import notify
from arena.referee.jsontypes import JSON
from arena.tournaments import limits, services
from arena.tournaments.models import Schedule, Tournament
from arena.tournaments.services import TournamentError

log = logging.getLogger(__name__)

F = Tournament.Format
SS = Schedule.Status


# ----------------------------------------------------------------------------- permissions


def can_manage(user: User | AnonymousUser, schedule: Schedule) -> bool:
    """Whether the user may change, pause, resume or delete the schedule (its organiser, staff)."""
    return bool(user.is_authenticated and (user.pk == schedule.organiser_id or user.is_staff))


def _require_manager(user: User | AnonymousUser, schedule: Schedule) -> None:
    if not can_manage(user, schedule):
        raise PermissionDenied("only the schedule's organiser may change it")


# ----------------------------------------------------------------------------- checking


def check_interval(days: int) -> int:
    """The interval in days, or a :class:`TournamentError` that says why not."""
    if not limits.MIN_INTERVAL_DAYS <= days <= limits.MAX_INTERVAL_DAYS:
        raise TournamentError(
            f"the interval must be {limits.MIN_INTERVAL_DAYS} to {limits.MAX_INTERVAL_DAYS} days",
            field="interval_days",
        )
    return days


def check_name(name: str) -> str:
    if not name.strip():
        raise TournamentError("a schedule needs a name", field="name")
    return name.strip()[: limits.NAME_MAX_LENGTH]


def _check_format(format: str, games_per_pair: int, rounds: int | None) -> None:
    """What no number of entrants could play is refused now (an unknown format, rounds for
    another format than a Swiss, an odd knockout mini-match...); what depends on how many
    bots enter is checked when an event starts."""
    if not 1 <= games_per_pair <= limits.MAX_GAMES_PER_PAIR:
        raise TournamentError(
            f"games per pairing must be 1 to {limits.MAX_GAMES_PER_PAIR}", field="games_per_pair"
        )
    if format not in F.values:
        known = ", ".join(F.values)
        raise TournamentError(f"unknown format {format!r}; the formats are {known}", field="format")
    if rounds is not None and format != F.SWISS:
        raise TournamentError(f"only a Swiss is given its rounds, not a {format}", field="rounds")
    if rounds is not None and rounds < 1:
        raise TournamentError("a Swiss plays at least one round", field="rounds")
    services.format_spec(format, limits.MAX_ENTRANTS, games_per_pair, rounds)


# ----------------------------------------------------------------------------- the organiser's


def create(
    organiser: User | AnonymousUser,
    *,
    name: str,
    variant: str,
    time_control: str,
    games_per_pair: int,
    first_start: datetime,
    interval_days: int,
    format: str = F.ROUND_ROBIN,
    rounds: int | None = None,
    rated: bool = False,
) -> Schedule:
    """Schedule a recurring tournament (organisers): its first event at ``first_start`` (one
    in the past starts at the next tick), then every ``interval_days`` days. Bad input is
    refused with a :class:`TournamentError` and nothing is saved."""
    if not services.can_organise(organiser):
        raise PermissionDenied("you may not organise tournaments")
    if variant not in Variant.values:
        raise TournamentError(f"unknown variant {variant!r}", field="variant")
    clean = check_name(name)
    tc = services.check_time_control(time_control)
    _check_format(format, games_per_pair, rounds)
    check_interval(interval_days)
    if timezone.is_naive(first_start):
        raise TournamentError("the first start needs a time zone", field="first_start")
    return Schedule.objects.create(
        name=clean,
        organiser=organiser,
        variant=variant,
        time_control=tc,
        format=format,
        games_per_pair=games_per_pair,
        rounds=rounds,
        rated=rated,
        next_start=first_start,
        interval_days=interval_days,
    )


def update(
    user: User | AnonymousUser,
    schedule: Schedule,
    *,
    name: str | None = None,
    interval_days: int | None = None,
    next_start: datetime | None = None,
    status: str | None = None,
) -> Schedule:
    """Rename, change the interval or the next start, pause or resume (its organiser); all
    checked before anything is saved."""
    _require_manager(user, schedule)
    fields: dict[str, object] = {}
    if name is not None:
        fields["name"] = check_name(name)
    if interval_days is not None:
        fields["interval_days"] = check_interval(interval_days)
    if next_start is not None:
        if timezone.is_naive(next_start):
            raise TournamentError("the next start needs a time zone", field="next_start")
        fields["next_start"] = next_start
    if status is not None:
        if status not in SS.values:
            raise TournamentError(
                f"unknown status {status!r}; a schedule is {' or '.join(SS.values)}",
                field="status",
            )
        fields["status"] = status
    for key, value in fields.items():
        setattr(schedule, key, value)
    if fields:
        schedule.save(update_fields=list(fields))
    return schedule


def pause(user: User | AnonymousUser, schedule: Schedule) -> bool:
    """ACTIVE -> PAUSED: no event starts until it is resumed."""
    _require_manager(user, schedule)
    return bool(Schedule.objects.filter(pk=schedule.pk, status=SS.ACTIVE).update(status=SS.PAUSED))


def resume(user: User | AnonymousUser, schedule: Schedule, now: datetime | None = None) -> bool:
    """PAUSED -> ACTIVE. A next start that passed while paused moves on to the first one
    still ahead (the missed ones are skipped, as after downtime)."""
    _require_manager(user, schedule)
    now = now or timezone.now()
    with transaction.atomic():
        s = Schedule.objects.select_for_update().get(pk=schedule.pk)
        if s.status != SS.PAUSED:
            return False
        s.status = SS.ACTIVE
        if s.next_start <= now:
            s.next_start = next_start_after(s.next_start, s.interval_days, now)
        s.save(update_fields=["status", "next_start"])
    return True


def delete(user: User | AnonymousUser, schedule: Schedule) -> None:
    """Delete the schedule (its organiser); the tournaments it started stay."""
    _require_manager(user, schedule)
    schedule.delete()


# ----------------------------------------------------------------------------- entrants


def opted_in(variant: str) -> list[Bot]:
    """The active bots whose owners opted in to scheduled events and whose active version
    plays the variant, by name."""
    versions = BotVersion.objects.filter(
        status=BotVersion.Status.ACTIVE,
        bot__status=Bot.Status.ACTIVE,
        bot__scheduled_events=True,
    ).select_related("bot")
    return sorted((v.bot for v in versions if v.plays(variant)), key=lambda b: b.name)


def entrants(schedule: Schedule) -> list[Bot]:
    """The bots an event of the schedule would take now: the opted-in ones playing its
    variant, and for a rated event only those that accept its organiser's rated tournaments."""
    bots = opted_in(schedule.variant)
    if schedule.rated:
        bots = [b for b in bots if b.accepts_rated_tournaments(schedule.organiser_id)]
    return bots


@dataclass(frozen=True)
class Upcoming:
    """An active schedule as the public list shows it: its next event and how many bots it
    would take now."""

    schedule: Schedule
    entrants: int


def upcoming() -> list[Upcoming]:
    """The active schedules, the soonest first, each with the bots it would take now."""
    rows = list(Schedule.objects.filter(status=SS.ACTIVE).select_related("organiser"))
    by_variant = {v: opted_in(v) for v in {s.variant for s in rows}}
    out = []
    for s in rows:
        bots = by_variant[s.variant]
        if s.rated:
            bots = [b for b in bots if b.accepts_rated_tournaments(s.organiser_id)]
        out.append(Upcoming(s, len(bots)))
    return out


# ----------------------------------------------------------------------------- starting


def next_start_after(start: datetime, interval_days: int, now: datetime) -> datetime:
    """The first of ``start``, ``start + interval``, ``start + 2 * interval``... after
    ``now`` (the periods missed are skipped).

    >>> from datetime import UTC, datetime
    >>> t0 = datetime(2025, 1, 6, 18, tzinfo=UTC)
    >>> next_start_after(t0, 7, datetime(2025, 1, 6, 18, tzinfo=UTC)).date()
    datetime.date(2025, 1, 13)
    >>> next_start_after(t0, 7, datetime(2025, 1, 30, tzinfo=UTC)).date()
    datetime.date(2025, 2, 3)
    """
    step = timedelta(days=interval_days)
    if now < start:
        return start
    return start + step * ((now - start) // step + 1)


def start_due(now: datetime | None = None) -> list[Tournament]:
    """Start the event of every active schedule that is due (the periodic task); returns the
    tournaments started."""
    now = now or timezone.now()
    due = Schedule.objects.filter(status=SS.ACTIVE, next_start__lte=now).values_list(
        "pk", "next_start"
    )
    started = []
    for pk, when in list(due):
        t = start_one(pk, when, now)
        if t is not None:
            started.append(t)
    return started


def start_one(pk: int, due: datetime, now: datetime) -> Tournament | None:
    """Start the schedule's event due at ``due`` unless someone else did: the claim moves the
    next start on only while it is still ``due`` and the schedule active, so of two callers
    that saw it due, one starts it. Returns the tournament, or None when the claim was lost or
    the event could not start (its organiser is told why)."""
    with transaction.atomic():
        s = Schedule.objects.select_related("organiser").filter(pk=pk).first()
        if s is None:
            return None
        following = next_start_after(due, s.interval_days, now)
        if not Schedule.objects.filter(pk=pk, status=SS.ACTIVE, next_start=due).update(
            next_start=following
        ):
            return None
        bots = entrants(s)
        try:
            if len(bots) < limits.MIN_ENTRANTS:
                raise TournamentError(
                    f"it needs at least {limits.MIN_ENTRANTS} bots and {_count(len(bots))} opted in"
                )
            with transaction.atomic():
                t = services.create(
                    s.organiser,
                    name=f"{s.name} {timezone.localtime(due):%Y-%m-%d}",
                    variant=s.variant,
                    time_control=s.time_control,
                    games_per_pair=s.games_per_pair,
                    bots=bots[: limits.MAX_ENTRANTS],
                    rated=s.rated,
                    format=s.format,
                    rounds=s.rounds,
                )
        except (Refused, PermissionDenied) as e:
            _tell_skipped(s, due, following, str(e))
            return None
        s.tournaments.add(t)
        Schedule.objects.filter(pk=pk).update(last_tournament=t)
        announce_started(t, s)
    log.info("schedule %s started tournament %s", pk, t.pk)
    return t


def _count(n: int) -> str:
    return f"{n} bot" if n == 1 else f"{n} bots" if n else "none"


def _tell_skipped(s: Schedule, due: datetime, following: datetime, why: str) -> None:
    when = timezone.localtime(due)
    nxt = timezone.localtime(following)
    notify(
        s.organiser_id,
        Event.SCHEDULE_SKIPPED,
        f"Scheduled tournament {s.name} did not start",
        f"{s.name} ({s.get_variant_display()}, {s.get_format_display()}) was due at "
        f"{when:%Y-%m-%d %H:%M} but did not start: {why}. The next event is due at "
        f"{nxt:%Y-%m-%d %H:%M}.",
        s.get_absolute_url(),
        data={"schedule": s.pk, "name": s.name, "due": due.isoformat(), "reason": why},
    )


def announce_started(tournament: Tournament, schedule: Schedule) -> None:
    """The "scheduled tournament started" notification, to the owner of each entrant (each
    once); sent once the transaction commits."""
    entries = list(tournament.entries.select_related("version__bot").order_by("seed"))
    owners: dict[int, list[str]] = {}
    for e in entries:
        owners.setdefault(e.version.bot.owner_id, []).append(e.version.label)
    for user_id, labels in owners.items():
        notify(
            user_id,
            Event.TOURNAMENT_STARTED,
            f"Tournament {tournament.name} started",
            f"{tournament.name} ({tournament.get_variant_display()}, "
            f"{tournament.get_format_display()}, {len(entries)} bots) started with "
            f"{', '.join(labels)}: your bot{'s' if len(labels) > 1 else ''} opted in to "
            "scheduled events.",
            tournament.get_absolute_url(),
            data={
                "tournament": tournament.pk,
                "schedule": schedule.pk,
                "name": tournament.name,
                "variant": tournament.variant,
                "format": tournament.format,
                "entrants": len(entries),
                "yours": list[JSON](labels),
            },
        )
