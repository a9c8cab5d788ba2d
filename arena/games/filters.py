"""Which matches a list shows: one filter for the site's match list and the API's.

A :class:`MatchFilter` names a variant, status, kind, termination, bot, version, tournament
or test/challenge (any of them, all optional); :func:`matches` checks that what it names exists
and returns the matches, newest first. A page's form and the API's serializer check the syntax
(a number, a known choice); :class:`FilterError` names the field whose value names nothing
(a bot that does not exist, a version number without a bot...), for a form error or a 400.

    >>> MatchFilter(bot="alpha", version=2).describe()
    'bot alpha, version 2'
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, cast

from django.db.models import Model, Q, QuerySet

import engine
from arena.bots.models import Bot, BotVersion
from arena.core.errors import Refused
from arena.games.models import Match
from arena.referee.outcomes import Failure

#: Every way a game can end, as ``Match.termination`` stores it: the rules' endings, then the
#: referee's.
TERMINATIONS: tuple[str, ...] = tuple(t.value for t in engine.Termination) + tuple(
    f.value for f in Failure
)


class FilterError(Refused, ValueError):
    """A filter value that names nothing; ``field`` is the parameter's name."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class MatchFilter:
    variant: str = ""
    status: str = ""
    kind: str = ""
    termination: str = ""
    #: A bot's name: its matches as white or black.
    bot: str = ""
    #: A version's number (``2`` for v2) of ``bot``.
    version: int | None = None
    #: A version by its id (the API's ``white_version`` / ``black_version``).
    version_id: int | None = None
    tournament: int | None = None
    #: A test or a challenge.
    duel: int | None = None

    @classmethod
    def of(cls, values: dict[str, object]) -> MatchFilter:
        """From checked values (a form's or a serializer's), ignoring blanks and others."""
        names = {f.name for f in fields(cls)}
        given: dict[str, Any] = {
            k: v for k, v in values.items() if k in names and v not in ("", None)
        }
        return cls(**given)

    def describe(self) -> str:
        """What it selects, in words (empty: everything)."""
        return ", ".join(
            f"{f.name.replace('_', ' ')} {getattr(self, f.name)}"
            for f in fields(self)
            if getattr(self, f.name) not in ("", None)
        )


def matches(f: MatchFilter) -> QuerySet[Match]:
    """The matches ``f`` selects, newest first, with both versions' bots joined.

    Raises :class:`FilterError` when it names a bot, version or tournament that does not
    exist, a termination that is not one, or a version number without its bot.
    """
    qs = Match.objects.select_related("white__bot", "black__bot").order_by("-id")
    for name in ("variant", "status", "kind"):
        value = getattr(f, name)
        if value:
            qs = qs.filter(**{name: value})
    if f.termination:
        if f.termination not in TERMINATIONS:
            raise FilterError(
                "termination",
                f"{f.termination!r} is not a way a game ends; one of {', '.join(TERMINATIONS)}",
            )
        qs = qs.filter(termination=f.termination)
    if f.version is not None and not f.bot:
        raise FilterError("version", "a version number needs its bot: give the bot too")
    if f.bot:
        bot = Bot.objects.filter(name=f.bot).first()
        if bot is None:
            raise FilterError("bot", f"there is no bot named {f.bot!r}")
        if f.version is not None:
            version = BotVersion.objects.filter(bot=bot, number=f.version).first()
            if version is None:
                raise FilterError("version", f"{bot.name} has no version {f.version}")
            qs = qs.filter(Q(white=version) | Q(black=version))
        else:
            qs = qs.filter(Q(white__bot=bot) | Q(black__bot=bot))
    if f.version_id is not None:
        if not BotVersion.objects.filter(pk=f.version_id).exists():
            raise FilterError("version", f"there is no version with id {f.version_id}")
        qs = qs.filter(Q(white_id=f.version_id) | Q(black_id=f.version_id))
    if f.tournament is not None:
        if not _exists("tournament", f.tournament):
            raise FilterError("tournament", f"there is no tournament {f.tournament}")
        qs = qs.filter(tournament_id=f.tournament)
    if f.duel is not None:
        if not _exists("duel", f.duel):
            raise FilterError("duel", f"there is no test or challenge {f.duel}")
        qs = qs.filter(duel_id=f.duel)
    return qs


def _exists(field: str, pk: int) -> bool:
    """Whether the row a match's foreign key ``field`` would point to exists (the apps above
    this one, tournaments and duels, are reached through the key, not imported)."""
    model = cast("type[Model]", Match._meta.get_field(field).related_model)
    return model._default_manager.filter(pk=pk).exists()
