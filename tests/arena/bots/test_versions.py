"""A bot's versions stay: a retired one keeps its rating, and its owner can make it the active
one again (service, page and API)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from arena.admission import services as admission
from arena.bots import services
from arena.bots.models import Bot, BotVersion
from arena.games import recount
from arena.games.models import Match
from arena.ratings import services as ratings
from arena.ratings.models import Rating
from tests.arena.conftest import make_version
from tests.arena.ratings.test_ladder_and_ratings import results

V = BotVersion.Status
S = Match.Status


def two_versions(owner: Any, name: str = "mine") -> tuple[BotVersion, BotVersion]:
    """A bot with v1 retired and v2 active."""
    old = make_version(owner, name, status=V.RETIRED)
    new = make_version(owner, name)
    return old, new


def ladder_match(white: BotVersion, black: BotVersion, status: str = S.QUEUED) -> Match:
    return Match.objects.create(
        variant="yinsh",
        kind=Match.Kind.LADDER,
        status=status,
        white=white,
        black=black,
        time_control="1+0",
    )


# ----------------------------------------------------------------------------- the service


@pytest.mark.django_db
def test_the_owner_makes_a_retired_version_active_and_the_active_one_retires(user: Any) -> None:
    old, new = two_versions(user)
    done = services.activate(user, old)
    assert done.pk == old.pk and done.status == V.ACTIVE
    new.refresh_from_db()
    assert new.status == V.RETIRED
    assert old.bot.active_version == old
    # And back again.
    services.activate(user, new)
    assert old.bot.active_version == new
    assert BotVersion.objects.filter(bot=old.bot, status=V.ACTIVE).count() == 1


@pytest.mark.django_db
def test_activating_the_active_version_changes_nothing(user: Any) -> None:
    old, new = two_versions(user)
    assert services.activate(user, new).status == V.ACTIVE
    old.refresh_from_db()
    assert old.status == V.RETIRED


@pytest.mark.django_db
@pytest.mark.parametrize("status", [V.PENDING, V.CHECKING, V.REJECTED, V.HELD])
def test_a_version_that_did_not_pass_its_check_cannot_be_made_active(
    user: Any, status: str
) -> None:
    active = make_version(user, "mine")
    other = make_version(user, "mine", status=status)
    with pytest.raises(services.ActivationError, match="only a version that passed its check"):
        services.activate(user, other)
    active.refresh_from_db()
    other.refresh_from_db()
    assert (active.status, other.status) == (V.ACTIVE, status)


@pytest.mark.django_db
def test_only_the_owner_activates_a_version(user: Any, other_user: Any) -> None:
    old, new = two_versions(user)
    with pytest.raises(PermissionDenied):
        services.activate(other_user, old)
    old.refresh_from_db()
    assert old.status == V.RETIRED and old.bot.active_version == new


@pytest.mark.django_db
def test_no_version_of_a_withdrawn_bot_can_be_made_active(user: Any, anchor: Any) -> None:
    old, new = two_versions(user)
    ladder_match(new, anchor)
    assert services.delete_bot(user, old.bot) == "withdrawn"
    old.refresh_from_db()
    with pytest.raises(services.ActivationError, match="was withdrawn"):
        services.activate(user, old)
    assert not BotVersion.objects.filter(bot=old.bot, status=V.ACTIVE).exists()


@pytest.mark.django_db
def test_the_ladder_games_waiting_for_the_version_that_retires_are_cancelled(
    user: Any, anchor: Any
) -> None:
    old, new = two_versions(user)
    waiting = ladder_match(new, anchor)
    running = ladder_match(anchor, new, S.RUNNING)
    services.activate(user, old)
    waiting.refresh_from_db()
    running.refresh_from_db()
    assert waiting.status == S.CANCELLED
    assert running.status == S.RUNNING  # a game under way finishes and counts


@pytest.mark.django_db
def test_a_version_that_passes_its_check_cancels_its_predecessors_waiting_ladder_games(
    user: Any, anchor: Any
) -> None:
    old = make_version(user, "mine")
    waiting = ladder_match(anchor, old)
    new = make_version(user, "mine", status=V.CHECKING)
    BotVersion.objects.filter(pk=new.pk).update(attempts=1)
    assert admission.close_check(new.pk, 1, admission.Verdict(True, ["ok"])) is not None
    old.refresh_from_db()
    waiting.refresh_from_db()
    assert old.status == V.RETIRED and waiting.status == S.CANCELLED


@pytest.mark.django_db
def test_a_retired_version_keeps_its_rating_through_every_refit(user: Any, anchor: Any) -> None:
    old, new = two_versions(user)
    results({(old, anchor): (6, 1, 3), (new, anchor): (8, 0, 2)})
    recount.recompute("yinsh")
    before = Rating.objects.get(version=old, variant="yinsh")
    ratings.refresh("yinsh", force=True)
    after = Rating.objects.get(version=old, variant="yinsh")
    assert (after.games, round(after.elo, 6)) == (before.games, round(before.elo, 6))
    assert old not in [r.version for r in ratings.leaderboard("yinsh")]
    assert old in [r.version for r in ratings.leaderboard("yinsh", include_retired=True)]
    services.activate(user, old)
    assert old in [r.version for r in ratings.leaderboard("yinsh")]
    assert new not in [r.version for r in ratings.leaderboard("yinsh")]


@pytest.mark.django_db
def test_a_retired_versions_rating_stays_frozen_when_its_opponents_ratings_move(
    user: Any, other_user: Any, anchor: Any
) -> None:
    old, new = two_versions(user)
    rival = make_version(other_user, "rival")
    results({(old, rival): (5, 0, 5), (rival, anchor): (7, 0, 3), (new, anchor): (6, 0, 4)})
    ratings.refresh("yinsh", force=True)
    frozen = Rating.objects.get(version=old, variant="yinsh")
    rival_before = Rating.objects.get(version=rival, variant="yinsh").elo
    # The rival crushes the anchor from now on: its rating rises, the retired one's does not.
    results({(rival, anchor): (20, 0, 0)})
    ratings.refresh("yinsh")
    assert Rating.objects.get(version=rival, variant="yinsh").elo > rival_before + 20
    after = Rating.objects.get(version=old, variant="yinsh")
    assert (after.elo, after.error, after.games, after.points) == (
        frozen.elo,
        frozen.error,
        frozen.games,
        frozen.points,
    )
    ranks = list(Rating.objects.filter(variant="yinsh").order_by("rank"))
    assert [r.elo for r in ranks] == sorted((r.elo for r in ranks), reverse=True)
    # Made active again, it is fitted with the others again.
    services.activate(user, old)
    ratings.refresh("yinsh", force=True)
    assert Rating.objects.get(version=old, variant="yinsh").elo != frozen.elo


# ----------------------------------------------------------------------------- the bot page


@pytest.mark.django_db
def test_the_bot_page_offers_its_owner_to_activate_each_retired_version(
    user: Any, other_user: Any
) -> None:
    old, new = two_versions(user)
    url = f"/bots/{old.bot.name}/v{old.number}/activate/"
    c = Client()
    c.force_login(user)
    page = c.get(f"/bots/{old.bot.name}/").content.decode()
    assert url in page and f"/v{new.number}/activate/" not in page
    c.force_login(other_user)
    assert url not in c.get(f"/bots/{old.bot.name}/").content.decode()
    assert url not in Client().get(f"/bots/{old.bot.name}/").content.decode()


@pytest.mark.django_db
def test_activating_from_the_page_needs_the_owner_and_a_post(user: Any, other_user: Any) -> None:
    old, new = two_versions(user)
    url = f"/bots/{old.bot.name}/v{old.number}/activate/"
    c = Client()
    assert c.post(url).status_code == 302  # to the login page
    c.force_login(other_user)
    assert c.post(url).status_code == 403
    c.force_login(user)
    assert c.get(url).status_code == 405
    old.refresh_from_db()
    assert old.status == V.RETIRED
    r = c.post(url, follow=True)
    assert "is the active version" in r.content.decode()
    old.refresh_from_db()
    new.refresh_from_db()
    assert (old.status, new.status) == (V.ACTIVE, V.RETIRED)


@pytest.mark.django_db
def test_the_page_says_why_a_version_cannot_be_made_active(user: Any) -> None:
    make_version(user, "mine")
    bad = make_version(user, "mine", status=V.REJECTED)
    c = Client()
    c.force_login(user)
    r = c.post(f"/bots/mine/v{bad.number}/activate/", follow=True)
    assert "only a version that passed its check" in r.content.decode()
    bad.refresh_from_db()
    assert bad.status == V.REJECTED


# ----------------------------------------------------------------------------- the API


def api(user: Any) -> APIClient:
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return c


@pytest.mark.django_db
def test_the_api_activates_a_retired_version_for_its_owner(user: Any, other_user: Any) -> None:
    old, new = two_versions(user)
    url = f"/api/versions/{old.pk}/activate/"
    assert APIClient().post(url).status_code in (401, 403)
    assert api(other_user).post(url).status_code == 403
    old.refresh_from_db()
    assert old.status == V.RETIRED
    r = api(user).post(url)
    assert r.status_code == 200, r.content
    assert r.json()["status"] == "active" and r.json()["number"] == old.number
    new.refresh_from_db()
    assert new.status == V.RETIRED


@pytest.mark.django_db
def test_the_api_refuses_to_activate_a_rejected_version_with_a_409(user: Any) -> None:
    make_version(user, "mine")
    bad = make_version(user, "mine", status=V.REJECTED)
    r = api(user).post(f"/api/versions/{bad.pk}/activate/")
    assert r.status_code == 409
    assert "only a version that passed its check" in r.json()["detail"]
    assert Bot.objects.get(name="mine").active_version is not None
    assert api(user).post("/api/versions/999999/activate/").status_code == 404


@pytest.mark.django_db
def test_a_bot_accepts_rated_tournaments_of_its_owner_or_when_its_owner_says_so(
    user: Any, other_user: Any, anchor: BotVersion
) -> None:
    bot = make_version(user, "mine").bot
    assert not bot.rated_tournaments  # off until its owner says so
    assert bot.accepts_rated_tournaments(user.pk)  # its owner's own tournaments
    assert not bot.accepts_rated_tournaments(other_user.pk)
    assert anchor.bot.accepts_rated_tournaments(user.pk)  # a built-in bot always
    with pytest.raises(PermissionDenied):
        services.update_bot(other_user, bot, description="", rated_tournaments=True)
    assert not Bot.objects.get(pk=bot.pk).rated_tournaments
    services.update_bot(user, bot, description="mine", rated_tournaments=True)
    bot = Bot.objects.get(pk=bot.pk)
    assert bot.rated_tournaments and bot.accepts_rated_tournaments(other_user.pk)
    assert not bot.rated_challenges  # each consent on its own


@pytest.mark.django_db
def test_an_owner_changes_only_the_choices_given(user: Any) -> None:
    bot = make_version(user, "mine").bot
    Bot.objects.filter(pk=bot.pk).update(description="as it was")
    bot = Bot.objects.get(pk=bot.pk)
    services.update_bot(user, bot, people=True, analysis=True)
    bot = Bot.objects.get(pk=bot.pk)
    assert (bot.people, bot.analysis, bot.description) == (True, True, "as it was")
    assert not any(getattr(bot, c) for c in Bot.CHOICES if c not in ("people", "analysis"))
    with pytest.raises(TypeError, match="not a choice of a bot's owner: trusted"):
        services.update_bot(user, bot, trusted=True)
    assert not Bot.objects.get(pk=bot.pk).trusted
