"""Tests and challenges through the site's pages and the REST API."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from arena.bots.models import Bot, BotVersion
from arena.duels import services as duels
from arena.duels.models import Duel
from arena.games.models import Match
from tests.arena.api.test_api import client_for
from tests.arena.conftest import make_version
from tests.arena.duels.test_duels import play_pair

pytestmark = pytest.mark.django_db


def logged_in(user: Any) -> Client:
    c = Client()
    c.force_login(user)
    return c


@pytest.fixture
def mine(user: Any) -> tuple[BotVersion, BotVersion]:
    old = make_version(user, "mybot", status=BotVersion.Status.RETIRED)
    return make_version(user, "mybot"), old


@pytest.fixture
def theirs(other_user: Any) -> BotVersion:
    return make_version(other_user, "rival")


# ----------------------------------------------------------------------------- pages


def test_the_owner_sees_test_against_and_others_see_challenge(user, other_user, mine, theirs):
    page = logged_in(user).get("/bots/mybot/").content.decode()
    assert "/bots/mybot/test/" in page and "/bots/mybot/challenge/" not in page
    page = logged_in(user).get("/bots/rival/").content.decode()
    assert "/bots/rival/challenge/" in page and "/bots/rival/test/" not in page


def test_an_owner_starts_a_test_from_the_form_and_follows_it(user, mine):
    c = logged_in(user)
    form = c.get("/bots/mybot/test/")
    assert form.status_code == 200 and b"Start the test" in form.content
    r = c.post(
        "/bots/mybot/test/",
        {
            "candidate": mine[0].pk,
            "opponent": mine[1].pk,
            "variant": "yinsh",
            "time_control": "5+0.1",
            "mode": "sprt",
            "elo0": "0",
            "elo1": "50",
            "alpha": "0.05",
            "beta": "0.05",
            "max_games": "200",
        },
    )
    duel = Duel.objects.get()
    assert r.status_code == 302 and r["Location"] == f"/tests/{duel.pk}/"
    assert (duel.elo0, duel.elo1, duel.max_games, duel.time_control) == (0, 50, 200, "5+0.1")
    play_pair(duel, 1.0, 0.5)
    page = c.get(f"/tests/{duel.pk}/").content.decode()
    for words in ("mybot v2", "mybot v1", "LLR", "LOS", "Elo (pairs)", 'http-equiv="refresh"'):
        assert words in page, words
    assert "+1 =1 \u22120" in page
    assert f"/tests/{duel.pk}/cancel/" in page
    assert f"/tests/{duel.pk}/" in c.get("/tests/").content.decode()
    assert Client().get(f"/tests/{duel.pk}/").status_code == 200  # public
    assert Client().get(f"/challenges/{duel.pk}/").status_code == 404  # not a challenge


def test_a_fixed_number_of_games_and_a_refused_test_say_why(user, mine):
    c = logged_in(user)
    data = {
        "candidate": mine[0].pk,
        "opponent": mine[1].pk,
        "variant": "yinsh",
        "time_control": "5+0.1",
        "mode": "games",
        "games": "3",
    }
    r = c.post("/bots/mybot/test/", data)
    assert r.status_code == 200 and "must be even" in r.content.decode()
    assert not Duel.objects.exists()
    r = c.post("/bots/mybot/test/", {**data, "games": "4"})
    assert r.status_code == 302 and Duel.objects.get().games == 4


def test_only_the_owner_opens_the_test_form(other_user, mine):
    assert logged_in(other_user).get("/bots/mybot/test/").status_code == 403
    assert Client().get("/bots/mybot/test/").status_code == 302  # to the login page


def test_a_user_challenges_a_bot_and_its_creator_cancels(user, mine, theirs):
    c = logged_in(user)
    form = c.get("/bots/rival/challenge/").content.decode()
    assert "Start the challenge" in form and "(they do not)" in form
    data = {
        "candidate": mine[0].pk,
        "opponent": theirs.pk,
        "variant": "yinsh",
        "time_control": "5+0.1",
        "games": "4",
    }
    refused = c.post("/bots/rival/challenge/", {**data, "rated": "on"})
    assert "does not accept rated challenges" in refused.content.decode()
    r = c.post("/bots/rival/challenge/", data)
    duel = Duel.objects.get()
    assert r["Location"] == f"/challenges/{duel.pk}/" and duel.kind == "challenge"
    assert f"/challenges/{duel.pk}/" in c.get("/challenges/").content.decode()
    r = c.post(f"/challenges/{duel.pk}/cancel/")
    duel.refresh_from_db()
    assert r.status_code == 302 and duel.status == Duel.Status.CANCELLED


def test_the_owner_allows_rated_challenges_on_the_edit_form(user, mine):
    c = logged_in(user)
    assert "Accept rated challenges" in c.get("/bots/mybot/edit/").content.decode()
    c.post("/bots/mybot/edit/", {"description": "hi", "rated_challenges": "on"})
    assert Bot.objects.get(name="mybot").rated_challenges
    c.post("/bots/mybot/edit/", {"description": "hi"})
    assert not Bot.objects.get(name="mybot").rated_challenges


def test_someone_else_cannot_cancel(user, other_user, mine):
    duel = duels.start_test(user, mine[0], mine[1], variant="yinsh")
    assert logged_in(other_user).post(f"/tests/{duel.pk}/cancel/").status_code == 403
    duel.refresh_from_db()
    assert duel.status == Duel.Status.RUNNING


# ----------------------------------------------------------------------------- API


def test_the_api_starts_lists_shows_and_cancels_a_test(user, other_user, mine):
    c = client_for(user)
    r = c.post(
        "/api/duels/",
        {
            "kind": "test",
            "candidate": mine[0].pk,
            "opponent": mine[1].pk,
            "variant": "yinsh",
            "elo0": 0,
            "elo1": 100,
        },
        format="json",
    )
    assert r.status_code == 201, r.json()
    body = r.json()
    assert body["kind"] == "test" and body["number"] == 1 and body["status"] == "running"
    assert (body["elo0"], body["elo1"], body["alpha"], body["beta"]) == (0, 100, 0.05, 0.05)
    assert body["pentanomial"] == [0, 0, 0, 0, 0] and body["elo"]["elo"] is None
    assert body["bounds"][1] == pytest.approx(2.944, abs=1e-3)
    duel = Duel.objects.get(pk=body["id"])
    play_pair(duel, 1.0, 1.0)
    got = client_for().get(f"/api/duels/{duel.pk}/").json()
    assert got["pentanomial"] == [0, 0, 0, 0, 1] and got["wins"] == 2
    assert got["elo"]["high"] is None and got["llr"] > 0  # a perfect score: unbounded
    listed = client_for().get("/api/duels/", {"kind": "test"}).json()["results"]
    assert [d["id"] for d in listed] == [duel.pk]
    assert client_for(other_user).get("/api/duels/", {"mine": "true"}).json()["results"] == []
    matches = client_for().get("/api/matches/", {"duel": duel.pk}).json()["results"]
    assert {m["duel"] for m in matches} == {duel.pk} and len(matches) == 6  # 3 pairs
    assert client_for(other_user).post(f"/api/duels/{duel.pk}/cancel/").status_code == 403
    assert c.post(f"/api/duels/{duel.pk}/cancel/").status_code == 200
    again = c.post(f"/api/duels/{duel.pk}/cancel/")
    assert again.status_code == 409
    assert again.json() == {"detail": "Test #1 cannot be cancelled: it is cancelled."}


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"kind": "test", "opponent": 999999}, "opponent", "no version 999999"),
        ({"kind": "test", "games": 5}, "non_field_errors", "must be even"),
        ({"kind": "test", "elo0": 10, "elo1": 0}, "non_field_errors", "elo0 must be below"),
        ({"kind": "test", "variant": "go"}, "variant", ""),
        ({"kind": "challenge"}, "games", "needs a number of games"),
        ({"kind": "duel"}, "kind", ""),
    ],
)
def test_the_api_refuses_bad_input_clearly(user, mine, body, field, message):
    data = {"candidate": mine[0].pk, "opponent": mine[1].pk, "variant": "yinsh", **body}
    r = client_for(user).post("/api/duels/", data, format="json")
    assert r.status_code == 400 and message in str(r.json()[field])
    assert not Duel.objects.exists() and not Match.objects.exists()


def test_the_api_challenges_and_refuses_anonymous_starts(user, mine, theirs):
    data = {
        "kind": "challenge",
        "candidate": mine[0].pk,
        "opponent": theirs.pk,
        "variant": "yinsh",
        "games": 2,
    }
    assert client_for().post("/api/duels/", data, format="json").status_code == 401
    r = client_for(user).post("/api/duels/", data, format="json")
    assert r.status_code == 201 and r.json()["rated"] is False
    mine_not = client_for(user).post(
        "/api/duels/", {**data, "candidate": theirs.pk, "opponent": mine[0].pk}, format="json"
    )
    assert mine_not.status_code == 403


def test_the_daily_challenge_quota_is_a_429_with_retry_after(user, mine, theirs, settings):
    settings.CHALLENGES_PER_DAY = 1
    data = {"kind": "challenge", "candidate": mine[0].pk, "opponent": theirs.pk, "games": 2}
    data["variant"] = "yinsh"
    assert client_for(user).post("/api/duels/", data, format="json").status_code == 201
    r = client_for(user).post("/api/duels/", data, format="json")
    assert r.status_code == 429, r.json()
    assert 86_000 < int(r["Retry-After"]) <= 86_400
    assert "try again in 24 hours" in r.json()["detail"]


def test_a_games_page_links_to_its_test(user, mine):
    duel = duels.start_test(user, mine[0], mine[1], variant="yinsh")
    match = duel.matches.order_by("pk").first()
    page = Client().get(f"/matches/{match.pk}/").content.decode()
    assert f'href="/tests/{duel.pk}/"' in page and "pair 1" in page


def test_the_list_shows_only_mine_on_request(user, other_user, mine, theirs):
    ours = duels.start_test(user, mine[0], mine[1], variant="yinsh")
    other = make_version(other_user, "rival", status=BotVersion.Status.RETIRED)
    theirs_test = duels.start_test(other_user, theirs, other, variant="yinsh")
    everything = logged_in(user).get("/tests/").content.decode()
    assert f"/tests/{ours.pk}/" in everything and f"/tests/{theirs_test.pk}/" in everything
    only = logged_in(user).get("/tests/?mine=1").content.decode()
    assert f"/tests/{ours.pk}/" in only and f"/tests/{theirs_test.pk}/" not in only


def test_my_challenges_include_those_against_my_bots(
    user, other_user, mine, theirs, django_user_model
):
    """alice's list of her challenges, on the site and by the API, has bob's challenge of her
    bot as well as hers; a challenge between two others is in neither."""
    hers = duels.start_challenge(user, mine[0], theirs, variant="yinsh", games=2)
    against_her = duels.start_challenge(other_user, theirs, mine[0], variant="yinsh", games=2)
    carol = django_user_model.objects.create_user("carol", password="a-long-password-3")
    third = make_version(carol, "sparring")
    elsewhere = duels.start_challenge(other_user, theirs, third, variant="yinsh", games=2)
    only = logged_in(user).get("/challenges/?mine=1").content.decode()
    assert f"/challenges/{hers.pk}/" in only and f"/challenges/{against_her.pk}/" in only
    assert f"/challenges/{elsewhere.pk}/" not in only
    listed = client_for(user).get("/api/duels/", {"mine": "true", "kind": "challenge"}).json()
    assert [d["id"] for d in listed["results"]] == [against_her.pk, hers.pk]


# ----------------------------------------------------------------------------- the figures


def guide_anchors() -> set[str]:
    """The ids of the guide page on tests (its headings' anchors)."""
    return set(re.findall(r'id="([^"]+)"', Client().get("/guide/tests/").content.decode()))


def test_a_test_page_says_what_each_figure_means_and_links_the_guide(user, mine):
    duel = duels.start_test(user, mine[0], mine[1], variant="yinsh", elo0=0, elo1=50)
    play_pair(duel, 1.0, 0.5)
    page = Client().get(f"/tests/{duel.pk}/").content.decode()
    assert "<dfn>Elo (pairs)</dfn>" in page and "95% confidence interval" in page
    assert '<abbr title="likelihood of superiority">LOS</abbr>' in page
    assert '<abbr title="log-likelihood ratio">LLR</abbr>' in page
    assert "how sure one can be that the candidate is the stronger" in page
    linked = set(re.findall(r'href="/guide/tests/#([^"]+)"', page))
    assert {"elo-pairs", "los", "llr", "the-verdict", "the-pentanomial-counts"} <= linked
    assert linked <= guide_anchors()  # every link lands on a section
    assert "<caption>Pairs by the candidate's points in the pair" in page
    assert '<abbr title="pairs won (both games won)">2</abbr>' in page
    assert '<abbr title="pairs lost (both games lost)">0</abbr>' in page
    assert "of the way from the lower bound \u22122.94" in page  # running: its progress
    assert 'id="verdict">running<' in page


def test_a_finished_test_says_which_bound_its_llr_reached(user, mine):
    duel = duels.start_test(user, mine[0], mine[1], variant="yinsh", elo0=0, elo1=200)
    while Duel.objects.get(pk=duel.pk).status == Duel.Status.RUNNING:
        play_pair(duel, 1.0, 1.0)
    duel.refresh_from_db()
    assert duel.verdict == "H1"
    page = Client().get(f"/tests/{duel.pk}/").content.decode()
    llr = f"{duel.llr:.2f}"
    assert (
        f"LLR {llr} reached the upper bound 2.94: H1 accepted, mybot v2 is stronger than "
        "mybot v1 by at least about 200 Elo."
    ) in page
    assert 'id="verdict">stronger<' in page and "of the way" not in page


def test_a_test_that_spent_its_budget_says_it_has_no_verdict(user, mine):
    duel = duels.start_test(user, mine[0], mine[1], variant="yinsh", max_games=2)
    play_pair(duel, 1.0, 0.0)
    page = Client().get(f"/tests/{duel.pk}/").content.decode()
    assert "stayed between the bounds \u22122.94 and 2.94 until the budget of 2 games" in page
    assert 'id="verdict">inconclusive<' in page


def test_the_lists_show_a_verdict_in_words_and_the_score_apart(user, mine, theirs):
    running = duels.start_test(user, mine[0], mine[1], variant="yinsh")
    won = duels.start_challenge(user, mine[0], theirs, variant="yinsh", games=2)
    play_pair(won, 1.0, 0.5)
    tests = Client().get("/tests/").content.decode()
    assert "<th>verdict</th>" in tests and '<th class="num">score (+ = \u2212)</th>' in tests
    assert f'href="/tests/{running.pk}/">Test #1</a>' in tests
    row = re.search(r"<tr><td><a href=\"/tests/.*?</tr>", tests)
    assert row is not None and row.group(0).endswith(">running</td></tr>")
    challenges = Client().get("/challenges/").content.decode()
    assert f'href="/challenges/{won.pk}/">Challenge #1</a>' in challenges
    row = re.search(r"<tr><td><a href=\"/challenges/.*?</tr>", challenges)
    assert row is not None
    assert '<td class="num">1.5/2</td><td class="status-finished">won</td></tr>' in row.group(0)
    assert "+1 =1 \u22120" in row.group(0)


# ----------------------------------------------------------------------------- live updates


def test_the_page_fetches_its_changing_part_instead_of_reloading(user, mine):
    duel = duels.start_test(user, mine[0], mine[1], variant="yinsh")
    page = Client().get(f"/tests/{duel.pk}/").content.decode()
    assert '<noscript><meta http-equiv="refresh"' in page  # only without JavaScript
    assert f'data-fetch="/tests/{duel.pk}/live/" data-status="running"' in page
    assert f'data-events="/tests/{duel.pk}/events?v=' in page  # it is told when to
    play_pair(duel, 1.0, 1.0)
    live = Client().get(f"/tests/{duel.pk}/live/")
    body = live.content.decode()
    assert live.status_code == 200 and live["Cache-Control"] == "no-store"
    assert body.lstrip().startswith('<div id="duel-live"') and "<html" not in body
    assert "+2 =0 \u22120" in body and "<h1>" not in body
    assert Client().get(f"/challenges/{duel.pk}/live/").status_code == 404
    duels.cancel(user, duel)
    page = Client().get(f"/tests/{duel.pk}/").content.decode()
    assert 'data-status="cancelled"' in page and "data-events" not in page
    assert "http-equiv" not in page


# ----------------------------------------------------------------------------- the test form


def test_test_against_offers_the_previous_version_as_the_opponent(user):
    make_version(user, "mybot", status=BotVersion.Status.RETIRED)
    v2 = make_version(user, "mybot", status=BotVersion.Status.RETIRED)
    make_version(user, "mybot", status=BotVersion.Status.REJECTED)
    v4 = make_version(user, "mybot")
    form = logged_in(user).get("/bots/mybot/test/").context["form"]
    assert form.initial["candidate"] == v4 and form.initial["opponent"] == v2


def test_the_form_shows_each_modes_fields_apart_and_ignores_the_other_modes(user, mine):
    c = logged_in(user)
    page = c.get("/bots/mybot/test/").content.decode()
    assert 'data-modes="mode"' in page
    sprt = page.split('<fieldset data-mode="sprt">')[1].split("</fieldset>")[0]
    fixed = page.split('<fieldset data-mode="games">')[1].split("</fieldset>")[0]
    assert 'name="elo1"' in sprt and 'name="games"' not in sprt
    assert 'name="games"' in fixed and 'name="elo1"' not in fixed
    common = {
        "candidate": mine[0].pk,
        "opponent": mine[1].pk,
        "variant": "yinsh",
        "time_control": "5+0.1",
    }
    r = c.post("/bots/mybot/test/", {**common, "mode": "games", "games": "4", "elo1": "x"})
    assert r.status_code == 302
    fixed_test = Duel.objects.get()
    assert fixed_test.games == 4 and fixed_test.elo1 is None
    r = c.post(
        "/bots/mybot/test/",
        {**common, "mode": "sprt", "elo0": "0", "elo1": "50", "max_games": "200", "games": "3"},
    )
    assert r.status_code == 302
    sprt_test = Duel.objects.exclude(pk=fixed_test.pk).get()
    assert sprt_test.games is None and sprt_test.elo1 == 50
    r = c.post("/bots/mybot/test/", {**common, "mode": "games", "games": ""})
    assert r.status_code == 200 and "Say how many games." in r.content.decode()
