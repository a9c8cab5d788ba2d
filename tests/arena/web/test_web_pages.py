"""What a bot's and a match's page show (:mod:`arena.web.pages`), computed without a request:
what each viewer sees, the moves read from the record, the failures the API shares."""

from __future__ import annotations

import doctest
import random
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from rest_framework.test import APIClient

import arena.web.pages
import engine
from arena.bots.models import BotVersion
from arena.games import services as games
from arena.games.models import Match, MatchRecord
from arena.jobs import claims
from arena.ratings import services as ratings
from arena.web import pages
from tests.arena.conftest import make_version
from tests.arena.games.test_failures import SECRET, crash
from tests.arena.games.test_matches import fake_result, queued_match

pytestmark = pytest.mark.django_db


def test_the_module_examples_hold() -> None:
    failures, tried = doctest.testmod(arena.web.pages)
    assert tried and not failures


# ----------------------------------------------------------------------------- a bot


@pytest.fixture
def alpha(user: Any, other_user: Any) -> tuple[BotVersion, BotVersion, BotVersion]:
    """alice's bot alpha (v1 retired, v2 active) and bob's beta: a finished, rated game and
    three crashes of alpha v2."""
    old = make_version(user, "alpha", status=BotVersion.Status.RETIRED)
    new = make_version(user, "alpha")
    beta = make_version(other_user, "beta")
    m = queued_match(new, beta)
    games.finish(m.pk, claims.claim(Match, m.pk), fake_result())
    ratings.refresh("yinsh")
    for _ in range(3):
        crash(new, beta)
    return old, new, beta


def test_a_bots_page_lists_its_versions_newest_first_with_their_ratings_and_games(
    alpha: Any, other_user: Any
) -> None:
    old, new, _ = alpha
    page = pages.bot_page(new.bot, other_user)
    assert page.bot == new.bot and page.active == new
    assert [row.version for row in page.versions] == [new, old]
    assert [r.variant for r in page.versions[0].ratings] == ["yinsh"]
    assert page.versions[1].ratings == []
    assert [label for label, _ in page.charts] == ["YINSH"]
    assert "<svg" in page.charts[0][1]
    assert list(page.recent) == list(Match.objects.order_by("-id"))
    assert not page.checking
    assert set(page.context()) >= {"bot", "versions", "charts", "recent", "manager"}


def test_only_the_owner_reads_the_check_reports_full_reasons_and_failing_warning(
    alpha: Any, user: Any, other_user: Any, settings: Any
) -> None:
    settings.FAILING_MIN_GAMES = 1
    _, new, _ = alpha
    owners = pages.bot_page(new.bot, user)
    assert owners.manager and all(row.check is not None for row in owners.versions)
    [(version, row)] = owners.failing
    assert version == new and row.variant == "yangsh" and row.failed == 3
    assert [row.variant for row in owners.versions[0].failures] == ["yinsh", "yangsh"]
    assert SECRET in owners.versions[0].failures[1].reasons[0].example
    for viewer in (other_user, AnonymousUser()):
        theirs = pages.bot_page(new.bot, viewer)
        assert not theirs.manager and theirs.failing == []
        assert all(row.check is None for row in theirs.versions)
        shown = theirs.versions[0].failures[1]
        assert shown.failed == 3 and SECRET not in str(shown.reasons)


def test_a_bot_with_a_version_being_checked_is_checking(user: Any) -> None:
    v = make_version(user, "fresh", status=BotVersion.Status.PENDING)
    page = pages.bot_page(v.bot, user)
    assert page.checking and page.active is None and page.charts == []


def test_the_api_shows_the_failures_the_bots_page_does(alpha: Any, user: Any) -> None:
    _, new, _ = alpha
    rows = pages.version_failures(new, user)
    [won, data] = pages.failures_json(rows)
    assert won["variant"] == "yinsh" and won["rate"] == 0.0 and won["reasons"] == []
    assert data["variant"] == "yangsh" and data["games"] == 3 and data["rate"] == 1.0
    assert data["failures"] == {
        "crash": 3,
        "time": 0,
        "illegal-move": 0,
        "protocol-error": 0,
        "sandbox-violation": 0,
    }
    [reason] = data["reasons"]
    assert reason["count"] == 3 and SECRET in str(reason["example"])
    c = APIClient()
    c.force_authenticate(user)
    assert c.get(f"/api/versions/{new.pk}/").json()["failures"] == [won, data]
    public = Client().get(f"/api/versions/{new.pk}/").json()["failures"]
    assert public == pages.failures_json(pages.version_failures(new, None))
    assert public[1]["reasons"][0]["example"] is None


# ----------------------------------------------------------------------------- a match


def random_game(seed: int, variant: str = "yinsh") -> engine.Record:
    """A game of random legal actions, to its end (rows removed and all)."""
    rng = random.Random(seed)
    state = engine.State(variant)
    while not state.is_over():
        state.push(rng.choice(state.legal_actions()))
    return engine.Record.from_state(state, White="a v1", Black="b v1")


def test_a_matchs_moves_are_its_records_turns() -> None:
    removed = 0
    for seed in range(6):
        text = random_game(seed, "blitz").to_text(long=True)
        body = text.split("\n\n", 1)[1]
        by_hand = [(int(n), turn) for n, _, turn in (t.partition(".") for t in body.split())]
        assert pages.turns(text) == by_hand
        removed += sum("x" in turn for _, turn in by_hand)
    assert removed  # turns that removed a row and a ring among them


def test_a_record_that_cannot_be_read_shows_no_moves() -> None:
    assert pages.turns("") == []
    assert pages.turns('[Variant "yinsh"]\n\n1.e3 2.zz9') == []


@pytest.fixture
def finished(user: Any, other_user: Any) -> Match:
    """alice's bot (white) lost on time to bob's; its log tells a secret."""
    white, black = make_version(user, "alpha"), make_version(other_user, "beta")
    state = engine.State("yinsh")
    for token in ("e3", "a5", "b5"):
        state.play(token)
    outcome = engine.Outcome(engine.Result.BLACK, engine.Forfeit("time"))
    record = engine.Record.from_state(state, outcome, White="alpha v1", Black="beta v1")
    m = Match.objects.create(
        variant="yinsh",
        kind=Match.Kind.LADDER,
        status=Match.Status.FINISHED,
        white=white,
        black=black,
        time_control="5+0.1",
        result="black",
        termination="time",
        fault="white",
        reason="white ran out of time",
        detail=f"white ran out of time; stderr: {SECRET}",
    )
    MatchRecord.objects.create(
        match=m,
        record=record.to_text(long=True),
        record_short=record.to_text(long=False),
        transcript={
            "players": {
                "white": {"name": "alpha v1", "stderr_tail": SECRET, "stderr_bytes": 70},
                "black": {"name": "beta v1", "stderr_tail": "", "stderr_bytes": 0},
            },
            "moves": [
                {"color": "white", "action": "e3", "ms": 1.5},
                {"color": "black", "action": "a5", "ms": 2.0},
                {"color": "white", "action": "b5", "ms": 1.0},
            ],
        },
    )
    return m


def test_a_matchs_page_shows_its_moves_and_its_owners_log_to_the_owner(
    finished: Match, user: Any
) -> None:
    page = pages.match_page(finished, user)
    assert page.match == finished and page.data is not None and not page.live
    assert page.turns == [(1, "e3"), (2, "a5"), (3, "b5")]
    assert SECRET in page.reason
    [log] = page.logs
    assert log.colour == "white" and SECRET in log.stderr
    assert [(ply, action) for ply, action, _, _ in log.moves] == [(1, "e3"), (3, "b5")]


@pytest.mark.parametrize("viewer", ["bob", "anonymous"])
def test_everyone_else_reads_the_public_reason_and_no_log(
    finished: Match, other_user: Any, viewer: str
) -> None:
    page = pages.match_page(finished, other_user if viewer == "bob" else AnonymousUser())
    assert page.turns == [(1, "e3"), (2, "a5"), (3, "b5")]
    assert page.reason == "white ran out of time"
    # bob reads his own bot's log (black's), nobody else's.
    assert [log.colour for log in page.logs] == ([] if viewer == "anonymous" else ["black"])


def test_a_match_not_played_yet_is_followed_live(user: Any, other_user: Any) -> None:
    m = queued_match(make_version(user, "alpha"), make_version(other_user, "beta"))
    page = pages.match_page(m, AnonymousUser())
    assert page.live and page.data is None and page.turns == [] and page.logs == []


# ----------------------------------------------------------------------------- playing by hand


@pytest.fixture
def by_hand(user: Any, other_user: Any) -> Match:
    """alice's remote bot (black) against bob's uploaded bot, queued."""
    from arena.bots import services as bot_services

    mine = bot_services.create_remote_bot(user, "by-hand")
    return queued_match(make_version(other_user, "beta"), mine, kind=Match.Kind.CHALLENGE)


@pytest.mark.parametrize("status", [Match.Status.QUEUED, Match.Status.RUNNING])
def test_the_owner_of_a_remote_side_plays_it_while_the_match_is_live(
    by_hand: Match, user: Any, status: str
) -> None:
    Match.objects.filter(pk=by_hand.pk).update(status=status)
    by_hand.refresh_from_db()
    assert pages.match_page(by_hand, user).play == pages.PlaySide(
        bot="by-hand", color="black", opponent="beta v1", player=user.username
    )


@pytest.mark.parametrize(
    "status", [Match.Status.PENDING, Match.Status.FINISHED, Match.Status.ABORTED]
)
def test_a_match_not_queued_or_running_is_played_by_nobody(
    by_hand: Match, user: Any, status: str
) -> None:
    result = "white" if status == Match.Status.FINISHED else ""
    Match.objects.filter(pk=by_hand.pk).update(status=status, result=result)
    by_hand.refresh_from_db()
    assert pages.play_side(by_hand, user) is None


def test_nobody_else_plays_a_remote_side_nor_anyone_an_uploaded_one(
    by_hand: Match, user: Any, other_user: Any
) -> None:
    assert pages.play_side(by_hand, AnonymousUser()) is None
    assert pages.play_side(by_hand, other_user) is None  # the owner of the uploaded bot
    uploaded = queued_match(make_version(user, "alpha"), make_version(other_user, "gamma"))
    assert pages.play_side(uploaded, user) is None


def test_staff_play_a_remote_bot_but_never_a_persons_seat(
    by_hand: Match, user: Any, other_user: Any, django_user_model: Any
) -> None:
    from arena.bots import services as bot_services

    staff = django_user_model.objects.create_superuser("root", "root@example.net", "pw")
    assert pages.play_side(by_hand, staff) is not None  # as the API lets them
    seat = bot_services.seat_of(user)
    game = queued_match(make_version(other_user, "gamma"), seat, kind=Match.Kind.PERSON)
    assert pages.play_side(game, staff) is None
    assert pages.play_side(game, user) == pages.PlaySide(
        bot=seat.bot.name, color="black", opponent="gamma v1", player=user.username
    )


def test_the_match_page_gives_the_play_panel_and_its_urls_to_the_owner_alone(
    by_hand: Match, user: Any, other_user: Any
) -> None:
    owner = Client()
    owner.force_login(user)
    html = owner.get(f"/matches/{by_hand.pk}/").content.decode()
    assert f'data-play data-match="{by_hand.pk}" data-color="black"' in html
    assert 'data-events-url="/api/remote/by-hand/events/"' in html
    assert 'data-answer-url="/api/remote/by-hand/games/GAME/answer/"' in html
    assert "arena/play.js" in html
    stranger = Client()
    stranger.force_login(other_user)
    for client in (stranger, Client()):
        html = client.get(f"/matches/{by_hand.pk}/").content.decode()
        assert "data-play" not in html and "/api/remote/" not in html and "play.js" not in html
