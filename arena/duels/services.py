"""Tests and challenges: start, count each pair once, stop at a verdict, cancel.

A duel keeps ``DUEL_PARALLEL_PAIRS`` pairs of games in play. Each pair is two matches from one
opening (:func:`arena.games.services.create_pair` with the duel's seed plus the pair's number),
the candidate white in the first. When a match closes, the games app announces it
(:mod:`arena.duels.receivers`) inside the transaction that closed it; :func:`match_closed`
then, with the duel's row locked:

* counts the pair once both of its games finished (a guarded ``UPDATE`` of the pair from
  PLAYING to COUNTED: a pair is counted once, whichever worker closes its last game);
* voids the pair if one of its games was aborted (its other game is cancelled; another pair
  replaces it);
* finishes the duel when a sequential test reaches a verdict, the fixed number of games is
  counted, or the budget is spent (games still waiting are cancelled, and
  :data:`arena.duels.signals.duel_finished` is sent);
* otherwise queues new pairs to keep the pairs in play at ``DUEL_PARALLEL_PAIRS``.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import F, Max, Q, QuerySet
from django.utils import timezone

from arena import stats
from arena.bots import services as bots
from arena.bots.models import Bot, BotVersion, Variant
from arena.core import throttles
from arena.core.errors import Refused
from arena.duels.models import Duel, DuelPair
from arena.duels.signals import duel_finished
from arena.games.models import Match
from arena.games.services import create_pair, queue_pending
from arena.jobs.limits import match_time_control
from arena.notifications.models import Event
from arena.notifications.services import notify
from arena.referee.jsontypes import JSONObject

M = Match.Status
DS = Duel.Status
PS = DuelPair.Status
#: Version statuses a duel may use: checked, playing now or retired.
CHECKED = (BotVersion.Status.ACTIVE, BotVersion.Status.RETIRED)
#: Void pairs (a game aborted) a duel may replace, beyond its own number of pairs.
SPARE_PAIRS = 4
#: Tries at a duel's number when others of its kind start at the same moment.
NUMBER_TRIES = 5


class DuelError(Refused, ValueError):
    """Why a test or a challenge cannot start, in a sentence for the user."""


# ----------------------------------------------------------------------------- permissions


def can_cancel(user: User | AnonymousUser, duel: Duel) -> bool:
    """Whether the user may cancel the duel (its creator, staff)."""
    return bool(user.is_authenticated and (user.pk == duel.created_by_id or user.is_staff))


def _recent_challenges(user: User) -> QuerySet[Duel]:
    """The challenges the user started in the last 24 hours."""
    since = timezone.now() - timedelta(days=1)
    return Duel.objects.filter(created_by=user, kind=Duel.Kind.CHALLENGE, created_at__gte=since)


def challenges_today(user: User | AnonymousUser) -> int:
    """Challenges the user started in the last 24 hours."""
    return _recent_challenges(user).count() if isinstance(user, User) else 0


def challenges_left(user: User | AnonymousUser) -> int:
    """Challenges the user may still start today (``ARENA_CHALLENGES_PER_DAY`` a day)."""
    return max(0, settings.CHALLENGES_PER_DAY - challenges_today(user))


def _quota_used(user: User) -> throttles.Throttled:
    """The refusal of a challenge over the day's quota: a 429 whose ``Retry-After`` is when the
    oldest challenge of the last 24 hours turns a day old."""
    oldest = _recent_challenges(user).order_by("created_at").values_list("created_at", flat=True)
    turns = oldest.first()
    wait = (turns + timedelta(days=1) - timezone.now()).total_seconds() if turns else 1.0
    rate = throttles.Rate(settings.CHALLENGES_PER_DAY, 86400)
    return throttles.Throttled("challenge", rate, wait)


# ----------------------------------------------------------------------------- checks


def check_time_control(text: str) -> str:
    """The time control, normalised (:func:`arena.jobs.limits.match_time_control`); a
    :class:`DuelError` says why not."""
    try:
        return match_time_control(text)
    except ValueError as e:
        raise DuelError(str(e)) from None


def playable_versions() -> QuerySet[BotVersion]:
    """The versions that may play tests and challenges: checked (active or retired), of bots
    not withdrawn (what :func:`check_version` asks of each, the variant aside)."""
    return BotVersion.objects.filter(status__in=CHECKED, bot__status=Bot.Status.ACTIVE).exclude(
        bot__kind=Bot.Kind.PERSON
    )


def check_version(version: BotVersion, variant: str, role: str) -> None:
    """A version may play a duel: checked (active or retired), of a bot not withdrawn, and
    playing the variant."""
    if version.status not in CHECKED:
        raise DuelError(
            f"the {role}, {version.label}, is {version.get_status_display()}: only checked "
            "versions (active or retired) can play"
        )
    if version.bot.status != Bot.Status.ACTIVE:
        raise DuelError(f"the {role}, {version.label}, belongs to a withdrawn bot")
    if version.bot.person:
        raise DuelError(
            f"the {role}, {version.label}, is a person: people play bots from the bot's page"
        )
    if not version.plays(variant):
        raise DuelError(
            f"the {role}, {version.label}, does not play {Variant(variant).label}: it plays "
            f"{', '.join(version.variant_titles)}"
        )


def check_games(games: int, most: int) -> int:
    if games < 2 or games % 2 or games > most:
        raise DuelError(f"the number of games must be even, from 2 to {most}, not {games}")
    return games


def _check_common(
    candidate: BotVersion, opponent: BotVersion, variant: str, time_control: str | None
) -> str:
    if variant not in Variant.values:
        raise DuelError(f"unknown variant {variant!r}")
    if candidate.pk == opponent.pk:
        raise DuelError(f"{candidate.label} cannot play itself: choose another version")
    check_version(candidate, variant, "candidate")
    check_version(opponent, variant, "opponent")
    return check_time_control(time_control or settings.DUEL_TIME_CONTROL)


# ----------------------------------------------------------------------------- starting


def start_test(
    user: User | AnonymousUser,
    candidate: BotVersion,
    opponent: BotVersion,
    *,
    variant: str,
    time_control: str | None = None,
    elo0: float = stats.DEFAULT_ELO0,
    elo1: float = stats.DEFAULT_ELO1,
    alpha: float = stats.DEFAULT_ALPHA,
    beta: float = stats.DEFAULT_BETA,
    games: int | None = None,
    max_games: int | None = None,
) -> Duel:
    """Start a test of the user's own ``candidate`` against ``opponent`` (another version of
    theirs, or anyone's checked version): a sequential test with bounds ``[elo0, elo1]`` and a
    budget of ``max_games``, or ``games`` games when given. Unrated."""
    if not user.is_authenticated:
        raise PermissionDenied("log in to start a test")
    if not bots.can_manage(user, candidate.bot):
        raise PermissionDenied(f"{candidate.label} is not yours: test your own versions")
    tc = _check_common(candidate, opponent, variant, time_control)
    most = settings.DUEL_MAX_GAMES
    fields: dict[str, object]
    if games is not None:
        fields = {"games": check_games(games, most), "max_games": games}
    else:
        budget = check_games(max_games if max_games is not None else most, most)
        try:
            stats.bounds(alpha, beta)
        except ValueError as e:
            raise DuelError(str(e)) from None
        if not elo0 < elo1:
            raise DuelError(f"elo0 must be below elo1, not {elo0:g} and {elo1:g}")
        if max(abs(elo0), abs(elo1)) > 1000:
            raise DuelError("the bounds must lie between -1000 and 1000 Elo")
        fields = {"elo0": elo0, "elo1": elo1, "alpha": alpha, "beta": beta, "max_games": budget}
    return _start(Duel.Kind.TEST, user, candidate, opponent, variant, tc, rated=False, **fields)


def start_challenge(
    user: User | AnonymousUser,
    candidate: BotVersion,
    opponent: BotVersion,
    *,
    variant: str,
    games: int,
    time_control: str | None = None,
    rated: bool = False,
) -> Duel:
    """Challenge ``opponent`` (a version of someone else's bot) with the user's own
    ``candidate``: ``games`` games, at most ``ARENA_CHALLENGES_PER_DAY`` challenges a day.

    Rated only when both owners agree: the challenger asks for it (``rated``) and the
    challenged bot accepts rated challenges (:attr:`Bot.rated_challenges`); then its games
    count in the ratings like ladder games. A retired version's rating is frozen: it plays
    unrated challenges only.
    """
    if not user.is_authenticated:
        raise PermissionDenied("log in to challenge a bot")
    if settings.CHALLENGES_PER_DAY <= 0:
        raise PermissionDenied("challenges are turned off on this arena")
    if not bots.can_manage(user, candidate.bot):
        raise PermissionDenied(f"{candidate.label} is not yours: challenge with your own bots")
    if opponent.bot.owner_id == user.pk:
        raise DuelError(
            f"{opponent.bot.name} is your own bot: start a test to play your versions "
            "against each other"
        )
    tc = _check_common(candidate, opponent, variant, time_control)
    check_games(games, settings.CHALLENGE_MAX_GAMES)
    if rated and not opponent.bot.rated_challenges:
        raise DuelError(
            f"{opponent.bot.name} does not accept rated challenges: its owner has not allowed "
            "them; challenge it unrated"
        )
    if rated and (candidate.bot.remote or opponent.bot.remote):
        raise DuelError(
            "a remote bot plays unrated challenges only: the ratings are those of bots in the "
            "sandbox (its limits cannot apply to a program on its owner's machine)"
        )
    retired = [v.label for v in (candidate, opponent) if v.status == BotVersion.Status.RETIRED]
    if rated and retired:
        raise DuelError(
            f"{' and '.join(retired)} retired: a retired version's rating is frozen; "
            "challenge unrated"
        )
    with transaction.atomic():
        # One challenge at a time per user: the quota cannot be passed by racing requests.
        User.objects.select_for_update().filter(pk=user.pk).first()
        if challenges_left(user) <= 0:
            raise _quota_used(user)
        return _start(
            Duel.Kind.CHALLENGE,
            user,
            candidate,
            opponent,
            variant,
            tc,
            rated=rated,
            games=games,
            max_games=games,
        )


def _start(
    kind: str,
    user: User,
    candidate: BotVersion,
    opponent: BotVersion,
    variant: str,
    time_control: str,
    *,
    rated: bool,
    **fields: object,
) -> Duel:
    with throttles.limited(user, kind), transaction.atomic():
        for attempt in range(NUMBER_TRIES):
            try:
                # A savepoint: a number another duel took meanwhile fails only this insert.
                with transaction.atomic():
                    duel = Duel.objects.create(
                        kind=kind,
                        number=next_number(kind),
                        variant=variant,
                        time_control=time_control,
                        created_by=user,
                        candidate=candidate,
                        opponent=opponent,
                        rated=rated,
                        seed=random.randrange(2**30),
                        **fields,
                    )
                break
            except IntegrityError:
                if attempt == NUMBER_TRIES - 1:
                    raise
        _continue(duel)
    return duel


def next_number(kind: str) -> int:
    """The number of the next duel of this kind: one more than the last (tests and challenges
    are numbered apart, from 1). The constraint ``duel_number_unique`` refuses a number two
    duels starting at once both took; :func:`_start` then tries the next."""
    last = Duel.objects.filter(kind=kind).aggregate(last=Max("number"))["last"]
    return (last or 0) + 1


# ----------------------------------------------------------------------------- running


def match_closed(match_id: int) -> None:
    """A match closed (inside the transaction that closed it): if it is a duel's, settle its
    pair and carry the duel on."""
    row = Match.objects.filter(pk=match_id).values_list("duel_id", "round").first()
    duel_id, number = row if row is not None else (None, None)
    if duel_id is None or number is None:
        return
    with transaction.atomic():
        duel = Duel.objects.select_for_update().filter(pk=duel_id).first()
        if duel is None or duel.status != DS.RUNNING:
            return
        _settle_pair(duel, number)
        _continue(duel)


def _settle_pair(duel: Duel, number: int) -> None:
    """Count the pair if both its games finished; void it if one was aborted or cancelled."""
    pair = DuelPair.objects.filter(duel=duel, number=number).first()
    if pair is None or pair.status != PS.PLAYING:
        return
    games = list(Match.objects.filter(duel=duel, round=number).only("status", "result", "white_id"))
    if any(m.status in (M.ABORTED, M.CANCELLED) for m in games):
        if DuelPair.objects.filter(pk=pair.pk, status=PS.PLAYING).update(status=PS.VOID):
            _cancel_open(Match.objects.filter(duel=duel, round=number), timezone.now())
        return
    if len(games) != 2 or any(m.status != M.FINISHED for m in games):
        return
    score = stats.Score()
    for m in games:
        score.add(m.result, "white" if m.white_id == duel.candidate_id else "black")
    wins, draws, losses, points = score.wins, score.draws, score.losses, score.points
    # Exactly once: of two transactions settling the same pair, one changes the row.
    if not DuelPair.objects.filter(pk=pair.pk, status=PS.PLAYING).update(
        status=PS.COUNTED, points=points
    ):
        return
    field = f"p{int(points * 2)}"
    Duel.objects.filter(pk=duel.pk).update(
        wins=F("wins") + wins,
        draws=F("draws") + draws,
        losses=F("losses") + losses,
        **{field: F(field) + 1},
    )
    duel.refresh_from_db()
    if duel.is_sprt:
        assert duel.elo0 is not None and duel.elo1 is not None
        duel.llr = stats.llr_pentanomial(duel.counts, duel.elo0, duel.elo1)
        Duel.objects.filter(pk=duel.pk).update(llr=duel.llr)


def _continue(duel: Duel) -> None:
    """Finish the duel if it is decided or done; else keep its pairs in play."""
    counted = duel.pairs
    target = duel.target_games // 2
    if duel.is_sprt and duel.alpha is not None and duel.beta is not None:
        verdict = stats.verdict(duel.llr, duel.alpha, duel.beta)
        if verdict is not stats.Verdict.NONE:
            _finish(duel, verdict.value)
            return
    if counted >= target:
        _finish(duel, "")
        return
    playing = pairs_in_play(duel)
    room = min(settings.DUEL_PARALLEL_PAIRS - playing, target - counted - playing)
    room = min(room, target + SPARE_PAIRS - duel.pairs_made)
    if room <= 0:
        if playing == 0:  # out of spare pairs: too many games were aborted
            _finish(duel, "")
        return
    new: list[int] = []
    for _ in range(room):
        new.extend(_make_pair(duel))
    queue_pending(new)


def _make_pair(duel: Duel) -> list[int]:
    number = duel.pairs_made
    duel.pairs_made += 1
    Duel.objects.filter(pk=duel.pk).update(pairs_made=F("pairs_made") + 1)
    DuelPair.objects.create(duel=duel, number=number)
    matches = create_pair(
        duel.variant,
        duel.candidate_id,
        duel.opponent_id,
        seed=duel.seed + number,
        kind=Match.Kind.TEST if duel.kind == Duel.Kind.TEST else Match.Kind.CHALLENGE,
        status=M.PENDING,
        time_control=duel.time_control,
        rated=duel.rated,
        duel=duel,
        round=number,
    )
    return [m.pk for m in matches]


def _finish(duel: Duel, verdict: str) -> None:
    now = timezone.now()
    if not Duel.objects.filter(pk=duel.pk, status=DS.RUNNING).update(
        status=DS.FINISHED, verdict=verdict, finished_at=now
    ):
        return
    duel.status, duel.verdict, duel.finished_at = DS.FINISHED, verdict, now
    _stop_games(duel, now)
    announce_finished(duel)
    duel_finished.send(sender=Duel, duel_id=duel.pk)


def announce_finished(duel: Duel) -> None:
    """The "test finished" notification (a test's or a challenge's), to its creator and, for a
    challenge, the challenged bot's owner; sent once the transaction commits."""
    candidate, opponent = duel.candidate, duel.opponent
    subject = f"{duel.title}, {candidate.label} against {opponent.label}, finished"
    score = (
        f"{candidate.label} scored {duel.points:g} of {duel.played} games "
        f"(+{duel.wins} ={duel.draws} -{duel.losses})"
    )
    data: JSONObject = {
        "kind": duel.kind,
        "id": duel.pk,
        "number": duel.number,
        "variant": duel.variant,
        "candidate": candidate.label,
        "opponent": opponent.label,
        "wins": duel.wins,
        "draws": duel.draws,
        "losses": duel.losses,
        "pentanomial": list(duel.counts),
    }
    figures = result(duel)
    if figures is not None:
        verdict = Duel.Verdict(duel.verdict).label if duel.verdict else "no verdict (budget spent)"
        text = (
            f"{verdict}: LLR {figures.llr:.2f} ({figures.lower:.2f}, {figures.upper:.2f}) "
            f"[{figures.elo0:g}, {figures.elo1:g}]. {score}."
        )
        data.update(verdict=duel.verdict, llr=round(figures.llr, 4))
    else:
        text = f"{score}."
    users = [duel.created_by_id]
    if duel.kind == Duel.Kind.CHALLENGE:
        users.append(opponent.bot.owner_id)
    for user_id in dict.fromkeys(users):
        notify(user_id, Event.TEST_FINISHED, subject, text, duel.get_absolute_url(), data=data)


def _stop_games(duel: Duel, now: datetime) -> None:
    """Cancel the duel's games not finished (a running one is stopped by its worker at the
    next heartbeat, its result discarded) and void their pairs."""
    _cancel_open(Match.objects.filter(duel=duel), now)
    DuelPair.objects.filter(duel=duel, status=PS.PLAYING).update(status=PS.VOID)


def _cancel_open(matches: QuerySet[Match], now: datetime) -> None:
    """Cancel these matches where not finished, except those another transaction is closing
    at this moment (their rows are locked: waiting for them, while that transaction waits for
    the duel's row this one holds, would deadlock). Such a game closes as it would have; its
    pair is void or its duel over by then, so it is not counted."""
    ids = list(
        matches.filter(status__in=Match.OPEN_STATUSES)
        .select_for_update(skip_locked=True)
        .values_list("pk", flat=True)
    )
    Match.objects.filter(pk__in=ids, status__in=Match.OPEN_STATUSES).update(
        status=M.CANCELLED, finished_at=now
    )


def cancel(user: User | AnonymousUser, duel: Duel) -> bool:
    """Cancel a running duel (its creator, staff): its games not finished are cancelled; what
    was counted stays. False when it is no longer running."""
    if not can_cancel(user, duel):
        raise PermissionDenied("only the one who started it may cancel it")
    with transaction.atomic():
        if not _cancel(duel):
            return False
    duel.refresh_from_db()
    return True


def _cancel(duel: Duel) -> bool:
    """RUNNING -> CANCELLED, its games not finished cancelled (inside a transaction)."""
    now = timezone.now()
    if not Duel.objects.filter(pk=duel.pk, status=DS.RUNNING).update(
        status=DS.CANCELLED, finished_at=now
    ):
        return False
    _stop_games(duel, now)
    return True


def stop_for_versions(version_ids: list[int]) -> int:
    """Cancel the running duels these versions play (their bot was withdrawn); returns how
    many."""
    stopped = 0
    with transaction.atomic():
        running = Duel.objects.filter(status=DS.RUNNING)
        ids = set(running.filter(candidate__in=version_ids).values_list("pk", flat=True))
        ids |= set(running.filter(opponent__in=version_ids).values_list("pk", flat=True))
        for duel in Duel.objects.filter(pk__in=ids):
            stopped += _cancel(duel)
    return stopped


# ----------------------------------------------------------------------------- reading


def result(duel: Duel) -> stats.SprtResult | None:
    """The sequential test's figures (None for a fixed number of games)."""
    if duel.elo0 is None or duel.elo1 is None or duel.alpha is None or duel.beta is None:
        return None
    return stats.sprt(duel.counts, duel.elo0, duel.elo1, duel.alpha, duel.beta)


def previous_version(version: BotVersion) -> BotVersion | None:
    """The version of the same bot before this one that may play a test (the latest of lower
    number, checked, :func:`playable_versions`): what a new version is usually tested
    against."""
    return (
        playable_versions()
        .filter(bot_id=version.bot_id, number__lt=version.number)
        .order_by("-number")
        .first()
    )


def pairs_in_play(duel: Duel) -> int:
    """Pairs whose games are being played (or waiting)."""
    return DuelPair.objects.filter(duel=duel, status=PS.PLAYING).count()


def involving(user_id: int) -> Q:
    """The tests and challenges that are the user's, as every "mine" list means it: those they
    started and those played by one of their bots (a challenge of their bot by someone else),
    as a filter on :class:`Duel`."""
    return (
        Q(created_by_id=user_id)
        | Q(candidate__bot__owner_id=user_id)
        | Q(opponent__bot__owner_id=user_id)
    )


def duels_of(user: User, kind: str, *, limit: int = 20) -> list[Duel]:
    """The user's latest tests or challenges, newest first (:func:`involving`)."""
    return list(
        Duel.objects.filter(involving(user.pk), kind=kind)
        .select_related("created_by", "candidate__bot", "opponent__bot")
        .order_by("-id")[:limit]
    )
