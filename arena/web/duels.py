"""Pages of tests (one's own version against another) and challenges (one's bot against
someone else's): the start forms, the live page, the lists and the cancel button.

The live page's changing part (status, figures, pair counts, games) is a fragment of its own
(:func:`duel_live`) that the page fetches again each time its stream says the duel changed
(:mod:`arena.web.events`, ``arena/static/arena/site.js``) while the duel runs; without
JavaScript the page reloads itself every :data:`REFRESH_S` seconds instead."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from arena import stats
from arena.bots import services as bots
from arena.bots.models import Bot
from arena.duels import services as duels
from arena.duels.models import Duel
from arena.games.models import Match
from arena.web import events, forms
from arena.web.refusals import OnForm
from arena.web.templatetags.figures import elo as elo_text

#: Seconds between reloads of a running test's page in a browser without JavaScript.
REFRESH_S = 5
#: The headings of the pentanomial counts' columns: a pair's points for the candidate.
PAIR_COLUMNS = (
    ("0", "pairs lost (both games lost)"),
    ("½", "pairs scoring ½ (a draw and a loss)"),
    ("1", "pairs scoring 1 (a win and a loss, or two draws)"),
    ("1½", "pairs scoring 1½ (a win and a draw)"),
    ("2", "pairs won (both games won)"),
)
MINUS = "\u2212"
#: What a page shows for a figure not known yet (an en dash).
NONE = "\u2013"


class AuthenticatedHttpRequest(HttpRequest):
    user: User


def _kind(kind: str) -> str:
    if kind not in Duel.Kind.values:
        raise Http404
    return kind


def _elo(x: float) -> str:
    """An Elo difference as a page shows it (:func:`arena.web.templatetags.figures.elo`)."""
    return elo_text(x)


@dataclass(frozen=True)
class Figures:
    """A duel's statistics, formatted."""

    elo: str
    low: str
    high: str
    los: str
    score: str
    game_elo: str
    game_low: str
    game_high: str


def _number(x: float) -> str:
    """A log-likelihood ratio or a bound as a page shows it (two decimals, a true minus)."""
    return f"{x:.2f}".replace("-", MINUS)


def sprt_reading(duel: Duel, result: stats.SprtResult) -> str:
    """Where a sequential test's LLR stands, and what it means, in a sentence.

    Finished, it says which bound the LLR reached and which hypothesis that accepts; running,
    how far it has come from the lower bound to the upper one."""
    llr, lower, upper = _number(result.llr), _number(result.lower), _number(result.upper)
    elo0, elo1 = (f"{x:g}".replace("-", MINUS) for x in (result.elo0, result.elo1))
    candidate, opponent = duel.candidate.label, duel.opponent.label
    if duel.status == Duel.Status.RUNNING:
        share = llr_percent(result)
        return (
            f"LLR {llr}, {share:.0f}% of the way from the lower bound {lower} (where H0, "
            f"“{candidate} is at most {elo0} Elo stronger”, would be accepted) to the upper "
            f"bound {upper} (where H1, “it is at least {elo1} Elo stronger”, would be)."
        )
    if duel.verdict == Duel.Verdict.H1:
        return (
            f"LLR {llr} reached the upper bound {upper}: H1 accepted, {candidate} is stronger "
            f"than {opponent} by at least about {elo1} Elo."
        )
    if duel.verdict == Duel.Verdict.H0:
        return (
            f"LLR {llr} reached the lower bound {lower}: H0 accepted, {candidate} is not "
            f"{elo1} Elo stronger than {opponent} (at most about {elo0} Elo)."
        )
    if duel.status == Duel.Status.CANCELLED:
        return (
            f"LLR {llr} was still between the bounds {lower} and {upper} when the test was "
            "cancelled: no verdict."
        )
    return (
        f"LLR {llr} stayed between the bounds {lower} and {upper} until the budget of "
        f"{duel.max_games} games was spent: no verdict."
    )


def llr_percent(result: stats.SprtResult) -> float:
    """How far the LLR has come from the lower bound (0) to the upper one (100)."""
    span = result.upper - result.lower
    return min(100.0, max(0.0, 100 * (result.llr - result.lower) / span))


def figures(duel: Duel) -> Figures:
    pairs, games = duel.pentanomial, duel.trinomial
    return Figures(
        elo=_elo(pairs.elo),
        low=_elo(pairs.low),
        high=_elo(pairs.high),
        los=NONE if duel.pairs == 0 else f"{100 * pairs.los:.1f}%",
        score=NONE if duel.pairs == 0 else f"{100 * pairs.score:.1f}%",
        game_elo=_elo(games.elo),
        game_low=_elo(games.low),
        game_high=_elo(games.high),
    )


def duel_list(request: HttpRequest, kind: str) -> HttpResponse:
    kind = _kind(kind)
    rows = Duel.objects.filter(kind=kind).select_related(
        "created_by", "candidate__bot", "opponent__bot"
    )
    user = request.user
    mine = bool(request.GET.get("mine")) and user.is_authenticated
    if mine and isinstance(user, User):
        rows = rows.filter(duels.involving(user.pk))
    page = Paginator(rows.order_by("-id"), 50).get_page(request.GET.get("page"))
    return render(
        request,
        "web/duel_list.html",
        {
            "page": page,
            "kind": kind,
            "title": "Tests" if kind == "test" else "Challenges",
            "mine": mine,
            "extra": "mine=1&" if mine else "",
        },
    )


def _live(request: HttpRequest, kind: str, pk: int) -> dict[str, object]:
    """What the live part of a duel's page shows (:func:`duel_detail`, :func:`duel_live`)."""
    duel = get_object_or_404(
        Duel.objects.select_related("created_by", "candidate__bot", "opponent__bot"),
        pk=pk,
        kind=_kind(kind),
    )
    result = duels.result(duel)
    matches = (
        duel.matches.exclude(status=Match.Status.PENDING)
        .select_related("white__bot", "black__bot")
        .order_by("-round", "pk")
    )
    page = Paginator(matches, 50).get_page(request.GET.get("page"))
    live_url = reverse(f"{duel.kind}-live", args=[duel.pk])
    if page.number > 1:
        live_url += f"?page={page.number}"
    return {
        "duel": duel,
        "result": result,
        "reading": None if result is None else sprt_reading(duel, result),
        "llr_percent": None if result is None else llr_percent(result),
        "figures": figures(duel),
        "counts": [
            (label, words, n) for (label, words), n in zip(PAIR_COLUMNS, duel.counts, strict=True)
        ],
        "in_play": duels.pairs_in_play(duel),
        "page": page,
        "matches": page,
        "refresh": REFRESH_S if duel.status == Duel.Status.RUNNING else None,
        "events_url": events.changes_url(request, duel.kind, duel.pk)
        if duel.status == Duel.Status.RUNNING
        else None,
        "live_url": live_url,
        "guide": reverse("guide-page", args=["tests"]),
    }


def duel_detail(request: HttpRequest, kind: str, pk: int) -> HttpResponse:
    context = _live(request, kind, pk)
    duel = context["duel"]
    assert isinstance(duel, Duel)
    context["control"] = duels.can_cancel(request.user, duel) and duel.status == "running"
    return render(request, "web/duel_detail.html", context)


def duel_live(request: HttpRequest, kind: str, pk: int) -> HttpResponse:
    """The changing part of a duel's page, which the page fetches to replace its own."""
    response = render(request, "web/_duel_live.html", _live(request, kind, pk))
    response.headers["Cache-Control"] = "no-store"
    return response


@login_required
def test_create(request: AuthenticatedHttpRequest, name: str) -> HttpResponse:
    """Start a test of one of the owner's versions (this bot's active one by default)."""
    bot = get_object_or_404(Bot, name=name)
    if not bots.can_manage(request.user, bot):
        raise PermissionDenied("only the bot's owner may test its versions")
    form = forms.TestForm(request.POST or None, user=request.user)
    on_form = OnForm(form)
    if request.method != "POST":
        current = bot.active_version
        form.initial["candidate"] = current
        form.initial["opponent"] = duels.previous_version(current) if current else None
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        fixed = d["mode"] == "games"

        def given(field: str, default: float) -> float:
            value = d[field]
            return default if value is None else float(value)

        with on_form:
            duel = duels.start_test(
                request.user,
                d["candidate"],
                d["opponent"],
                variant=d["variant"],
                time_control=d["time_control"],
                elo0=given("elo0", stats.DEFAULT_ELO0),
                elo1=given("elo1", stats.DEFAULT_ELO1),
                alpha=given("alpha", stats.DEFAULT_ALPHA),
                beta=given("beta", stats.DEFAULT_BETA),
                games=d["games"] if fixed else None,
                max_games=None if fixed else d["max_games"],
            )
            messages.success(request, "The test has started.")
            return redirect(duel)
    context = {"form": form, "bot": bot, "kind": "test"}
    return render(request, "web/duel_form.html", context, status=on_form.status)


@login_required
def challenge_create(request: AuthenticatedHttpRequest, name: str) -> HttpResponse:
    """Challenge this bot with one of the user's own versions."""
    bot = get_object_or_404(Bot, name=name)
    form = forms.ChallengeForm(request.POST or None, user=request.user, bot=bot)
    on_form = OnForm(form)
    if request.method != "POST":
        form.initial["opponent"] = bot.active_version
        form.initial["candidate"] = forms.checked_versions().filter(bot__owner=request.user).first()
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        with on_form:
            duel = duels.start_challenge(
                request.user,
                d["candidate"],
                d["opponent"],
                variant=d["variant"],
                time_control=d["time_control"],
                games=d["games"],
                rated=d["rated"],
            )
            messages.success(request, "The challenge has started.")
            return redirect(duel)
    return render(
        request,
        "web/duel_form.html",
        {
            "form": form,
            "bot": bot,
            "kind": "challenge",
            "left": duels.challenges_left(request.user),
        },
        status=on_form.status,
    )


@login_required
@require_POST
def duel_cancel(request: AuthenticatedHttpRequest, kind: str, pk: int) -> HttpResponse:
    duel = get_object_or_404(Duel, pk=pk, kind=_kind(kind))
    if duels.cancel(request.user, duel):
        messages.success(request, f"The {duel.kind} was cancelled.")
    else:
        messages.warning(request, f"The {duel.kind} is already {duel.get_status_display()}.")
    return redirect(duel)
