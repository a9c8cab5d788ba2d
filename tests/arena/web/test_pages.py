"""The pages a visitor expects: my bots, password reset, match filters, a tournament's games,
head-to-head, the leaderboard's LOS table and the rating charts' bands."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from arena.bots import services as bot_services
from arena.bots.models import BotVersion
from arena.duels import services as duels
from arena.duels.models import Duel
from arena.games import filters, headtohead
from arena.games import services as games
from arena.games.models import Match
from arena.jobs import claims
from arena.notifications import services as notifications
from arena.ratings import los
from arena.ratings import services as ratings
from arena.ratings.models import RatingPoint
from arena.stats import trinomial_estimate
from arena.tournaments.models import Entry, Tournament
from arena.web.plots import Series, history_svg
from tests.arena.conftest import make_version, verified_address
from tests.arena.games.test_matches import queued_match
from tests.arena.ratings.test_ladder_and_ratings import play_out, results

pytestmark = pytest.mark.django_db


def logged_in(user: Any) -> Client:
    c = Client()
    c.force_login(user)
    return c


# ----------------------------------------------------------------------------- my bots


@pytest.fixture
def alices_world(user: Any, other_user: Any) -> dict[str, Any]:
    """alice: ``mybot`` v1 (rejected) and v2 (active), a test, a challenge of bob's bot and a
    notification; bob: ``rival`` and ``sparring``, his own test and a challenge of alice's bot."""
    verified_address(user, "alice@example.org")
    old = make_version(user, "mybot", status=BotVersion.Status.REJECTED)
    new = make_version(user, "mybot")
    rival = make_version(other_user, "rival")
    sparring = make_version(other_user, "sparring")
    return {
        "old": old,
        "new": new,
        "test": duels.start_test(user, new, rival, variant="yinsh", games=2),
        "challenge": duels.start_challenge(user, new, rival, variant="yinsh", games=2),
        "bobs_test": duels.start_test(other_user, rival, sparring, variant="yinsh", games=2),
        "bobs_challenge": duels.start_challenge(other_user, rival, new, variant="yinsh", games=2),
        "note": notifications.notify(user, "test", "Hello alice", "text", "/bots/mybot/"),
    }


def test_bots_of_lists_only_the_users_bots_with_every_version_newest_first(
    user: Any, alices_world: dict[str, Any]
) -> None:
    owned = bot_services.bots_of(user)
    assert [o.bot.name for o in owned] == ["mybot"]
    assert [(v.number, v.status) for v in owned[0].versions] == [(2, "active"), (1, "rejected")]


def test_duels_of_are_those_the_user_started_or_their_bots_play(
    user: Any, other_user: Any, alices_world: dict[str, Any]
) -> None:
    w = alices_world
    assert duels.duels_of(user, Duel.Kind.TEST) == [w["test"]]
    assert duels.duels_of(user, Duel.Kind.CHALLENGE) == [w["bobs_challenge"], w["challenge"]]
    assert duels.duels_of(other_user, Duel.Kind.TEST) == [w["bobs_test"], w["test"]]
    assert duels.duels_of(user, Duel.Kind.CHALLENGE, limit=1) == [w["bobs_challenge"]]


def test_recent_notifications_are_the_users_own(
    user: Any, other_user: Any, alices_world: dict[str, Any]
) -> None:
    assert notifications.recent(user) == [alices_world["note"]]
    assert notifications.recent(other_user) == []


def test_my_bots_page_shows_versions_statuses_tests_challenges_and_notifications(
    user: Any, alices_world: dict[str, Any]
) -> None:
    r = logged_in(user).get("/accounts/bots/")
    assert r.status_code == 200
    page = r.content.decode()
    for text in ("mybot", "rejected", "active", "Hello alice", "rival v1"):
        assert text in page, text
    for duel in ("test", "challenge", "bobs_challenge"):
        assert alices_world[duel].get_absolute_url() in page, duel
    assert alices_world["bobs_test"].get_absolute_url() not in page


def test_my_bots_is_linked_from_the_header_when_signed_in_only(user: Any) -> None:
    assert 'href="/accounts/bots/"' in logged_in(user).get("/").content.decode()
    assert 'href="/accounts/bots/"' not in Client().get("/").content.decode()


def test_my_bots_asks_a_visitor_to_log_in(user: Any) -> None:
    r = Client().get("/accounts/bots/")
    assert r.status_code == 302 and r["Location"].startswith("/accounts/login/")


def test_my_bots_of_a_user_without_bots_says_how_to_start(user: Any) -> None:
    page = logged_in(user).get("/accounts/bots/").content.decode()
    assert "You have no bots yet" in page and 'href="/upload/"' in page


# ----------------------------------------------------------------------------- password reset


@pytest.fixture
def mailbox(settings: Any) -> list[Any]:
    from django.core import mail

    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.SITE_URL = "https://arena.example.org"
    mail.outbox = []
    return mail.outbox


def test_a_password_is_reset_through_the_link_sent_by_email(user: Any, mailbox: list[Any]) -> None:
    verified_address(user, "alice@example.org")
    c = Client()
    assert 'href="/accounts/password/reset/"' in c.get("/accounts/login/").content.decode()
    assert c.get("/accounts/password/reset/").status_code == 200
    r = c.post("/accounts/password/reset/", {"email": "alice@example.org"})
    assert r.status_code == 302 and r["Location"] == "/accounts/password/reset/sent/"
    assert "Check your email" in c.get(r["Location"]).content.decode()
    assert len(mailbox) == 1 and mailbox[0].to == ["alice@example.org"]
    assert "alice" in mailbox[0].body
    link = next(w for w in mailbox[0].body.split() if w.startswith("https://"))
    assert link.startswith("https://arena.example.org/accounts/password/reset/")
    path = link.removeprefix("https://arena.example.org")
    r = c.get(path)  # Django swaps the token for a session marker and redirects
    assert r.status_code == 302
    form_url = r["Location"]
    assert "Choose a new password" in c.get(form_url).content.decode()
    new = "another-long-password-9"
    r = c.post(form_url, {"new_password1": new, "new_password2": new})
    assert r.status_code == 302 and r["Location"] == "/accounts/password/reset/done/"
    assert "Password changed" in c.get(r["Location"]).content.decode()
    user.refresh_from_db()
    assert user.check_password(new)
    login = Client().post("/accounts/login/", {"username": "alice", "password": new})
    assert login.status_code == 302
    # The link works once.
    page = Client().get(path, follow=True).content.decode()
    assert "This link does not work" in page


def test_a_reset_for_an_unknown_address_sends_nothing_and_says_the_same(
    user: Any, mailbox: list[Any]
) -> None:
    r = Client().post("/accounts/password/reset/", {"email": "nobody@example.org"})
    assert r.status_code == 302 and r["Location"] == "/accounts/password/reset/sent/"
    assert mailbox == []


def test_a_bad_address_is_refused_with_a_form_error_and_sends_nothing(
    user: Any, mailbox: list[Any]
) -> None:
    r = Client().post("/accounts/password/reset/", {"email": "not an address"})
    assert r.status_code == 200 and "Enter a valid email address" in r.content.decode()
    assert mailbox == []


def test_new_passwords_that_differ_change_nothing(user: Any, mailbox: list[Any]) -> None:
    verified_address(user, "alice@example.org")
    c = Client()
    c.post("/accounts/password/reset/", {"email": "alice@example.org"})
    link = next(w for w in mailbox[0].body.split() if w.startswith("https://"))
    form_url = c.get(link.removeprefix("https://arena.example.org"))["Location"]
    r = c.post(form_url, {"new_password1": "one-long-pass-77", "new_password2": "other-pass-88"})
    assert r.status_code == 200 and "match" in r.content.decode()
    user.refresh_from_db()
    assert user.check_password("a-long-password-1")


def test_sign_up_takes_an_optional_email_address_for_resets(db: Any) -> None:
    from django.contrib.auth.models import User

    pw = "a-long-password-3"
    Client().post(
        "/accounts/signup/",
        {"username": "carol", "email": "carol@example.org", "password1": pw, "password2": pw},
    )
    Client().post("/accounts/signup/", {"username": "dave", "password1": pw, "password2": pw})
    assert dict(User.objects.values_list("username", "email")) == {
        "carol": "carol@example.org",
        "dave": "",
    }


# ----------------------------------------------------------------------------- match filters


def finished(white: Any, black: Any, result: str = "white", **fields: Any) -> Any:
    """A match played to the end by the referee's result path (a short game lost on time)."""
    m = queued_match(white, black, **fields)
    play_out(m, result)
    return Match.objects.get(pk=m.pk)


@pytest.fixture
def league(user: Any, other_user: Any) -> dict[str, Any]:
    """alpha v1, v2 and beta v1 (alice's) and gamma v1 (bob's); ladder games, a tournament
    game, an aborted game, and one running."""
    a1 = make_version(user, "alpha", status=BotVersion.Status.RETIRED)
    a2 = make_version(user, "alpha")
    b1 = make_version(user, "beta")
    g1 = make_version(other_user, "gamma")
    t = Tournament.objects.create(
        name="cup", organiser=user, variant="yinsh", time_control="5+0.1", games_per_pair=1
    )
    for seed, v in enumerate((b1, g1)):
        Entry.objects.create(tournament=t, version=v, seed=seed)
    m = {
        "a1b1": finished(a1, b1),
        "b1a2": finished(b1, a2, "black"),
        "a2g1_blitz": finished(a2, g1, "draw", variant="blitz"),
        "cup": finished(b1, g1, kind=Match.Kind.TOURNAMENT, tournament=t),
        "running": queued_match(g1, a2, status=Match.Status.RUNNING),
    }
    aborted = queued_match(a2, b1)
    games.abort(aborted.pk, claims.claim(Match, aborted.pk) or 0, "the worker went away")
    m["aborted"] = Match.objects.get(pk=aborted.pk)
    return {"versions": (a1, a2, b1, g1), "tournament": t, "matches": m}


def pks(qs: Any) -> list[int]:
    return [m.pk for m in qs]


def test_filters_select_by_bot_version_kind_tournament_and_termination(
    league: dict[str, Any],
) -> None:
    m = league["matches"]
    a1 = league["versions"][0]
    f = filters.MatchFilter
    by = lambda **kw: pks(filters.matches(f(**kw)))  # noqa: E731
    assert by() == sorted((x.pk for x in m.values()), reverse=True)
    assert by(bot="alpha") == pks(
        [m["aborted"], m["running"], m["a2g1_blitz"], m["b1a2"], m["a1b1"]]
    )
    assert by(bot="alpha", version=1) == [m["a1b1"].pk]
    assert by(version_id=a1.pk) == [m["a1b1"].pk]
    assert by(bot="gamma", variant="blitz") == [m["a2g1_blitz"].pk]
    assert by(kind="tournament") == [m["cup"].pk]
    assert by(tournament=league["tournament"].pk) == [m["cup"].pk]
    assert by(termination="time", bot="beta") == pks([m["cup"], m["b1a2"], m["a1b1"]])
    assert by(termination="aborted") == [m["aborted"].pk]
    assert by(status="running") == [m["running"].pk]
    assert by(termination="rows") == []


@pytest.mark.parametrize(
    ("values", "field", "words"),
    [
        ({"bot": "nobody"}, "bot", "no bot named 'nobody'"),
        ({"bot": "alpha", "version": 9}, "version", "alpha has no version 9"),
        ({"version": 1}, "version", "needs its bot"),
        ({"version_id": 10**9}, "version", "no version with id"),
        ({"tournament": 10**9}, "tournament", "no tournament"),
        ({"duel": 10**9}, "duel", "no test or challenge"),
        ({"termination": "checkmate"}, "termination", "not a way a game ends"),
    ],
)
def test_a_filter_that_names_nothing_is_an_error_on_its_field(
    league: dict[str, Any], values: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(filters.FilterError, match=words) as e:
        filters.matches(filters.MatchFilter(**values))
    assert e.value.field == field


def test_the_match_list_page_filters_and_keeps_the_filters_when_paging(
    league: dict[str, Any],
) -> None:
    m = league["matches"]
    r = Client().get("/matches/?bot=alpha&version=1")
    assert r.status_code == 200
    page = r.content.decode()
    assert f'href="/matches/{m["a1b1"].pk}/"' in page
    assert f'href="/matches/{m["b1a2"].pk}/"' not in page
    r = Client().get(f"/matches/?kind=tournament&tournament={league['tournament'].pk}")
    shown = r.content.decode()
    assert f'href="/matches/{m["cup"].pk}/"' in shown
    assert f'href="/matches/{m["a1b1"].pk}/"' not in shown
    one_a_page = Client().get("/matches/?bot=beta&termination=time&page=2")
    assert one_a_page.status_code == 200


def test_the_match_list_pager_keeps_the_filters(league: dict[str, Any]) -> None:
    a1, _, b1, _ = league["versions"]
    for _ in range(51):
        queued_match(a1, b1, status=Match.Status.CANCELLED)
    page = Client().get("/matches/?bot=alpha&status=cancelled").content.decode()
    assert 'href="?bot=alpha&amp;status=cancelled&amp;page=2"' in page


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("bot=nobody", "no bot named"),
        ("bot=Bad_Name!", "A bot name is"),
        ("bot=alpha&version=9", "alpha has no version 9"),
        ("version=1", "needs its bot"),
        ("version=abc", "Enter a whole number"),
        ("kind=blitz", "Select a valid choice"),
        ("termination=checkmate", "Select a valid choice"),
        ("tournament=0", "greater than or equal to 1"),
    ],
)
def test_a_bad_filter_on_the_page_is_a_form_error_and_lists_nothing(
    league: dict[str, Any], query: str, words: str
) -> None:
    r = Client().get(f"/matches/?{query}")
    assert r.status_code == 400
    page = r.content.decode()
    assert words in page.replace("&#x27;", "'")
    assert f'href="/matches/{league["matches"]["a1b1"].pk}/"' not in page


def test_the_api_filters_matches_by_version_and_termination(league: dict[str, Any]) -> None:
    m = league["matches"]
    a1 = league["versions"][0]
    c = APIClient()
    ids = lambda url: [row["id"] for row in c.get(url).json()["results"]]  # noqa: E731
    assert ids(f"/api/matches/?version={a1.pk}") == [m["a1b1"].pk]
    assert ids("/api/matches/?termination=aborted") == [m["aborted"].pk]
    assert ids(f"/api/matches/?bot=gamma&tournament={league['tournament'].pk}") == [m["cup"].pk]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("bot=nobody", "bot"),
        ("version=999999", "version"),
        ("version=x", "version"),
        ("termination=checkmate", "termination"),
        ("tournament=999999", "tournament"),
        ("duel=999999", "duel"),
        ("kind=blitz", "kind"),
    ],
)
def test_a_bad_filter_in_the_api_is_a_400_naming_the_parameter(
    league: dict[str, Any], query: str, field: str
) -> None:
    r = APIClient().get(f"/api/matches/?{query}")
    assert r.status_code == 400
    body = r.json()
    assert [k for k in body if k != "detail"] == [field] and body[field][0]


# ----------------------------------------------------------------------------- a tournament's games


def test_every_game_of_a_tournament_is_shown_a_page_at_a_time(league: dict[str, Any]) -> None:
    t = league["tournament"]
    _, _, b1, g1 = league["versions"]
    made = [
        queued_match(b1, g1, kind=Match.Kind.TOURNAMENT, tournament=t, status=Match.Status.PENDING)
        for _ in range(60)
    ]
    first = [league["matches"]["cup"], *made]
    detail = Client().get(f"/tournaments/{t.pk}/").content.decode()
    assert f'href="/tournaments/{t.pk}/games/"' in detail and "Every game (61)" in detail
    seen: list[str] = []
    for number in (1, 2):
        r = Client().get(f"/tournaments/{t.pk}/games/?page={number}")
        assert r.status_code == 200
        seen.append(r.content.decode())
    for m in first:
        on = [f'href="/matches/{m.pk}/"' in page for page in seen]
        assert on.count(True) == 1, m.pk
    assert f'href="/matches/{made[-1].pk}/"' in seen[0]  # newest first
    assert f'href="/matches/{first[0].pk}/"' in seen[1]
    assert f'href="/matches/{league["matches"]["a1b1"].pk}/"' not in seen[0] + seen[1]
    assert "page 2 of 2" in seen[1]


def test_the_games_of_a_tournament_that_does_not_exist_are_not_found(db: Any) -> None:
    assert Client().get("/tournaments/999/games/").status_code == 404


# ----------------------------------------------------------------------------- head-to-head


def test_head_to_head_counts_every_finished_game_of_any_versions_from_the_first_bots_side(
    league: dict[str, Any],
) -> None:
    a1, a2, b1, _ = league["versions"]
    alpha, beta = a1.bot, b1.bot
    # a1b1: alpha won as white; b1a2: alpha won as black (result "black"); the aborted game
    # (a2 - b1) does not count.
    finished(b1, a2, "draw")
    finished(b1, a1, "white")
    h = headtohead.head_to_head(alpha, beta)
    assert (h.wins, h.draws, h.losses, h.games, h.points) == (2, 1, 1, 4, 2.5)
    back = headtohead.head_to_head(beta, alpha)
    assert (back.wins, back.draws, back.losses) == (1, 1, 2)
    assert headtohead.head_to_head(alpha, beta, "blitz").games == 0
    e = h.estimate
    assert e.score == pytest.approx(0.625)
    assert e.elo == pytest.approx(-400 * math.log10(1 / 0.625 - 1))
    assert e.low < e.elo < e.high
    assert back.estimate.elo == pytest.approx(-e.elo)
    assert [m.pk for m in headtohead.games(alpha, beta)] == sorted(
        (
            m.pk
            for m in Match.objects.filter(
                white__bot__in=[alpha, beta], black__bot__in=[alpha, beta]
            )
        ),
        reverse=True,
    )


def test_a_bot_has_no_head_to_head_with_itself(league: dict[str, Any]) -> None:
    alpha = league["versions"][0].bot
    with pytest.raises(headtohead.HeadToHeadError):
        headtohead.head_to_head(alpha, alpha)


def test_the_head_to_head_page_shows_the_score_the_elo_interval_and_the_games(
    league: dict[str, Any],
) -> None:
    m = league["matches"]
    r = Client().get("/head-to-head/?a=alpha&b=beta")
    assert r.status_code == 200
    page = r.content.decode()
    assert "+2 =0 \u22120" in page and "100.0%" in page and "+∞" in page
    for key in ("a1b1", "b1a2", "aborted"):
        assert f'href="/matches/{m[key].pk}/"' in page, key
    assert f'href="/matches/{m["cup"].pk}/"' not in page
    assert "/head-to-head/" in Client().get("/bots/alpha/").content.decode()


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("a=alpha&b=nobody", "There is no bot named 'nobody'"),
        ("a=alpha&b=alpha", "Choose two different bots"),
        ("a=Bad_Name!&b=alpha", "A bot name is"),
        ("a=alpha", "This field is required"),
        ("a=alpha&b=beta&variant=chess", "Select a valid choice"),
    ],
)
def test_a_bad_head_to_head_is_a_form_error(league: dict[str, Any], query: str, words: str) -> None:
    r = Client().get(f"/head-to-head/?{query}")
    assert r.status_code == 400
    assert words in r.content.decode().replace("&#x27;", "'")


def test_the_head_to_head_form_alone_is_no_error(db: Any) -> None:
    r = Client().get("/head-to-head/")
    assert r.status_code == 200 and "Compare" in r.content.decode()


# ----------------------------------------------------------------------------- LOS


def test_the_los_table_compares_the_top_versions_from_their_pair_counts(
    user: Any, anchor: Any
) -> None:
    strong, middle, weak = (make_version(user, n) for n in ("strong", "middle", "weak"))
    results(
        {
            (strong, anchor): (8, 0, 0),
            (anchor, strong): (0, 0, 8),
            (middle, anchor): (5, 0, 3),
            (weak, anchor): (2, 0, 6),
            (strong, middle): (3, 1, 1),
            (middle, strong): (1, 0, 2),  # strong: +5 =1 -2 against middle
        }
    )
    ratings.refresh("yinsh")
    t = los.table("yinsh", top=3)
    assert [r.version_id for r in t.rows] == [strong.pk, middle.pk, anchor.pk]
    assert t.cells[0][0] is None and t.cells[1][1] is None
    s_m = t.cells[0][1]
    assert s_m is not None and (s_m.wins, s_m.draws, s_m.losses) == (5, 1, 2)
    assert s_m.los == pytest.approx(trinomial_estimate(5, 1, 2).los)
    m_s = t.cells[1][0]
    assert m_s is not None and (m_s.wins, m_s.losses) == (2, 5)
    assert m_s.los == pytest.approx(1 - s_m.los)
    s_a = t.cells[0][2]
    assert s_a is not None and s_a.wins == 16 and s_a.los is not None and s_a.los > 0.99
    assert len(los.table("yinsh").rows) == 4
    assert los.table("blitz").rows == []


def test_versions_that_never_played_each_other_have_no_los(user: Any, anchor: Any) -> None:
    a, b = make_version(user, "a"), make_version(user, "b")
    results({(a, anchor): (3, 0, 1), (b, anchor): (1, 2, 1)})
    ratings.refresh("yinsh")
    t = los.table("yinsh")
    ia, ib = (next(i for i, r in enumerate(t.rows) if r.version_id == v.pk) for v in (a, b))
    cell = t.cells[ia][ib]
    assert cell is not None and cell.los is None and cell.wins + cell.draws + cell.losses == 0


def test_the_leaderboard_shows_the_los_table(user: Any, anchor: Any) -> None:
    strong = make_version(user, "strong")
    results({(strong, anchor): (5, 0, 2)})
    ratings.refresh("yinsh")
    page = Client().get("/leaderboard/yinsh/").content.decode()
    assert "Likelihood of superiority (top 2)" in page
    expected = trinomial_estimate(5, 0, 2).los
    assert f"{100 * expected:.1f}%" in page and f"{100 * (1 - expected):.1f}%" in page
    assert 'title="+5 =0 \u22122"' in page


def test_the_los_table_and_the_head_to_head_page_agree_on_the_same_games(
    user: Any, anchor: Any
) -> None:
    """3 wins and a loss, both colours: one estimate, one LOS (87.6%, draws or not), on the
    leaderboard's table and on the head-to-head page alike."""
    strong = make_version(user, "strong")
    results({(strong, anchor): (2, 0, 1), (anchor, strong): (0, 0, 1)})
    ratings.refresh("yinsh")
    table = los.table("yinsh")
    i, j = (
        next(k for k, r in enumerate(table.rows) if r.version_id == v.pk) for v in (strong, anchor)
    )
    cell = table.cells[i][j]
    assert cell is not None and (cell.wins, cell.draws, cell.losses) == (3, 0, 1)
    h2h = headtohead.head_to_head(strong.bot, anchor.bot)
    assert (h2h.wins, h2h.draws, h2h.losses) == (3, 0, 1)
    assert cell.los == h2h.estimate.los == pytest.approx(0.8759, abs=1e-4)
    leaderboard = Client().get("/leaderboard/yinsh/").content.decode()
    page = Client().get(f"/head-to-head/?a={strong.bot.name}&b={anchor.bot.name}").content.decode()
    assert 'title="+3 =0 \u22121">87.6%' in leaderboard
    assert "87.6%" in page


# ----------------------------------------------------------------------------- rating bands


def _series(elos: list[float], errors: list[float | None] | None = None) -> Series:
    """A version's history, a point a day."""
    days = [datetime(2026, 1, 1 + k, tzinfo=UTC) for k in range(len(elos))]
    return Series("a v1", list(zip(days, elos, strict=True)), errors=errors or [])


def _numbers(svg: str, tag: str, attr: str) -> list[list[tuple[float, float]]]:
    """The ``attr`` point lists of every ``tag`` element of an SVG."""
    found = re.findall(rf'<{tag} {attr}="([^"]+)"', svg)
    return [[(float(a), float(b)) for a, b in (p.split(",") for p in f.split())] for f in found]


def test_a_chart_draws_each_series_inside_its_95_percent_band() -> None:
    svg = history_svg([_series([1000.0, 1100.0, 1150.0], [200.0, 100.0, 50.0])])
    (band,) = _numbers(svg, "polygon", "points")
    (line,) = _numbers(svg, "polyline", "points")
    upper, lower = band[:3], band[3:][::-1]
    for (lx, ly), (ux, uy), (bx, by) in zip(line, upper, lower, strict=True):
        assert lx == ux == bx
        assert uy < ly < by  # the band's top is above the line (smaller y), its bottom below
    widths = [by - uy for (_, uy), (_, by) in zip(upper, lower, strict=True)]
    assert widths[0] > widths[1] > widths[2]  # the interval narrows as the games add up
    assert widths[0] == pytest.approx(2 * widths[1], rel=0.02)


def test_a_chart_has_no_band_where_the_interval_is_unknown() -> None:
    elos = [1000.0, 1010.0, 1020.0, 1030.0]
    svg = history_svg([_series(elos, [None, 40.0, 40.0, None])])
    (band,) = _numbers(svg, "polygon", "points")
    assert len(band) == 4  # the two middle points, up and back
    assert "<polygon" not in history_svg([_series(elos)])
    one = history_svg([_series(elos[:1], [30.0])])
    assert '<line x1="' in one and 'class="band"' in one and "<polygon" not in one


def test_a_very_wide_band_is_cut_at_the_charts_edge() -> None:
    svg = history_svg([_series([1000.0, 1000.0], [5000.0, 5000.0])])
    (band,) = _numbers(svg, "polygon", "points")
    area = re.search(r'<rect x="\d+" y="(\d+)" width="\d+" height="(\d+)" class="chart-area"', svg)
    assert area is not None
    top, bottom = float(area[1]), float(area[1]) + float(area[2])
    ys = [y for _, y in band]
    assert min(ys) == top and max(ys) == bottom  # cut at the plot area's edges
    labels = [float(v) for v in re.findall(r'text-anchor="end"[^>]*>(-?\d+)</text>', svg)]
    assert max(labels) < 1000 + 5000 and min(labels) > 1000 - 5000


@pytest.mark.django_db
def test_the_bot_page_draws_the_rating_band(user: Any, anchor: Any) -> None:
    a = make_version(user, "alpha")
    results({(a, anchor): (3, 1, 1)})
    ratings.refresh("yinsh")
    results({(anchor, a): (1, 0, 3)})
    ratings.refresh("yinsh")
    assert RatingPoint.objects.filter(version=a).exclude(error=None).count() == 2
    page = Client().get("/bots/alpha/").content.decode()
    assert '<polygon points="' in page and 'class="band"' in page
    assert "shaded band of its 95% interval" in page


def test_the_los_table_and_a_head_to_head_take_a_fixed_number_of_queries(
    user: Any, anchor: Any, django_assert_num_queries: Any
) -> None:
    versions = [make_version(user, f"bot{k}") for k in range(12)]
    results({(v, anchor): (2, 1, 1) for v in versions})
    results({(versions[0], v): (1, 0, 1) for v in versions[1:]})
    ratings.refresh("yinsh")
    with django_assert_num_queries(2):
        t = los.table("yinsh")
    assert len(t.rows) == 10
    a, b = versions[0].bot, versions[1].bot
    with django_assert_num_queries(1):
        assert headtohead.head_to_head(a, b).games == 2


def test_a_head_to_head_without_games_says_so_and_shows_no_interval(
    league: dict[str, Any],
) -> None:
    page = Client().get("/head-to-head/?a=alpha&b=gamma&variant=yinsh").content.decode()
    assert "no finished game between them yet" in page and "\u221e" not in page
