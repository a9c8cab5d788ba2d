"""The site's pages. Thin: a form for input, one call into a service, render or redirect."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    JsonResponse,
    QueryDict,
    StreamingHttpResponse,
)
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST
from rest_framework.authtoken.models import Token

import engine
from arena.bots import services as bots
from arena.bots.models import Bot, BotVersion, Variant, describe_variants
from arena.core.throttles import Throttled
from arena.games import downloads, filters, headtohead, live, people, privacy, reliability, seasons
from arena.games.models import Match, MatchRecord
from arena.games.replay import replay_frames
from arena.notifications import services as notifications
from arena.ratings import los
from arena.ratings import services as ratings
from arena.ratings.models import Ladder
from arena.tournaments import services as tournaments
from arena.tournaments.models import Tournament
from arena.web import events, forms, pages
from arena.web import people as people_views
from arena.web.refusals import OnForm

LEADERBOARD_PAGE = 100
#: Games a page of a tournament's games shows.
GAMES_PAGE = 50


class AuthenticatedHttpRequest(HttpRequest):
    """The request a view behind ``login_required`` gets: its user has logged in."""

    user: User


def _variant(name: str) -> str:
    if name not in Variant.values:
        raise Http404(f"no variant {name!r}")
    return name


# ----------------------------------------------------------------------------- home, accounts


def home(request: HttpRequest) -> HttpResponse:
    tops = [
        (v, ratings.leaderboard(v.value)[:5])
        for v in Variant
        if v.value in settings.LADDER_VARIANTS
    ]
    recent = (
        Match.objects.filter(status=Match.Status.FINISHED)
        .select_related("white__bot", "black__bot")
        .order_by("-id")[:10]
    )
    running = Tournament.objects.filter(status=Tournament.Status.RUNNING)[:5]
    return render(
        request,
        "web/home.html",
        {
            "tops": tops,
            "recent": recent,
            "playing": _playing(Match.objects.all()),
            "tournaments": running,
            "in_flight": Match.objects.filter(
                status__in=[Match.Status.QUEUED, Match.Status.RUNNING]
            ).count(),
        },
    )


def _playing(matches: QuerySet[Match], limit: int = 10) -> list[Match]:
    """The games of ``matches`` being played now, the latest started first (for links to
    watch them live)."""
    return list(
        matches.filter(status=Match.Status.RUNNING)
        .select_related("white__bot", "black__bot")
        .order_by("-started_at", "-id")[:limit]
    )


def signup(request: HttpRequest) -> HttpResponse:
    form = forms.SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, f"Welcome, {user.username}. Upload a bot to get it rated.")
        if user.email:
            try:
                notifications.send_verification(user)
                messages.info(request, f"A link to verify {user.email} is on its way to it.")
            except Throttled as e:
                messages.warning(request, f"No verification link could be sent now: {e}.")
        return redirect("upload")
    return render(request, "registration/signup.html", {"form": form})


@never_cache  # a secret: no cache keeps it, shared or the browser's
@login_required
def token(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Show the user's API token; POST makes a new one (the old one stops working)."""
    if request.method == "POST":
        Token.objects.filter(user=request.user).delete()
        messages.success(request, "A new token was made; the old one no longer works.")
        return redirect("token")
    tok, _ = Token.objects.get_or_create(user=request.user)
    return render(request, "web/token.html", {"token": tok})


# ----------------------------------------------------------------------------- leaderboard


def leaderboard(
    request: HttpRequest, variant: str = "yinsh", ladder: str = Ladder.SANDBOX
) -> HttpResponse:
    """A variant's leaderboard on the ladder, or on the open ladder (``ladder="open"``), where
    remote bots play."""
    variant = _variant(variant)
    space = Ladder(ladder)
    include_retired = request.GET.get("all") == "1"
    rows = ratings.leaderboard(variant, ladder=space, include_retired=include_retired)
    page = Paginator(rows, LEADERBOARD_PAGE).get_page(request.GET.get("page"))
    first = (page.number - 1) * LEADERBOARD_PAGE
    return render(
        request,
        "web/leaderboard.html",
        {
            "variant": variant,
            "variant_label": Variant(variant).label,
            "variants": Variant.choices,
            "page": page,
            "rows": [(first + i + 1, r) for i, r in enumerate(page.object_list)],
            "include_retired": include_retired,
            "open": space == Ladder.OPEN,
            "los": los.table(variant, ladder=space, include_retired=include_retired)
            if page.number == 1
            else None,
            "fit": ratings.fit_state(variant, space),
            "fit_interval": settings.RATING_INTERVAL_S,
            "anchor": settings.RATING_ANCHOR_BOT,
            "anchor_elo": settings.RATING_ANCHOR_ELO,
            "provisional_games": settings.RATING_PROVISIONAL_GAMES,
            "season": seasons.open_season_of(variant) if space == Ladder.SANDBOX else None,
        },
    )


# ----------------------------------------------------------------------------- bots


#: The bot list's choices (``?status=``), by where a bot stands (:meth:`Bot.standing`): a filter
#: on the list's annotations, None for every bot. The first is the default (no parameter).
BOT_FILTERS: dict[str, tuple[str, Q | None]] = {
    "active": ("active", Q(status=Bot.Status.ACTIVE, active_variants__isnull=False)),
    "waiting": (
        "waiting for a check",
        Q(
            status=Bot.Status.ACTIVE,
            active_variants__isnull=True,
            newest_status__in=[
                BotVersion.Status.PENDING,
                BotVersion.Status.CHECKING,
                BotVersion.Status.HELD,
            ],
        ),
    ),
    "rejected": (
        "rejected",
        Q(
            status=Bot.Status.ACTIVE,
            active_variants__isnull=True,
            newest_status=BotVersion.Status.REJECTED,
        ),
    ),
    "withdrawn": ("withdrawn", Q(status=Bot.Status.WITHDRAWN)),
    "all": ("all", None),
}
DEFAULT_BOT_FILTER = next(iter(BOT_FILTERS))


def bot_list(request: HttpRequest) -> HttpResponse:
    """The bots that play by default; ``?status=`` one of :data:`BOT_FILTERS` for the others
    (an unknown one: 400, and no bots)."""
    shown = request.GET.get("status") or DEFAULT_BOT_FILTER
    known = shown in BOT_FILTERS
    active = BotVersion.objects.filter(bot=OuterRef("pk"), status=BotVersion.Status.ACTIVE)
    newest = BotVersion.objects.filter(bot=OuterRef("pk")).order_by("-number")
    rows = (
        Bot.objects.exclude(kind=Bot.Kind.PERSON)
        .select_related("owner")
        .annotate(
            active_variants=Subquery(active.values("variants")[:1]),
            newest_status=Subquery(newest.values("status")[:1]),
        )
        .order_by("name")
    )
    where = BOT_FILTERS[shown][1] if known else None
    if where is not None:
        rows = rows.filter(where)
    if not known:
        rows = rows.none()
    page = Paginator(rows, 100).get_page(request.GET.get("page"))
    plays = [
        (
            b,
            b.standing(playing=b.active_variants is not None, newest=b.newest_status),
            describe_variants(b.active_variants or ""),
        )
        for b in page
    ]
    filters = [
        (key, label, "?" if key == DEFAULT_BOT_FILTER else f"?status={key}")
        for key, (label, _) in BOT_FILTERS.items()
    ]
    context = {
        "page": page,
        "rows": plays,
        "filters": filters,
        "shown": shown,
        "unknown": not known,
        "extra": f"status={shown}&" if known and shown != DEFAULT_BOT_FILTER else "",
    }
    return render(request, "web/bot_list.html", context, status=200 if known else 400)


def bot_detail(request: HttpRequest, name: str) -> HttpResponse:
    bot = get_object_or_404(Bot.objects.select_related("owner"), name=name)
    if bot.person:
        return redirect(bot)  # a person's seat: their page
    context = pages.bot_page(bot, request.user).context()
    if people.can_play(request.user, bot) and bot.active_version is not None:
        assert isinstance(request.user, User)
        context["play_form"] = people_views.play_form(bot)
        context["playing"] = people.open_game(request.user)
    context["against_people"] = people.games_against_people(bot).select_related(
        "white__bot__owner", "black__bot__owner"
    )[:10]
    if context["checking"]:
        # Its page follows the check of its new version (arena/static/arena/site.js).
        context["events_url"] = events.changes_url(request, "bot", bot.name)
    return render(request, "web/bot_detail.html", context)


@login_required
def upload(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = forms.BotUploadForm(request.POST or None, request.FILES or None)
    on_form = OnForm(form)
    if request.method == "POST" and form.is_valid():
        f = form.cleaned_data["file"]
        with on_form:
            version = bots.create_bot(
                request.user,
                form.cleaned_data["name"],
                f,
                filename=f.name,
                description=form.cleaned_data["description"],
            )
            messages.success(request, f"{version.label} was uploaded; its check is queued.")
            return redirect(version.bot)
    return render(request, "web/upload.html", {"form": form}, status=on_form.status)


@login_required
def upload_version(request: AuthenticatedHttpRequest, name: str) -> HttpResponse:
    bot = get_object_or_404(Bot, name=name)
    if not bots.can_manage(request.user, bot):
        raise PermissionDenied
    form = forms.VersionUploadForm(request.POST or None, request.FILES or None)
    on_form = OnForm(form)
    if request.method == "POST" and form.is_valid():
        f = form.cleaned_data["file"]
        with on_form:
            version = bots.add_version(request.user, bot, f, filename=f.name)
            messages.success(request, f"{version.label} was uploaded; its check is queued.")
            return redirect(bot)
    context = {"form": form, "bot": bot}
    return render(request, "web/upload_version.html", context, status=on_form.status)


@login_required
def bot_edit(request: AuthenticatedHttpRequest, name: str) -> HttpResponse:
    bot = get_object_or_404(Bot, name=name)
    if not bots.can_manage(request.user, bot):
        raise PermissionDenied
    form = forms.BotEditForm(request.POST or None, instance=bot)
    if request.method == "POST" and form.is_valid():
        bots.update_bot(request.user, bot, **form.cleaned_data)
        return redirect(bot)
    return render(request, "web/bot_edit.html", {"form": form, "bot": bot})


@login_required
@require_POST
def bot_delete(request: AuthenticatedHttpRequest, name: str) -> HttpResponse:
    bot = get_object_or_404(Bot, name=name)
    outcome = bots.delete_bot(request.user, bot)
    if outcome == "deleted":
        messages.success(request, f"{name} was deleted.")
        return redirect("my-bots")
    messages.success(request, f"{name} was withdrawn; its games and ratings stay.")
    return redirect(bot)


@login_required
@require_POST
def version_activate(request: AuthenticatedHttpRequest, name: str, number: int) -> HttpResponse:
    """Make a retired version the bot's active version again (owner only)."""
    version = _own_version(request, name, number)
    try:
        bots.activate(request.user, version)
    except bots.ActivationError as e:
        messages.error(request, str(e))
    else:
        messages.success(request, f"{version.label} is the active version; it plays again.")
    return redirect(version.bot)


@login_required
@require_POST
def version_resume(request: AuthenticatedHttpRequest, name: str, number: int) -> HttpResponse:
    """Let a version paused from the ladder for failing often play there again (owner only)."""
    version = _own_version(request, name, number)
    try:
        resumed = reliability.resume(request.user, version)
    except reliability.ResumeError as e:
        messages.error(request, str(e))
    else:
        titles = ", ".join(Variant(v).label for v in resumed)
        messages.success(request, f"{version.label} plays on the ladder again ({titles}).")
    return redirect(version.bot)


def _own_version(request: HttpRequest, name: str, number: int) -> BotVersion:
    version = get_object_or_404(
        BotVersion.objects.select_related("bot"), bot__name=name, number=number
    )
    if not bots.can_manage(request.user, version.bot):
        raise PermissionDenied
    return version


@login_required
def version_source(request: AuthenticatedHttpRequest, name: str, number: int) -> HttpResponseBase:
    version = _own_version(request, name, number)
    upload = bots.source_file(request.user, version)
    return FileResponse(upload, as_attachment=True, filename=bots.source_filename(version))


@login_required
def version_check_transcript(
    request: AuthenticatedHttpRequest, name: str, number: int
) -> HttpResponse:
    version = get_object_or_404(
        BotVersion.objects.select_related("bot"), bot__name=name, number=number
    )
    if not privacy.may_see_logs(request.user, version.bot):
        raise PermissionDenied
    if version.transcript is None:
        raise Http404("no transcript")
    return downloads.Download(
        downloads.transcript_bytes(privacy.check_transcript(version.transcript)),
        f"{name}-v{number}-check.json",
        downloads.JSON_TYPE,
    ).response()


def _filled(given: QueryDict) -> QueryDict:
    """The filters of a page's address that say something, for its pages' links: a form sends
    its empty fields too, and the page number is the link's own."""
    query = QueryDict(mutable=True)
    for key in given:
        value = given.get(key, "")
        if value and key != "page":
            query[key] = value
    return query


def head_to_head(request: HttpRequest) -> HttpResponse:
    """Two bots against each other: the score, the Elo difference and every game, paged."""
    form = forms.HeadToHeadForm(request.GET or None)
    if not form.is_valid():
        status = 400 if form.is_bound else 200
        return render(request, "web/head_to_head.html", {"form": form}, status=status)
    a, b, variant = form.cleaned_data["a"], form.cleaned_data["b"], form.cleaned_data["variant"]
    result = headtohead.head_to_head(a, b, variant)
    page = Paginator(headtohead.games(a, b, variant), 50).get_page(request.GET.get("page"))
    query = _filled(request.GET)
    return render(
        request,
        "web/head_to_head.html",
        {
            "form": form,
            "h2h": result,
            "estimate": result.estimate,
            "page": page,
            "extra": query.urlencode() + "&",
        },
    )


# ----------------------------------------------------------------------------- matches


def match_list(request: HttpRequest) -> HttpResponse:
    form = forms.MatchFilterForm(request.GET)
    rows: QuerySet[Match] = Match.objects.none()
    if form.is_valid():
        with OnForm(form, by_field=True):
            rows = filters.matches(filters.MatchFilter.of(form.cleaned_data))
    page = Paginator(rows, 50).get_page(request.GET.get("page"))
    query = _filled(request.GET)
    return render(
        request,
        "web/match_list.html",
        {"page": page, "form": form, "extra": query.urlencode() + "&" if query else ""},
        status=200 if form.is_valid() else 400,
    )


def _record(pk: int) -> MatchRecord:
    return get_object_or_404(
        MatchRecord.objects.select_related("match__white__bot", "match__black__bot"), match_id=pk
    )


def match_detail(request: HttpRequest, pk: int) -> HttpResponse:
    match = get_object_or_404(
        Match.objects.select_related(
            "white__bot__owner", "black__bot__owner", "tournament", "duel"
        ),
        pk=pk,
    )
    return render(request, "web/match_detail.html", pages.match_page(match, request.user).context())


def match_record(request: HttpRequest, pk: int, form: str = "long") -> HttpResponse:
    return downloads.record(_record(pk), long=form != "short").response(
        inline=request.GET.get("inline") == "1"
    )


def match_transcript(request: HttpRequest, pk: int) -> HttpResponse:
    return downloads.transcript(_record(pk), request.user).response()


def ladder_archives(request: HttpRequest) -> HttpResponse:
    """The months of finished ladder games per variant, each a file to download."""
    return render(request, "web/ladder_archives.html", {"months": downloads.ladder_months()})


def ladder_archive(request: HttpRequest, variant: str, month: str) -> StreamingHttpResponse:
    found = downloads.ladder_month(variant, month)
    if found is None:
        raise Http404(f"no ladder games of {variant!r} in {month!r}")
    return found.download().response()


def match_replay(request: HttpRequest, pk: int) -> JsonResponse:
    data = _record(pk)
    record = engine.Record.parse(data.record)
    visible = privacy.visible_colours(request.user, data.match)
    shown = privacy.transcript_for(request.user, data.match, data.transcript)
    return JsonResponse(replay_frames(record, shown, logs=visible))


def match_live(request: HttpRequest, pk: int) -> JsonResponse:
    """The live feed of a match (:func:`arena.games.live.feed`): ``?since=N`` asks for the
    actions after ply N. Public facts, and the ``info`` of the viewer's own bots; never
    cached."""
    match = Match.objects.select_related("white__bot", "black__bot").filter(pk=pk).first()
    if match is None:
        return _no_store(JsonResponse({"error": f"there is no match {pk}"}, status=404))
    text = request.GET.get("since", "0")
    if not (text.isascii() and text.isdigit()):
        return _no_store(
            JsonResponse(
                {"error": f"since must be a ply number, 0 or more, not {text[:20]!r}"},
                status=400,
            )
        )
    logs = privacy.visible_colours(request.user, match)
    return _no_store(JsonResponse(live.feed(match, int(text), logs)))


def _no_store(response: JsonResponse) -> JsonResponse:
    response["Cache-Control"] = "no-store"
    return response


# ----------------------------------------------------------------------------- tournaments


def tournament_list(request: HttpRequest) -> HttpResponse:
    rows = Tournament.objects.select_related("organiser").order_by("-id")
    page = Paginator(rows, 50).get_page(request.GET.get("page"))
    return render(
        request,
        "web/tournament_list.html",
        {"page": page, "can_organise": tournaments.can_organise(request.user)},
    )


def tournament_detail(request: HttpRequest, pk: int) -> HttpResponse:
    t = get_object_or_404(Tournament.objects.select_related("organiser"), pk=pk)
    table = tournaments.standings(t)
    kind = t.format
    recent = (
        t.matches.exclude(status=Match.Status.PENDING)
        .select_related("white__bot", "black__bot")
        .order_by("-id")[: pages.RECENT]
    )
    return render(
        request,
        "web/tournament_detail.html",
        {
            "t": t,
            "format": tournaments.describe(t),
            "table": table,
            # A gauntlet's table is its seed's scores, a knockout's its bracket; the others
            # have a cross-table (a Swiss's shows who met whom).
            "cross": tournaments.crosstable(table)
            if kind not in (Tournament.Format.GAUNTLET, Tournament.Format.KNOCKOUT)
            else [],
            "gauntlet": tournaments.gauntlet(t, table),
            "bracket": tournaments.bracket(t),
            "byes": tournaments.byes(t),
            "progress": tournaments.progress(t),
            "recent": recent,
            "games": t.matches.count(),
            "playing": _playing(t.matches.all(), limit=50),
            "control": tournaments.can_control(request.user, t),
            # A running or paused tournament's page follows its games and its resumption
            # (arena/static/arena/site.js).
            "events_url": events.changes_url(request, "tournament", t.pk)
            if t.status in (Tournament.Status.RUNNING, Tournament.Status.PAUSED)
            else None,
        },
    )


def tournament_games(request: HttpRequest, pk: int) -> HttpResponse:
    """Every game of a tournament (waiting ones too), newest first, a page at a time."""
    t = get_object_or_404(Tournament, pk=pk)
    rows = filters.matches(filters.MatchFilter(tournament=t.pk))
    page = Paginator(rows, GAMES_PAGE).get_page(request.GET.get("page"))
    return render(request, "web/tournament_games.html", {"t": t, "page": page})


@login_required
def tournament_create(request: AuthenticatedHttpRequest) -> HttpResponse:
    if not tournaments.can_organise(request.user):
        raise PermissionDenied("you may not organise tournaments")
    form = forms.TournamentForm(request.POST or None, user=request.user)
    on_form = OnForm(form, by_field=True)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        with on_form:
            t = tournaments.create(
                request.user,
                name=data["name"],
                variant=data["variant"],
                time_control=data["time_control"],
                games_per_pair=data["games_per_pair"],
                bots=list(data["bots"]),
                rated=data["rated"],
                format=data["format"],
                rounds=data["rounds"],
                seed=data["seed"],
            )
            return redirect(t)
    return render(request, "web/tournament_form.html", {"form": form}, status=on_form.status)


#: What the organiser is told after each action on a tournament.
TOURNAMENT_ACTION_DONE = {
    "pause": "{name} is paused: no new game starts; the games under way finish.",
    "resume": "{name} plays on.",
    "cancel": "{name} is cancelled: its games not played yet will not be played.",
    "replay": "{name}: its missing games are queued to be played again.",
}


@login_required
@require_POST
def tournament_action(request: AuthenticatedHttpRequest, pk: int, action: str) -> HttpResponse:
    t = get_object_or_404(Tournament, pk=pk)
    act = {
        "pause": tournaments.pause,
        "resume": tournaments.resume,
        "cancel": tournaments.cancel,
        "replay": tournaments.play_missing_again,
    }
    if action not in act:
        raise Http404
    if act[action](request.user, t):
        messages.success(request, TOURNAMENT_ACTION_DONE[action].format(name=t.name))
    else:
        messages.warning(request, f"{t.name} cannot {action} now (it is {t.status}).")
    return redirect(reverse("tournament", args=[pk]))


def tournament_archive(request: HttpRequest, pk: int) -> HttpResponse:
    t = get_object_or_404(Tournament, pk=pk)
    return downloads.Download(
        tournaments.archive(t, request.user), f"tournament-{t.pk}.zip", downloads.ZIP_TYPE
    ).response()
