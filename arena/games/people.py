"""People at the board: a logged-in visitor plays a bot in the browser.

A person plays through the same relay as a remote bot (:mod:`arena.games.remote`): each user
who plays has a seat, a bot of kind :attr:`~arena.bots.models.Bot.Kind.PERSON` that they own
(:func:`arena.bots.services.seat_of`), and the browser is its client: the match page answers
``hello`` and sends the person's actions to the remote API with the session's login. The
referee judges them as any bot's. Games against people are never rated, and a person plays
one game at a time.
"""

from __future__ import annotations

import random

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q, QuerySet

from arena.bots import services as bots
from arena.bots.models import Bot, Variant
from arena.core import throttles
from arena.core.errors import Refused
from arena.games.models import Match
from arena.games.services import queue_pending
from arena.jobs.limits import match_time_control

__all__ = [
    "COLOURS",
    "PeopleError",
    "can_play",
    "games_against_people",
    "games_of",
    "open_game",
    "start",
    "time_controls",
]

#: The colours a person may ask for.
COLOURS = ("white", "black", "random")


class PeopleError(Refused):
    """A game against a bot that cannot start (400): its reason says why."""


def time_controls() -> list[tuple[str, str]]:
    """The time controls a person may choose, as (value, label): ``("300+3", "5 min + 3 s")``."""
    out = []
    for text in settings.PEOPLE_TIME_CONTROLS:
        seconds, _, increment = text.partition("+")
        minutes = float(seconds) / 60
        shown = f"{minutes:g} min" if minutes >= 1 else f"{float(seconds):g} s"
        out.append((text, f"{shown} + {float(increment or 0):g} s"))
    return out


def can_play(user: User | AnonymousUser, bot: Bot) -> bool:
    """Whether ``user`` may play ``bot`` in the browser: logged in, and the bot lets people
    play it (or is the user's own), is active and not a seat."""
    if not user.is_authenticated or bot.person or bot.status != Bot.Status.ACTIVE:
        return False
    return bot.people or bot.owner_id == user.pk


def open_game(user: User) -> Match | None:
    """The user's game against a bot that is not over yet, if any."""
    return (
        Match.objects.filter(
            _seat_plays(user), kind=Match.Kind.PERSON, status__in=Match.OPEN_STATUSES
        )
        .order_by("-pk")
        .first()
    )


def start(
    user: User | AnonymousUser, bot: Bot, *, variant: str, time_control: str, colour: str
) -> Match:
    """Start a game of ``user`` against ``bot``'s active version, unrated, on the remote queue
    (its worker waits in a thread for the person's moves). Refused (:class:`PeopleError`)
    when the bot does not play the variant, the time control or colour is not one offered, or
    the user already plays a game."""
    if not user.is_authenticated:
        raise PermissionDenied("log in to play a bot")
    if not can_play(user, bot):
        raise PermissionDenied(f"{bot.name}'s owner does not let people play it")
    version = bot.active_version
    if version is None:
        raise PeopleError(f"{bot.name} has no active version to play")
    if variant not in Variant.values:
        raise PeopleError(f"unknown variant {variant!r}")
    if not version.plays(variant):
        raise PeopleError(
            f"{bot.name} does not play {Variant(variant).label}: it plays "
            f"{', '.join(version.variant_titles)}"
        )
    if time_control not in settings.PEOPLE_TIME_CONTROLS:
        offered = ", ".join(settings.PEOPLE_TIME_CONTROLS)
        raise PeopleError(f"the time control must be one of {offered}, not {time_control!r}")
    tc = match_time_control(time_control)
    if colour not in COLOURS:
        raise PeopleError(f"the colour must be one of {', '.join(COLOURS)}, not {colour!r}")
    if colour == "random":
        colour = random.choice(("white", "black"))
    with throttles.limited(user, "people"), transaction.atomic():
        User.objects.select_for_update().filter(pk=user.pk).first()  # one game at a time
        if open_game(user) is not None:
            raise PeopleError("you are playing a game already: finish it (or resign) first")
        seat = bots.seat_of(user)
        white, black = (seat, version) if colour == "white" else (version, seat)
        seed = random.randrange(2**30)
        match = Match.objects.create(
            kind=Match.Kind.PERSON,
            variant=variant,
            white=white,
            black=black,
            time_control=tc,
            seed=seed,
            opening="",
            rated=False,
        )
        queue_pending([match.pk])
        match.refresh_from_db(fields=["status", "queued_at"])
    return match


def _seat_plays(user: User) -> Q:
    kind = Bot.Kind.PERSON
    return Q(white__bot__owner=user, white__bot__kind=kind) | Q(
        black__bot__owner=user, black__bot__kind=kind
    )


def games_of(user: User) -> QuerySet[Match]:
    """The user's games against bots, newest first."""
    return Match.objects.filter(_seat_plays(user), kind=Match.Kind.PERSON).order_by("-pk")


def games_against_people(bot: Bot) -> QuerySet[Match]:
    """The bot's games against people, newest first."""
    return Match.objects.filter(
        Q(white__bot=bot) | Q(black__bot=bot), kind=Match.Kind.PERSON
    ).order_by("-pk")
