"""Every page of the site as people see it, on a desktop screen and on a phone's: it loads,
logs no error, does not scroll sideways (tables scroll inside themselves), every button's
label stands out from its background (WCAG AA contrast, 4.5:1, from the computed styles), and
axe-core finds nothing serious or critical on it."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

import engine
from arena.admission import trials
from arena.bots import services as bot_services
from arena.bots.models import Bot, BotVersion
from arena.duels import services as duels
from arena.games import seasons
from arena.games import services as games
from arena.games.models import Match
from arena.jobs import claims
from arena.ratings import services as ratings
from arena.referee.game import GameResult
from arena.tournaments import schedules
from arena.tournaments import services as tournaments
from arena.tournaments.models import Tournament
from arena.web.guide import TOPICS
from tests.arena.conftest import BOTS, make_version, packed, upload
from tests.arena.games.test_matches import queued_match
from tests.browser import (
    accessibility_violations,
    assert_fits_the_screen,
    contrast,
    low_contrast_buttons,
    sticking_out,
)

V = BotVersion.Status

#: A bot name as long as names go (40 characters) and with no place to break it.
LONGEST = "a" * 20 + "0123456789" * 2


def played_result(match: Match, seed: int) -> GameResult:
    """A whole game of random legal moves, as the referee would return it for ``match``, with
    think times and long ``info`` lines (what a bot's owner reads on the match page)."""
    rng = random.Random(seed)
    state = engine.State(match.variant)
    while not state.is_over():
        state.push(rng.choice(state.legal_actions()))
    assert state.outcome is not None
    record = engine.Record.from_state(
        state, state.outcome, White=match.white.label, Black=match.black.label
    )
    moves = [
        {"action": str(a), "think_ms": 40 + k, "info": f"depth {k} pv " + "e3-e7;" * 12}
        for k, a in enumerate(record.actions)
    ]
    return GameResult(
        outcome=state.outcome,
        reason="the rules ended the game",
        fault=None,
        record=record,
        transcript={"moves": moves, "seed": seed},
        duration_s=3.5,
    )


def finish(match: Match, seed: int) -> None:
    attempt = claims.claim(Match, match.pk)
    assert attempt is not None
    assert games.finish(match.pk, attempt, played_result(match, seed))


@dataclass
class Arena:
    """A site with something on every page: bots of two owners, a rated ladder game, a
    round robin under way, a Swiss with its tie-breaks and byes, a gauntlet, a knockout's
    bracket played to its champion, a test and a challenge, a season of the ladder closed and
    the next one open, a weekly scheduled event."""

    owner: Any
    rival: Any
    match: Match
    tournament: Tournament
    test: int
    challenge: int
    closed_season: int
    open_season: int
    swiss: Tournament
    gauntlet: Tournament
    knockout: Tournament
    schedule: int


def play_rounds(t: Tournament, rounds: int, seed: int) -> None:
    """Finish the tournament's queued games until ``rounds`` rounds are made and played (or
    it ends)."""
    while (m := t.matches.filter(status=Match.Status.QUEUED).order_by("pk").first()) is not None:
        if m.round > rounds:
            break
        finish(m, seed)
        seed += 1


@pytest.fixture
def arena(user: Any, other_user: Any, anchor: BotVersion) -> Arena:
    make_version(user, "a-rather-long-bot-name-for-a-phone", status=V.RETIRED)
    mine = make_version(user, "a-rather-long-bot-name-for-a-phone")
    make_version(user, "walker")
    theirs = make_version(other_user, "runner")
    longest = make_version(other_user, LONGEST)
    rejected = make_version(other_user, "stumbler", status=V.REJECTED)
    rejected.report = ["white broke the protocol at ply 3: " + "x" * 120]
    rejected.save(update_fields=["report"])
    match = queued_match(mine, anchor, variant="yinsh")
    finish(match, 1)
    finish(queued_match(theirs, anchor, variant="yinsh"), 2)
    finish(queued_match(longest, theirs, variant="yinsh"), 3)
    ratings.refresh("yinsh")
    cup = tournaments.create(
        user,
        name="Autumn cup for bots with long names",
        variant="yinsh",
        time_control="5+0.1",
        games_per_pair=2,
        bots=[mine.bot, theirs.bot, anchor.bot],
    )
    for seed, m in enumerate(cup.matches.filter(status=Match.Status.QUEUED)[:3]):
        finish(m, 10 + seed)
    walker = BotVersion.objects.get(bot__name="walker")
    five = [mine.bot, theirs.bot, anchor.bot, longest.bot, walker.bot]

    def start(fmt: str, bots: list[Any], **kw: Any) -> Tournament:
        return tournaments.create(
            user,
            name=f"A {fmt} for bots with long names",
            variant="yinsh",
            time_control="5+0.1",
            bots=bots,
            format=fmt,
            **kw,
        )

    swiss = start("swiss", five, games_per_pair=1, rounds=3)
    play_rounds(swiss, 2, 20)  # two rounds played, the third under way; a bye in each
    gauntlet = start("gauntlet", five[:4], games_per_pair=2, seed=longest.bot)
    play_rounds(gauntlet, 2, 40)
    knockout = start("knockout", five, games_per_pair=2)
    play_rounds(knockout, 3, 60)  # to its champion
    retired = BotVersion.objects.get(bot=mine.bot, number=1)
    test = duels.start_test(user, mine, retired, variant="yinsh")
    challenge = duels.start_challenge(other_user, theirs, mine, variant="yinsh", games=4)
    # Games within the divisions (by rating: random and mine on top, the others below), then
    # within the next season's.
    first = seasons.open_season("yinsh", division_size=2, movers=1)
    finish(queued_match(mine, anchor, variant="yinsh"), 4)
    finish(queued_match(theirs, longest, variant="yinsh"), 5)
    seasons.close_season(first)
    second = seasons.open_season("yinsh", division_size=2, movers=1)
    finish(queued_match(longest, mine, variant="yinsh"), 6)
    weekly = schedules.create(
        user,
        name="Weekly Swiss of every opted-in bot",
        variant="yinsh",
        format="swiss",
        time_control="5+0.1",
        games_per_pair=2,
        first_start=timezone.now() + timedelta(days=3),
        interval_days=7,
    )
    weekly.tournaments.add(cup)
    Bot.objects.filter(pk__in=[mine.bot_id, theirs.bot_id]).update(scheduled_events=True)
    return Arena(
        user,
        other_user,
        Match.objects.get(pk=match.pk),
        cup,
        test.pk,
        challenge.pk,
        first.pk,
        second.pk,
        swiss,
        gauntlet,
        knockout,
        weekly.pk,
    )


#: Parts of pages that other code draws, which axe-core does not check: Swagger UI (the API
#: docs) nests its buttons and draws grey on grey.
NOT_OURS = {"/api/docs/": ["#swagger-ui"]}


def accessibility_problems(page: Page, path: str) -> list[str]:
    return accessibility_violations(page, exclude=NOT_OURS.get(path))


def visit(page: Page, url: str) -> list[str]:
    """Open a page and say what is wrong with it as people see it (nothing: empty)."""
    response = page.goto(url)
    assert response is not None and response.ok, f"{url}: {response and response.status}"
    replay = page.locator(".yinsh-replay")
    if replay.count():
        expect(replay.first).to_have_attribute("data-replay-state", "ready")
    if page.locator("[data-play]").count():  # the play panel, built by its script
        expect(page.locator("[data-play] .play-status")).not_to_be_empty()
    if page.locator("#swagger-ui").count():  # the API docs draw themselves from the schema
        expect(page.locator("#swagger-ui .opblock").first).to_be_visible()
    problems = sticking_out(page)
    problems += [
        f"{label!r} contrast {ratio}" for label, ratio in low_contrast_buttons(page).items()
    ]
    problems += accessibility_problems(page, urlsplit(url).path)
    return [f"{url}: {problem}" for problem in problems]


def visit_all(page: Page, site: str, paths: list[str]) -> list[str]:
    problems: list[str] = []
    for path in paths:
        problems += visit(page, site + path)
    return problems


@pytest.mark.django_db(transaction=True)
def test_every_public_page_fits_the_screen_and_its_buttons_are_legible(
    page: Page, site: str, arena: Arena
) -> None:
    waiting = arena.tournament.matches.filter(status=Match.Status.QUEUED).first()
    assert waiting is not None
    paths = [
        "/",
        "/leaderboard/yinsh/",
        "/leaderboard/yinsh/?all=1",
        "/leaderboard/blitz/",
        "/bots/",
        "/bots/?status=all",
        "/bots/?status=rejected",
        "/bots/a-rather-long-bot-name-for-a-phone/",
        "/bots/runner/",
        f"/bots/{LONGEST}/",
        "/bots/random/",
        "/matches/",
        f"/matches/{arena.match.pk}/",
        f"/matches/{waiting.pk}/",  # the live board, waiting for its game
        "/matches/?bot=runner&kind=ladder",
        "/tournaments/",
        f"/tournaments/{arena.tournament.pk}/",
        f"/tournaments/{arena.tournament.pk}/games/",
        f"/tournaments/{arena.swiss.pk}/",
        f"/tournaments/{arena.gauntlet.pk}/",
        f"/tournaments/{arena.knockout.pk}/",
        "/tournaments/schedules/",
        f"/tournaments/schedules/{arena.schedule}/",
        "/head-to-head/?a=runner&b=a-rather-long-bot-name-for-a-phone&variant=yinsh",
        "/archive/",
        "/seasons/",
        f"/seasons/{arena.closed_season}/",
        f"/seasons/{arena.open_season}/",
        "/accounts/password/reset/",
        "/accounts/password/reset/sent/",
        "/accounts/password/reset/done/",
        "/tests/",
        f"/tests/{arena.test}/",
        "/challenges/",
        f"/challenges/{arena.challenge}/",
        "/upload/",
        "/accounts/login/",
        "/accounts/signup/",
        "/runtimes/",
        "/guide/",
        *(f"/guide/{topic.slug}/" for topic in TOPICS),
        "/api/docs/",
    ]
    problems = visit_all(page, site, paths)
    assert not problems, "\n".join(problems)


@pytest.mark.django_db(transaction=True)
def test_every_page_of_a_signed_in_owner_fits_the_screen_and_its_buttons_are_legible(
    page: Page, site: str, arena: Arena, log_in: Callable[[Any], None]
) -> None:
    log_in(arena.owner)
    bot = "/bots/a-rather-long-bot-name-for-a-phone"
    played, waiting = (
        trials.create(arena.owner, upload(packed(BOTS / "random"), f"{name}.tar.gz"))
        for name in ("played", "waiting")
    )
    assert trials.run(played.pk) == "played"
    # A game of the owner's remote bot, waiting to be played: its page has the play panel.
    by_hand = queued_match(
        bot_services.create_remote_bot(arena.owner, "played-by-hand"),
        BotVersion.objects.get(bot__name="runner"),
        variant="blitz",
        kind=Match.Kind.CHALLENGE,
    )
    paths = [
        "/",
        "/upload/",
        f"{bot}/",
        f"{bot}/upload/",
        f"{bot}/edit/",
        f"{bot}/test/",
        "/bots/runner/challenge/",
        f"/matches/{arena.match.pk}/",
        f"/matches/{by_hand.pk}/",
        "/tournaments/new/",
        "/tournaments/schedules/",
        f"/tournaments/schedules/{arena.schedule}/",
        f"/tournaments/{arena.tournament.pk}/",
        f"/tests/{arena.test}/",
        "/accounts/notifications/",
        "/accounts/inbox/",
        "/challenges/?mine=1",
        "/accounts/token/",
        "/accounts/bots/",
        "/trials/",
        f"/trials/{played.pk}/",
        f"/trials/{waiting.pk}/",
    ]
    problems = visit_all(page, site, paths)
    assert not problems, "\n".join(problems)


@pytest.mark.django_db(transaction=True)
def test_the_organiser_reads_the_tournaments_cancel_button(
    page: Page, site: str, arena: Arena, log_in: Callable[[Any], None]
) -> None:
    log_in(arena.owner)
    page.goto(f"{site}/tournaments/{arena.tournament.pk}/")
    cancel = page.get_by_role("button", name="Cancel", exact=True)
    expect(cancel).to_be_visible()
    assert contrast(cancel) >= 4.5  # white on red: it was red on red, no visible label
    assert low_contrast_buttons(page) == {}


def test_a_table_a_page_forgot_to_wrap_still_scrolls_inside_itself(page: Page, site: str) -> None:
    row = "".join(f"<td>column-{k}-of-a-wide-table</td>" for k in range(12))
    body = (
        '<!doctype html><meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="stylesheet" href="/static/arena/site.css">'
        f"<main><h1>Wide</h1><table><tbody><tr>{row}</tr></tbody></table></main>"
    )
    page.route(
        f"{site}/wide.html", lambda route: route.fulfill(body=body, content_type="text/html")
    )
    page.goto(f"{site}/wide.html")
    expect(page.locator("td").first).to_be_visible()
    assert_fits_the_screen(page)
