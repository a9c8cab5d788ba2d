"""How often a bot version fails, how, and how long it thinks: what its page and the API show,
and the watch that warns its owner and pauses it from the ladder when it fails often.

A failure is a game the version lost by its own doing (``Match.fault`` is its colour): a crash
(or no start), running out of time, an illegal move, a protocol error, or being stopped by the
sandbox. Aborted games count for nothing (the machine's failures are never a bot's). The
counts a page shows cover every finished game of the version (ladder, tournaments,
qualification); the commonest reasons come from its latest :data:`REASON_SAMPLE` failures, the
think times from its latest ``FAILURE_THINK_GAMES`` games: a page view does bounded work.

The verdict (:func:`is_failing`) looks at its *recent* games only: its latest
:func:`recent_window` finished games in the variant, and only those finished since its owner
last resumed it (:func:`resume`). A version that fails often is left out of that variant's
ladder (``PAUSE_FAILING_VERSIONS``, on by default) until its owner resumes it, or until its
latest games (in tournaments, say) are good again; resumed, it needs ``FAILING_MIN_GAMES``
new games before it can be paused again.

:func:`reason_group` turns a reason into a short text that similar failures share. Whoever may
read the version's logs (its owner, the operators) gets it made from the full reason
(``Match.detail``: "exited during the game (exit code 1)"), with the latest one of each;
everyone else gets it made from the public words (``Match.reason``: "crashed").

The watch (:func:`watch`) runs when a match is finished (in a savepoint of the transaction
that writes its result, see :func:`arena.games.services.finish`): for
each player at fault, or already flagged, it counts the version's recent games and failures
in that variant (two small indexed queries) and keeps a :class:`FailureAlert` row; the first
time a version crosses ``FAILING_RATE`` over at least ``FAILING_MIN_GAMES`` recent games in a
variant (and again after each resume), its owner is notified, once, with the commonest reason.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import Count, Q
from django.urls import reverse
from django.utils import timezone

from arena.bots import services as bots
from arena.bots.models import Bot, BotVersion, Variant, variant_title
from arena.core.errors import Refused
from arena.games import privacy
from arena.games.models import FailureAlert, Match, MatchRecord
from arena.notifications.models import Event
from arena.notifications.services import notify
from arena.referee.outcomes import COUNTED, Failure
from arena.referee.redaction import strip_paths

__all__ = [
    "RECENT_GAMES",
    "ResumeError",
    "VariantFailures",
    "failing_alerts",
    "paused_variants",
    "paused_versions",
    "reason_group",
    "recent_window",
    "resume",
    "version_failures",
    "watch",
]

S = Match.Status

#: The commonest reasons are found among this many of the version's latest failures.
REASON_SAMPLE = 200
#: Example games linked per reason.
EXAMPLES = 3
#: The verdict looks at this many of a version's latest games in a variant (at least
#: ``FAILING_MIN_GAMES``): see :func:`recent_window`.
RECENT_GAMES = 50


class ResumeError(Refused, ValueError):
    """A version that cannot be resumed; the message says why (409: the version's state, not
    the request, is in the way)."""

    status = 409


# ----------------------------------------------------------------------------- reasons

_EXIT = re.compile(r" exited (during start-up|at ply \d+) \(([^)]*)\)")
_SANDBOX_KIND = re.compile(r"\((memory|processes|cpu|file_size|forbidden_syscall)\)\s*$")
_SANDBOX_WORDS = {
    "memory": "memory limit",
    "processes": "process limit",
    "cpu": "CPU time limit",
    "file_size": "file size limit",
    "forbidden_syscall": "forbidden system call",
}
_MUST = re.compile(r" must ([a-z ]+)\)\s*$")
#: Protocol errors by what their message says (the rest of it may quote the bot's output).
_PROTOCOL = [
    ("not valid UTF-8", "wrote a line that is not UTF-8"),
    ("is not JSON", "wrote a line that is not JSON"),
    ("expected a JSON object", "wrote JSON that is not an object"),
    ('no "type"', "sent a message without a type"),
    ('"type" must be', "sent a message without a type"),
    ("without being asked", "wrote to its output without being asked"),
    ("an empty line", "wrote an empty line"),
    ("unknown message type", "sent the wrong kind of message"),
    (" message, got ", "sent the wrong kind of message"),
    (" lacks ", "sent a message with a missing or mistyped field"),
    (" message is ", "sent a message with a missing or mistyped field"),
    (" is empty", "sent a message with a missing or mistyped field"),
]


def reason_group(termination: str, reason: str) -> str:
    """A failure's reason as a short public text that similar failures share: no quotes of
    the bot's output, no paths, no ply numbers.

    >>> reason_group("crash", "walker v2 exited at ply 31 (exit code 1); stderr: /srv/x.py")
    'exited during the game (exit code 1)'
    >>> reason_group("time", "white ran out of time (no answer after 10.05 s with ...)")
    'ran out of time (no answer)'
    >>> reason_group("sandbox-violation", "x was stopped by the sandbox: memory limit (memory)")
    'stopped by the sandbox: memory limit'
    """
    if termination == Failure.CRASH:
        m = _EXIT.search(reason)
        if m:
            phase = "during start-up" if m[1] == "during start-up" else "during the game"
            return f"exited {phase} ({m[2]})"
        if "closed its output" in reason:
            return "closed its output"
        return "crashed"
    if termination == Failure.NO_START:
        return "sent no ready in time" if "sent no ready" in reason else "could not be started"
    if termination == Failure.TIME:
        return (
            "ran out of time (answered too late)"
            if "answered only" in reason
            else "ran out of time (no answer)"
        )
    if termination == Failure.ILLEGAL_MOVE:
        m = _MUST.search(reason)
        return f"played an illegal action (it had to {m[1]})" if m else "played an illegal action"
    if termination == Failure.SANDBOX:
        m = _SANDBOX_KIND.search(reason)
        what = _SANDBOX_WORDS[m[1]] if m else "a limit"
        return f"stopped by the sandbox: {what}"
    if termination == Failure.PROTOCOL:
        if "without a newline (the line limit)" in reason:
            return "wrote a line over the length limit"
        for needle, text in _PROTOCOL:
            if needle in reason:
                return text
        return "broke the protocol"
    return termination


# ----------------------------------------------------------------------------- statistics


@dataclass
class ReasonGroup:
    """Failures that share a public reason: how many, a few example games (latest first),
    and the latest one's full reason (for the owner only)."""

    kind: str
    text: str
    count: int = 0
    matches: list[int] = field(default_factory=list)
    example: str = ""


@dataclass(frozen=True)
class ThinkTimes:
    """Percentiles of the wall time of the version's own answers, in milliseconds."""

    moves: int
    games: int
    p50: float
    p90: float
    p99: float
    max: float


@dataclass
class VariantFailures:
    """One version in one variant."""

    variant: str
    games: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    reasons: list[ReasonGroup] = field(default_factory=list)
    think: ThinkTimes | None = None
    #: Its recent games and failures there: the latest :func:`recent_window` games finished
    #: since its owner last resumed it; what the verdict looks at.
    recent_games: int = 0
    recent_failed: int = 0
    #: The failing verdict (FAILING_RATE of its recent games, over at least FAILING_MIN_GAMES).
    failing: bool = False
    #: Left out of the ladder in this variant (only a version that would play there: the active
    #: version of a bot not withdrawn); its owner may resume it.
    paused: bool = False

    @property
    def title(self) -> str:
        return variant_title(self.variant)

    @property
    def failed(self) -> int:
        return sum(self.failures.values())

    @property
    def rate(self) -> float:
        return self.failed / self.games if self.games else 0.0

    def rates(self) -> list[tuple[str, str, int, float]]:
        """(kind, label, count, rate) for every kind a page counts, in
        :data:`~arena.referee.outcomes.COUNTED` order."""
        return [
            (
                k.value,
                k.label,
                self.failures[k],
                self.failures[k] / self.games if self.games else 0.0,
            )
            for k in COUNTED
        ]


def _counted_as(termination: str) -> Failure | None:
    """The kind a termination is counted under on a bot's page; None when it is no failure of
    a bot (an ending by the rules, an aborted game)."""
    try:
        return Failure(termination).counted_as
    except ValueError:
        return None


def is_failing(games: int, failed: int) -> bool:
    """Whether a version with these recent counts in a variant fails often."""
    return games >= settings.FAILING_MIN_GAMES and failed >= settings.FAILING_RATE * games


def recent_window() -> int:
    """How many of a version's latest games in a variant the verdict looks at:
    :data:`RECENT_GAMES`, or ``FAILING_MIN_GAMES`` if that is more."""
    return max(RECENT_GAMES, settings.FAILING_MIN_GAMES)


def _side_counts(version_id: int) -> tuple[Counter[str], Counter[tuple[str, str]]]:
    """Finished games per variant; failures per (variant, termination)."""
    games: Counter[str] = Counter()
    failed: Counter[tuple[str, str]] = Counter()
    for side in ("white", "black"):
        mine = Match.objects.filter(**{side: version_id}, status=S.FINISHED).order_by()
        for variant, n in mine.values_list("variant").annotate(n=Count("pk")):
            games[variant] += n
        for variant, termination, n in (
            mine.filter(fault=side).values_list("variant", "termination").annotate(n=Count("pk"))
        ):
            failed[variant, termination] += n
    return games, failed


def _reasons(version_id: int, *, private: bool) -> dict[str, list[ReasonGroup]]:
    """Per variant, the reason groups of the latest failures, commonest first: made from the
    full reasons with an example of each for the owner (``private``), else from the public
    words alone (which never say an exit code, a violation or what the bot wrote)."""
    latest = (
        Match.objects.filter(
            Q(white=version_id, fault="white") | Q(black=version_id, fault="black"),
            status=S.FINISHED,
        )
        .order_by("-id")
        .values_list("pk", "variant", "termination", "reason", "detail")[:REASON_SAMPLE]
    )
    roots = privacy.server_roots()
    groups: dict[tuple[str, str], ReasonGroup] = {}
    for pk, variant, termination, reason, detail in latest:
        kind = _counted_as(termination)
        if kind is None:
            continue
        # The full reason (``detail``, the owner's) says the exit code or the violation the
        # public words (``reason``) leave out.
        full = (detail or reason) if private else reason
        text = reason_group(termination, full)
        example = strip_paths(full, roots) if private else ""
        g = groups.setdefault((variant, text), ReasonGroup(kind, text, example=example))
        g.count += 1
        if len(g.matches) < EXAMPLES:
            g.matches.append(pk)
    out: dict[str, list[ReasonGroup]] = defaultdict(list)
    for (variant, _), g in groups.items():
        out[variant].append(g)
    for rows in out.values():
        rows.sort(key=lambda g: (-g.count, -g.matches[0]))
    return out


def percentile(sorted_values: list[float], q: float) -> float:
    """The nearest-rank percentile ``q`` (0-100) of sorted values.

    >>> percentile([1.0, 2.0, 3.0, 4.0], 50), percentile([1.0, 2.0, 3.0, 4.0], 99)
    (2.0, 4.0)
    """
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def _think_times(version_id: int, games: int) -> dict[str, ThinkTimes]:
    """Per variant, the think-time percentiles over the version's latest ``games`` games."""
    latest = list(
        Match.objects.filter(Q(white=version_id) | Q(black=version_id), status=S.FINISHED)
        .order_by("-id")
        .values_list("pk", "variant", "white_id")[:games]
    )
    colour = {pk: ("white" if w == version_id else "black", v) for pk, v, w in latest}
    times: dict[str, list[float]] = defaultdict(list)
    counted: Counter[str] = Counter()
    # Only the moves, not the whole transcript (its stderr and players).
    for pk, moves in MatchRecord.objects.filter(match__in=list(colour)).values_list(
        "match_id", "transcript__moves"
    ):
        side, variant = colour[pk]
        counted[variant] += 1
        for move in moves or []:
            if isinstance(move, dict) and move.get("color") == side and "ms" in move:
                times[variant].append(float(move["ms"]))
    out = {}
    for variant, values in times.items():
        values.sort()
        out[variant] = ThinkTimes(
            moves=len(values),
            games=counted[variant],
            p50=percentile(values, 50),
            p90=percentile(values, 90),
            p99=percentile(values, 99),
            max=values[-1],
        )
    return out


def version_failures(
    version: BotVersion | int, *, think_games: int | None = None, private: bool = False
) -> list[VariantFailures]:
    """A version's failure statistics per variant it has finished games in (in the engine's
    order of variants): games, failures by kind, the commonest reasons with example games,
    think-time percentiles, its recent games and failures, whether it fails often (over
    those) and whether the ladder pauses it there.

    ``private``: as its owner (and operators) see them, the reasons in full words with the
    latest one of each; else in the public words only."""
    v = (
        version
        if isinstance(version, BotVersion)
        else BotVersion.objects.select_related("bot").get(pk=version)
    )
    vid = v.pk
    games, failed = _side_counts(vid)
    if not games:
        return []
    reasons = _reasons(vid, private=private) if failed else {}
    n = settings.FAILURE_THINK_GAMES if think_games is None else think_games
    think = _think_times(vid, n) if n > 0 else {}
    alerts = dict(FailureAlert.objects.filter(version_id=vid).values_list("variant", "resumed_at"))
    paused = paused_variants(vid) if _plays_now(v) else set()
    order = {name: i for i, name in enumerate(Variant.values)}
    out = []
    for variant in sorted(games, key=lambda name: order.get(name, len(order))):
        row = VariantFailures(variant, games=games[variant])
        for (name, termination), count in failed.items():
            kind = _counted_as(termination)
            if name == variant and kind is not None:
                row.failures[kind] += count
        row.reasons = reasons.get(variant, [])
        row.think = think.get(variant)
        # Recent counts are at most the whole record's: count them only when the whole record
        # could make a failing verdict (most versions' cannot: no query).
        if (
            row.games >= settings.FAILING_MIN_GAMES
            and row.failed >= settings.FAILING_RATE * settings.FAILING_MIN_GAMES
        ):
            row.recent_games, row.recent_failed = _counts(vid, variant, alerts.get(variant))
        row.failing = is_failing(row.recent_games, row.recent_failed)
        row.paused = variant in paused
        out.append(row)
    return out


def _plays_now(version: BotVersion) -> bool:
    """Whether the version would play on the ladder (the active version of a bot not
    withdrawn): only such a version is said to be paused."""
    return version.status == BotVersion.Status.ACTIVE and version.bot.status == Bot.Status.ACTIVE


# ----------------------------------------------------------------------------- the watch


def paused_versions(variant: str) -> Q:
    """A filter on versions that leaves out those the ladder pauses in ``variant``: those
    that fail often there (none when ``ARENA_PAUSE_FAILING_VERSIONS`` is off)."""
    if not settings.PAUSE_FAILING_VERSIONS:
        return Q()
    flagged = FailureAlert.objects.filter(variant=variant, failing=True).values("version_id")
    return ~Q(pk__in=flagged)


def paused_variants(version_id: int) -> set[str]:
    """The variants the ladder pauses this version in (whatever its status)."""
    if not settings.PAUSE_FAILING_VERSIONS:
        return set()
    return set(
        FailureAlert.objects.filter(version_id=version_id, failing=True).values_list(
            "variant", flat=True
        )
    )


def failing_alerts(version_ids: Iterable[int]) -> list[FailureAlert]:
    """The alerts of these versions that still stand (for the owner's warning)."""
    return list(
        FailureAlert.objects.filter(version__in=list(version_ids), failing=True).order_by(
            "version_id", "variant"
        )
    )


def _counts(version_id: int, variant: str, since: datetime | None) -> tuple[int, int]:
    """(games, failures) of a version among its latest :func:`recent_window` finished games
    in a variant, those finished after ``since`` only (when it was last resumed): one query
    per colour, each on the version's index and bounded by the window."""
    window = recent_window()
    latest: list[tuple[int, bool]] = []
    for side in ("white", "black"):
        mine = Match.objects.filter(**{side: version_id}, variant=variant, status=S.FINISHED)
        if since is not None:
            mine = mine.filter(finished_at__gt=since)
        latest += [
            (pk, fault == side)
            for pk, fault in mine.order_by("-id").values_list("pk", "fault")[:window]
        ]
    latest.sort(reverse=True)
    recent = latest[:window]
    return len(recent), sum(1 for _, own in recent if own)


def watch(variant: str, white_id: int, black_id: int, fault: str) -> list[int]:
    """After a finished match: bring the failure alerts of its players up to date, and
    notify the owner of a version that now fails often in this variant (once, and once more
    after each time its owner resumes it). Returns the versions newly found failing."""
    players = {"white": white_id, "black": black_id}
    flagged = dict(
        FailureAlert.objects.filter(variant=variant, version__in=players.values()).values_list(
            "version_id", "resumed_at"
        )
    )
    newly = []
    for side, vid in players.items():
        if side != fault and vid not in flagged:
            continue
        games, failed = _counts(vid, variant, flagged.get(vid))
        failing = is_failing(games, failed)
        if vid not in flagged:
            if not failing:
                continue
            try:
                with transaction.atomic():
                    FailureAlert.objects.create(
                        version_id=vid, variant=variant, games=games, failures=failed, failing=True
                    )
            except IntegrityError:  # another worker flagged it meanwhile
                pass
        else:
            FailureAlert.objects.filter(version_id=vid, variant=variant).update(
                games=games, failures=failed, failing=failing, updated_at=timezone.now()
            )
        if failing and _claim_notice(vid, variant):
            _notify_failing(vid, variant, games, failed)
            newly.append(vid)
    return newly


def resume(user: User | AnonymousUser, version: BotVersion) -> list[str]:
    """Put a version paused from the ladder back on it, in every variant it is paused in
    (owner only): its verdict starts again from its next games (it is paused again only after
    ``FAILING_MIN_GAMES`` more, if it still fails often), and its owner is told again then.
    Returns the variants it was resumed in; a version that is not paused raises
    :class:`ResumeError` and nothing changes."""
    if not bots.can_manage(user, version.bot):
        raise PermissionDenied(f"only the owner of {version.bot.name} may resume it")
    with transaction.atomic():
        variants = sorted(paused_variants(version.pk)) if _plays_now(version) else []
        if not variants:
            raise ResumeError(f"{version.label} is not paused from the ladder")
        FailureAlert.objects.filter(version=version, variant__in=variants, failing=True).update(
            failing=False,
            games=0,
            failures=0,
            resumed_at=timezone.now(),
            notified_at=None,
            updated_at=timezone.now(),
        )
    return variants


def _claim_notice(version_id: int, variant: str) -> bool:
    """Whether this call is the one that tells the owner (once per version and variant, and
    once more after each resume)."""
    return bool(
        FailureAlert.objects.filter(
            version_id=version_id, variant=variant, notified_at__isnull=True
        ).update(notified_at=timezone.now())
    )


def _notify_failing(version_id: int, variant: str, games: int, failed: int) -> None:
    version = BotVersion.objects.select_related("bot").get(pk=version_id)
    if version.bot.status != Bot.Status.ACTIVE:
        return  # withdrawn: nothing for its owner to do
    title = variant_title(variant)
    paused = settings.PAUSE_FAILING_VERSIONS and _plays_now(version)
    # In the owner's words (the reasons' full texts, no quote of the bot's output).
    groups = _reasons(version_id, private=True).get(variant, [])
    commonest = groups[0].text if groups else ""
    text = (
        f"{version.label} failed in {failed} of its latest {games} {title} games "
        f"({100 * failed / games:.0f}%): crashes, timeouts, illegal moves, protocol errors or "
        "the sandbox."
        + (f" The commonest reason: {commonest} ({groups[0].count}\u00d7)." if groups else "")
        + (
            " It is paused from the ladder in this variant: once the cause is fixed, resume it "
            "on its page (or upload a new version)."
            if paused
            else ""
        )
        + " Its page lists the commonest reasons with example games."
    )
    notify(
        version.bot.owner_id,
        Event.VERSION_FAILING,
        f"{version.label} fails often in {title}" + (" and is paused" if paused else ""),
        text,
        reverse("bot", args=[version.bot.name]) + f"#v{version.number}",
        data={
            "bot": version.bot.name,
            "version": version.number,
            "variant": variant,
            "games": games,
            "failures": failed,
            "reason": commonest,
            "paused": paused,
        },
    )
