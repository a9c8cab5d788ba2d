"""What the site's busier pages show, computed by plain functions of what the URL named and
who asks: a view looks the object up, calls one of these and renders the result; a test calls
them directly. The API uses the same ones where it shows the same thing (a version's
failures), so the two never disagree.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Q, QuerySet
from django.utils.safestring import SafeString

import engine
from arena.bots import services as bots
from arena.bots.models import Bot, BotVersion, Variant
from arena.games import privacy, reliability, seasons
from arena.games.models import Match, MatchRecord, SeasonEntry
from arena.ratings.models import Ladder, Rating, RatingPoint
from arena.referee.jsontypes import JSONObject
from arena.referee.outcomes import COUNTED
from arena.referee.redaction import PlayerLog, player_logs
from arena.web.plots import Series, history_svg

__all__ = [
    "FAILURE_VERSIONS",
    "RECENT",
    "BotPage",
    "MatchPage",
    "PlaySide",
    "VersionRow",
    "bot_page",
    "failures_json",
    "match_page",
    "play_side",
    "turns",
    "version_failures",
]

#: The latest matches a page lists. Every list of matches, on the pages and in the API, is
#: newest first by number (the ``#`` column): the order the games were made in.
RECENT = 20
#: A bot's page shows the failure statistics of its newest this many versions.
FAILURE_VERSIONS = 5

Viewer = User | AnonymousUser


class Page:
    """The figures of a page; a frozen dataclass's fields are its template's names."""

    def context(self) -> dict[str, object]:
        """The fields by name, as the template reads them."""
        return dict(vars(self))


# ----------------------------------------------------------------------------- failures


def version_failures(version: BotVersion, user: Viewer | None) -> list[reliability.VariantFailures]:
    """The version's failures per variant as ``user`` may read them: the reasons in full for
    whoever may read its logs (:func:`arena.games.privacy.may_see_logs`), else in public words.
    """
    private = privacy.may_see_logs(user, version.bot)
    return reliability.version_failures(version, private=private)


def failures_json(rows: list[reliability.VariantFailures]) -> list[JSONObject]:
    """:func:`version_failures` as the API shows it: every kind of failure counted (zeros
    too), the rate to four places, no example reason where there is none."""
    return [
        {
            "variant": row.variant,
            "games": row.games,
            "failures": {k.value: row.failures[k] for k in COUNTED},
            "rate": round(row.rate, 4),
            "recent_games": row.recent_games,
            "recent_failures": row.recent_failed,
            "failing": row.failing,
            "paused": row.paused,
            "reasons": [
                {
                    "kind": g.kind,
                    "text": g.text,
                    "count": g.count,
                    "matches": list(g.matches),
                    "example": g.example or None,
                }
                for g in row.reasons
            ],
            "think_ms": _think_json(row.think),
        }
        for row in rows
    ]


def _think_json(t: reliability.ThinkTimes | None) -> JSONObject | None:
    if t is None:
        return None
    return {
        "moves": t.moves,
        "games": t.games,
        "p50": t.p50,
        "p90": t.p90,
        "p99": t.p99,
        "max": t.max,
    }


# ----------------------------------------------------------------------------- a bot


class VersionRow(NamedTuple):
    """One version on its bot's page."""

    version: BotVersion
    ratings: list[Rating]
    #: Its failures per variant (only the newest :data:`FAILURE_VERSIONS` versions').
    failures: list[reliability.VariantFailures]
    #: Why it was rejected, as the viewer may read it.
    reason: str
    #: Its check's report and stderr tail: for its owner only.
    check: privacy.CheckLogs | None


@dataclass(frozen=True)
class BotPage(Page):
    bot: Bot
    #: The version that plays now, if any.
    active: BotVersion | None
    #: Newest first.
    versions: list[VersionRow]
    #: (version, variant's failures) where the version that plays (the active one of a bot
    #: not withdrawn) fails often: for its owner only.
    failing: list[tuple[BotVersion, reliability.VariantFailures]]
    #: (version, variant's failures) where it is paused from the ladder (its owner may resume
    #: it: a POST to ``version-activate``).
    paused: list[tuple[BotVersion, reliability.VariantFailures]]
    failing_rate: float
    failing_min_games: int
    #: How many of a version's latest games the verdict looks at.
    failing_window: int
    #: A rating-history chart per variant: (the variant's title, the chart).
    charts: list[tuple[str, SafeString]]
    #: The latest :data:`RECENT` matches of any of its versions.
    recent: QuerySet[Match]
    #: Whether the viewer may change the bot (its owner).
    manager: bool
    #: A version is waiting for its check or being checked (the page follows it: its stream).
    checking: bool
    #: Its division in each open season of the ladder, with its standing there so far.
    divisions: list[seasons.BotSeason]
    #: Its final standing in each closed season it took part in, the latest first.
    season_history: list[SeasonEntry]


def bot_page(bot: Bot, user: Viewer) -> BotPage:
    """A bot's page as ``user`` sees it: its versions with their ratings, failures and check
    reports (these to its owner), its divisions in the ladder's seasons, its rating history and
    its latest matches."""
    versions = list(bot.versions.order_by("-number"))
    ratings = _ratings(versions)
    manager = bots.can_manage(user, bot)
    stats = {v.pk: version_failures(v, user) for v in versions[:FAILURE_VERSIONS]}
    active = next((v for v in versions if v.status == BotVersion.Status.ACTIVE), None)
    # Only the version that plays is warned of: a withdrawn bot's or a retired version's
    # failures are history (its table still shows them).
    playing = active if active is not None and bot.status == Bot.Status.ACTIVE else None
    failing = [
        (v, row) for v in versions if v == playing for row in stats.get(v.pk, []) if row.failing
    ]
    now, history = seasons.bot_seasons(bot)
    return BotPage(
        bot=bot,
        active=active,
        versions=[
            VersionRow(
                v,
                ratings.get(v.pk, []),
                stats.get(v.pk, []),
                privacy.version_reason_for(user, v),
                privacy.check_logs(v) if manager else None,
            )
            for v in versions
        ],
        failing=failing if manager else [],
        paused=[(v, row) for v in versions for row in stats.get(v.pk, []) if row.paused],
        failing_rate=settings.FAILING_RATE,
        failing_min_games=settings.FAILING_MIN_GAMES,
        failing_window=reliability.recent_window(),
        charts=_charts(versions, ratings),
        recent=_recent([v.pk for v in versions]),
        manager=manager,
        checking=any(v.status in (v.Status.PENDING, v.Status.CHECKING) for v in versions),
        divisions=now,
        season_history=history,
    )


def _page_order(ladder: str, variant: str) -> tuple[bool, str]:
    """Where a ladder's rating of a variant stands on a bot's page (its table, its charts):
    the sandboxed ladder's first, then the open ladder's, each in variant order."""
    return ladder != Ladder.SANDBOX, variant


def _ratings(versions: list[BotVersion]) -> dict[int, list[Rating]]:
    """Each version's current ratings, in :func:`_page_order`."""
    out: dict[int, list[Rating]] = defaultdict(list)
    for r in Rating.objects.filter(version__in=[v.pk for v in versions]):
        out[r.version_id].append(r)
    for rs in out.values():
        rs.sort(key=lambda r: _page_order(r.ladder, r.variant))
    return out


def _charts(
    versions: list[BotVersion], ratings: dict[int, list[Rating]]
) -> list[tuple[str, SafeString]]:
    """A chart per ladder and variant of every version's rating history, in
    :func:`_page_order`."""
    labels = {v.pk: v.label for v in versions}
    history: dict[tuple[str, str], dict[int, list[tuple[datetime, float, float | None]]]] = (
        defaultdict(lambda: defaultdict(list))
    )
    for vid, ladder, variant, at, elo, error in (
        RatingPoint.objects.filter(version__in=list(labels))
        .order_by("at")
        .values_list("version_id", "ladder", "variant", "at", "elo", "error")
    ):
        history[ladder, variant][vid].append((at, elo, error))
    current = {(r.version_id, r.ladder, r.variant): r for rs in ratings.values() for r in rs}
    provisional = {key for key, r in current.items() if r.provisional}

    def title(ladder: str, variant: str) -> str:
        name = Variant(variant).label
        return name if ladder == Ladder.SANDBOX else f"{name}, {Ladder(ladder).label}"

    return [
        (
            title(ladder, variant),
            history_svg(
                [
                    Series(
                        labels[vid]
                        + (" (provisional)" if (vid, ladder, variant) in provisional else ""),
                        [(at, elo) for at, elo, _ in pts],
                        # The legend gives the table's rating, the one source of the current.
                        now=current[vid, ladder, variant].elo
                        if (vid, ladder, variant) in current
                        else None,
                        errors=[error for _, _, error in pts],
                    )
                    for vid, pts in sorted(per.items())
                ]
            ),
        )
        for (ladder, variant), per in sorted(
            history.items(), key=lambda item: _page_order(*item[0])
        )
    ]


def _recent(version_ids: list[int]) -> QuerySet[Match]:
    """The latest :data:`RECENT` matches of these versions, newest first."""
    # The newest ids first, then their rows with the players joined: joined at once, the
    # planner scans every version to sort a busy bot's hundreds of matches.
    newest = (
        Match.objects.filter(Q(white__in=version_ids) | Q(black__in=version_ids))
        .order_by("-id")
        .values_list("pk", flat=True)[:RECENT]
    )
    return (
        Match.objects.filter(pk__in=list(newest))
        .select_related("white__bot", "black__bot")
        .order_by("-id")
    )


# ----------------------------------------------------------------------------- a match


@dataclass(frozen=True)
class PlaySide:
    """A side of a match that the viewer may play in the browser: a remote side (its moves
    arrive over HTTP, :mod:`arena.games.remote`) of a bot the viewer manages, while the match
    waits to be played or is being played. The browser is then that bot's client."""

    #: The bot's name (its remote API's URLs take it).
    bot: str
    #: ``white`` or ``black``.
    color: str
    #: What the page calls the other side.
    opponent: str
    #: The name the browser announces itself by (its ``ready``): the viewer's.
    player: str


@dataclass(frozen=True)
class MatchPage(Page):
    match: Match
    #: Its record and (to whoever may read a colour's logs) transcript, once it has them.
    data: MatchRecord | None
    #: Its moves: (turn number, the turn in the long notation).
    turns: list[tuple[int, str]]
    #: What ended it, as the viewer may read it.
    reason: str
    #: The logs of the colours whose logs the viewer may read.
    logs: list[PlayerLog]
    #: Not over yet: the page follows it live.
    live: bool
    #: The side the viewer plays by hand on this page (play.js), if any.
    play: PlaySide | None


#: The statuses of a match whose remote side its owner may still play.
PLAYABLE = (Match.Status.QUEUED, Match.Status.RUNNING)


def play_side(match: Match, user: Viewer) -> PlaySide | None:
    """The side of ``match`` that ``user`` may play by hand on its page: a remote bot's they
    manage (White's when both are), or their own seat's (a person's, :mod:`arena.games.people`:
    nobody else plays it, staff included), while the match is queued or running; None for
    anyone else (the page then shows no play panel and none of its URLs)."""
    if match.status not in PLAYABLE or not user.is_authenticated:
        return None
    for color, version, other in (
        ("white", match.white, match.black),
        ("black", match.black, match.white),
    ):
        bot = version.bot
        if not bot.remote or not bots.plays_for(user, bot):
            continue
        return PlaySide(bot.name, color, other.label, user.get_username())
    return None


def match_page(match: Match, user: Viewer) -> MatchPage:
    """A match's page as ``user`` sees it: the moves of its record, what ended it, and the
    logs of the bots whose owner is asking."""
    visible = privacy.visible_colours(user, match)
    fields = ("record", "record_short", "transcript") if visible else ("record", "record_short")
    data = MatchRecord.objects.filter(match=match).only(*fields).first()
    logs: list[PlayerLog] = []
    if data is not None and visible:
        logs = player_logs(privacy.transcript_for(user, match, data.transcript), visible)
    return MatchPage(
        match=match,
        data=data,
        turns=turns(data.record) if data is not None else [],
        reason=privacy.reason_for(user, match),
        logs=logs,
        live=not match.is_over,
        play=play_side(match, user),
    )


def turns(record: str) -> list[tuple[int, str]]:
    """A game record's moves, turn by turn in the long notation, numbered as the record
    numbers them; none for a record that cannot be read.

    >>> turns('[Variant "yinsh"]\\n\\n1.e3 2.a5')
    [(1, 'e3'), (2, 'a5')]
    >>> turns("")
    []
    """
    try:
        game = engine.Record.parse(record)
    except engine.RecordError:
        return []
    moves = engine.write_moves(game.actions, game.variant, long=True)
    out = []
    for token in moves.split():
        number, _, turn = token.partition(".")
        out.append((int(number), turn))
    return out
