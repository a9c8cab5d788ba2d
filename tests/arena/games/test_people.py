"""People at the board (arena.games.people): starting a game against a bot from its page, the
person's seat, who may play whom, and where the games are listed. The game itself is played by
the browser through the remote API (tests/arena/web/browser/test_play.py plays whole games)."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.test import Client

from arena.bots import services as bots
from arena.bots.models import Bot, BotVersion
from arena.duels import services as duels
from arena.games import people
from arena.games.models import Match
from arena.tournaments import services as tournaments
from tests.arena.api.test_api import client_for
from tests.arena.conftest import make_version


def playable(owner: Any, name: str = "friendly", **fields: Any) -> Bot:
    """An active bot of ``owner`` that lets people play it."""
    version = make_version(owner, name, **fields)
    Bot.objects.filter(pk=version.bot_id).update(people=True)
    return Bot.objects.get(pk=version.bot_id)


def start(user: Any, bot: Bot, **given: str) -> Match:
    choices = {"variant": "blitz", "time_control": "300+3", "colour": "white", **given}
    return people.start(user, bot, **choices)


@pytest.mark.django_db
def test_a_person_starts_an_unrated_game_against_a_bot_on_the_remote_queue(
    user: Any, other_user: Any
) -> None:
    bot = playable(other_user)
    m = start(user, bot, colour="black")
    assert m.kind == Match.Kind.PERSON and not m.rated
    assert m.status == Match.Status.QUEUED and m.opening == ""
    assert m.white == bot.active_version
    seat = m.black.bot
    assert seat.kind == Bot.Kind.PERSON and seat.owner == user and seat.person and seat.remote
    assert m.black.label == "alice"
    assert m.queue() == settings.REMOTE_QUEUE
    assert m.time_control == "300+3"
    # The seat is made once: the next game takes the same one.
    Match.objects.filter(pk=m.pk).update(status=Match.Status.FINISHED, result="white")
    again = start(user, bot, colour="white")
    assert again.white == m.black
    assert Bot.objects.filter(kind=Bot.Kind.PERSON).count() == 1


@pytest.mark.django_db
def test_a_random_colour_is_white_or_black(user: Any, other_user: Any) -> None:
    bot = playable(other_user)
    m = start(user, bot, colour="random")
    assert Bot.Kind.PERSON in (m.white.bot.kind, m.black.bot.kind)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("given", "says"),
    [
        ({"variant": "chess"}, "unknown variant"),
        ({"time_control": "1+0"}, "the time control must be one of"),
        ({"colour": "green"}, "the colour must be one of"),
    ],
)
def test_bad_choices_are_refused_and_start_nothing(
    user: Any, other_user: Any, given: dict[str, str], says: str
) -> None:
    bot = playable(other_user)
    with pytest.raises(people.PeopleError, match=says):
        start(user, bot, **given)
    assert not Match.objects.exists()


@pytest.mark.django_db
def test_a_variant_the_bot_does_not_play_is_refused(user: Any, other_user: Any) -> None:
    bot = playable(other_user, variants=["yinsh"])
    with pytest.raises(people.PeopleError, match="does not play Blitz"):
        start(user, bot)
    assert not Match.objects.exists()


@pytest.mark.django_db
def test_only_bots_whose_owners_allow_it_are_played(user: Any, other_user: Any) -> None:
    closed = Bot.objects.get(pk=make_version(other_user, "shy").bot_id)
    with pytest.raises(PermissionDenied):
        start(user, closed)
    # The owner may always play their own bot.
    own = Bot.objects.get(pk=make_version(user, "mine").bot_id)
    assert start(user, own).kind == Match.Kind.PERSON
    # Nobody plays a person's seat, nor a withdrawn bot.
    seat = bots.seat_of(user).bot
    assert not people.can_play(other_user, seat)
    gone = playable(other_user, "gone")
    Bot.objects.filter(pk=gone.pk).update(status=Bot.Status.WITHDRAWN)
    gone.refresh_from_db()
    assert not people.can_play(user, gone)


@pytest.mark.django_db
def test_one_game_at_a_time(user: Any, other_user: Any) -> None:
    bot = playable(other_user)
    first = start(user, bot)
    with pytest.raises(people.PeopleError, match="playing a game already"):
        start(user, bot)
    assert people.open_game(user) == first
    Match.objects.filter(pk=first.pk).update(status=Match.Status.FINISHED, result="black")
    assert people.open_game(user) is None
    start(user, bot)


@pytest.mark.django_db
def test_a_seat_is_no_bot_for_duels_tournaments_or_names(user: Any, other_user: Any) -> None:
    seat = bots.seat_of(user)
    theirs = make_version(other_user, "target")
    with pytest.raises(duels.DuelError, match="is a person"):
        duels.check_version(seat, "blitz", "candidate")
    assert seat not in duels.playable_versions()
    with pytest.raises(bots.UploadError, match="names people's seats"):
        bots.validate_name("person-77")
    with pytest.raises(tournaments.TournamentError, match="people's seats"):
        tournaments.create(
            user,
            name="with a person",
            variant="blitz",
            bots=[seat.bot, theirs.bot],
            time_control="5+0.1",
            games_per_pair=2,
        )


@pytest.mark.django_db
def test_seats_are_listed_nowhere_as_bots(user: Any, other_user: Any) -> None:
    seat = bots.seat_of(user)
    make_version(user, "listed")
    c = Client()
    c.force_login(user)
    listed = c.get("/bots/").content.decode()
    assert "listed" in listed and seat.bot.name not in listed
    assert seat.bot.name not in c.get("/accounts/bots/").content.decode()
    names = [b["name"] for b in client_for(user).get("/api/bots/").json()["results"]]
    assert names == ["listed"]
    # Its page is the person's.
    r = c.get(f"/bots/{seat.bot.name}/")
    assert r.status_code == 302 and r["Location"] == "/people/alice/"


@pytest.mark.django_db
def test_the_bot_page_offers_the_game_and_lists_its_games_against_people(
    user: Any, other_user: Any
) -> None:
    bot = playable(other_user)
    shy = Bot.objects.get(pk=make_version(other_user, "shy").bot_id)
    c = Client()
    assert "Play friendly" not in c.get("/bots/friendly/").content.decode()  # anonymous
    c.force_login(user)
    page = c.get("/bots/friendly/").content.decode()
    assert "Play friendly" in page and 'action="/bots/friendly/play/"' in page
    assert "Play shy" not in c.get(f"/bots/{shy.name}/").content.decode()
    r = c.post(
        "/bots/friendly/play/", {"variant": "blitz", "time_control": "180+2", "colour": "white"}
    )
    m = Match.objects.get()
    assert r.status_code == 302 and r["Location"] == f"/matches/{m.pk}/"
    assert m.time_control == "180+2" and m.white.bot.person
    page = c.get("/bots/friendly/").content.decode()
    assert "Against people" in page and f"/matches/{m.pk}/" in page
    assert "finish it first" in page
    # The person's page lists it, under their name, for anyone.
    person = Client().get("/people/alice/").content.decode()
    assert f"/matches/{m.pk}/" in person and "friendly v1" in person
    assert Client().get("/people/nobody/").status_code == 404
    # The match page names the person.
    assert "(a person)" in Client().get(f"/matches/{m.pk}/").content.decode()
    assert bot.pk


@pytest.mark.django_db
def test_bad_form_input_starts_nothing(user: Any, other_user: Any) -> None:
    playable(other_user)
    make_version(other_user, "shy")
    c = Client()
    c.force_login(user)
    r = c.post("/bots/friendly/play/", {"variant": "yinsh", "time_control": "1+0"})
    assert r.status_code == 200 and "Select a valid choice" in r.content.decode()
    assert c.post("/bots/shy/play/", {"variant": "blitz"}).status_code == 403
    assert c.get("/bots/friendly/play/").status_code == 405
    anonymous = Client().post("/bots/friendly/play/", {"variant": "blitz"})
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert not Match.objects.exists()


@pytest.mark.django_db
def test_the_owner_opts_in_on_the_edit_page_and_through_the_api(user: Any) -> None:
    make_version(user, "mine")
    c = Client()
    c.force_login(user)
    r = c.post("/bots/mine/edit/", {"description": "", "people": "on"})
    assert r.status_code == 302 and Bot.objects.get(name="mine").people
    r = client_for(user).patch("/api/bots/mine/", {"people": False}, format="json")
    assert r.status_code == 200 and r.json()["people"] is False
    assert not Bot.objects.get(name="mine").people


@pytest.mark.django_db
def test_only_the_person_plays_their_seat_through_the_remote_api(
    user: Any, other_user: Any, django_user_model: Any
) -> None:
    seat = bots.seat_of(user).bot
    assert client_for(user).get(f"/api/remote/{seat.name}/events/").status_code == 200
    assert client_for(other_user).get(f"/api/remote/{seat.name}/events/").status_code == 403
    staff = django_user_model.objects.create_superuser("root", password="a-long-password-3")
    assert client_for(staff).get(f"/api/remote/{seat.name}/events/").status_code == 403


@pytest.mark.django_db
def test_built_in_bots_let_people_play_them(system_user: Any) -> None:
    made = bots.register_builtin_bots(names=["random"])
    assert made and made[0].bot.people
    assert isinstance(made[0], BotVersion)


@pytest.mark.django_db
def test_a_person_who_loses_on_time_again_and_again_flags_nothing(
    user: Any, other_user: Any, settings: Any
) -> None:
    from arena.games import services as games
    from arena.games.models import FailureAlert
    from arena.jobs import claims
    from tests.arena.games.test_matches import fake_result

    settings.FAILING_MIN_GAMES = 2
    bot = playable(other_user)
    for _ in range(3):
        m = start(user, bot, colour="black", variant="yinsh")
        attempt = claims.claim(Match, m.pk)
        assert attempt is not None
        assert games.finish(m.pk, attempt, fake_result("yinsh", "white"))  # black's fault
    assert Match.objects.filter(status=Match.Status.FINISHED, fault="black").count() == 3
    assert not FailureAlert.objects.exists()
