"""Scheduled tournaments: started once when due with the opted-in bots, owners told, the next
start moved on (missed periods skipped); refusals tell the organiser and change nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client
from rest_framework.test import APIClient

from arena.bots.models import Bot
from arena.games import services as games
from arena.games.models import Match
from arena.notifications import services as notifications
from arena.notifications.models import Event, Notification, NotificationSettings
from arena.tournaments import schedules, tasks
from arena.tournaments.models import Schedule, Tournament
from arena.tournaments.services import TournamentError
from tests.arena.conftest import make_version

T0 = datetime(2025, 3, 3, 18, 0, tzinfo=UTC)
WEEK = timedelta(days=7)


def opt_in(owner: Any, name: str, *, variants: list[str] | None = None, **bot: Any) -> Bot:
    b = make_version(owner, name, variants=variants).bot
    Bot.objects.filter(pk=b.pk).update(scheduled_events=True, **bot)
    b.refresh_from_db()
    return b


def weekly(organiser: Any, **kw: Any) -> Schedule:
    args: dict[str, Any] = {
        "name": "Monday cup",
        "variant": "blitz",
        "time_control": "5+0.1",
        "games_per_pair": 2,
        "first_start": T0,
        "interval_days": 7,
    }
    return schedules.create(organiser, **(args | kw))


@pytest.mark.django_db
def test_a_due_schedule_starts_one_tournament_of_the_opted_in_bots_and_tells_their_owners(
    user: Any, other_user: Any
) -> None:
    a = opt_in(user, "alpha")
    b = opt_in(other_user, "beta")
    c = opt_in(other_user, "gamma")
    make_version(other_user, "not-opted-in")
    opt_in(other_user, "yinsh-only", variants=["yinsh"])
    opt_in(other_user, "withdrawn", status=Bot.Status.WITHDRAWN)
    s = weekly(user)
    started = schedules.start_due(T0 + timedelta(minutes=1))
    assert len(started) == 1
    t = started[0]
    assert {e.version.bot for e in t.entries.all()} == {a, b, c}
    assert t.variant == "blitz" and not t.rated and t.matches.exists()
    s.refresh_from_db()
    assert s.next_start == T0 + WEEK
    assert s.last_tournament == t and list(s.tournaments.all()) == [t]
    told = Notification.objects.filter(event=Event.TOURNAMENT_STARTED)
    assert sorted(n.user_id for n in told) == sorted([user.pk, other_user.pk])
    assert all(n.url.endswith(f"/tournaments/{t.pk}/") for n in told)


@pytest.mark.django_db
def test_missed_periods_are_skipped_not_caught_up(user: Any) -> None:
    opt_in(user, "alpha")
    opt_in(user, "beta")
    s = weekly(user)
    assert len(schedules.start_due(T0 + 3 * WEEK + timedelta(days=2))) == 1
    s.refresh_from_db()
    assert s.next_start == T0 + 4 * WEEK
    assert schedules.start_due(T0 + 3 * WEEK + timedelta(days=3)) == []
    assert Tournament.objects.count() == 1


@pytest.mark.django_db
def test_running_the_task_twice_or_racing_starts_one_tournament(user: Any) -> None:
    opt_in(user, "alpha")
    opt_in(user, "beta")
    s = weekly(user, first_start=datetime.now(UTC) - timedelta(minutes=1))
    due = s.next_start
    now = due + timedelta(minutes=1)
    # Two workers that both saw it due: the second's claim finds the next start moved on.
    assert schedules.start_one(s.pk, due, now) is not None
    assert schedules.start_one(s.pk, due, now) is None
    assert tasks.start_scheduled() == 0
    assert Tournament.objects.count() == 1


@pytest.mark.django_db
def test_too_few_entrants_start_nothing_tell_the_organiser_and_move_on(user: Any) -> None:
    opt_in(user, "alpha")
    s = weekly(user)
    assert schedules.start_due(T0) == []
    assert not Tournament.objects.exists()
    s.refresh_from_db()
    assert s.next_start == T0 + WEEK
    (n,) = Notification.objects.filter(user=user, event=Event.SCHEDULE_SKIPPED)
    assert "at least 2 bots" in n.text and n.url.endswith(f"/tournaments/schedules/{s.pk}/")


@pytest.mark.django_db
def test_swiss_rounds_too_many_for_the_bots_at_start_are_refused_with_a_notice(
    user: Any,
) -> None:
    for name in ("alpha", "beta", "gamma"):
        opt_in(user, name)
    s = weekly(user, format="swiss", rounds=5, games_per_pair=2)
    assert schedules.start_due(T0) == []
    assert not Tournament.objects.exists()
    (n,) = Notification.objects.filter(user=user, event=Event.SCHEDULE_SKIPPED)
    assert "did not start" in n.text
    s.refresh_from_db()
    assert s.next_start == T0 + WEEK


@pytest.mark.django_db
def test_a_paused_schedule_starts_nothing_and_resumes_at_its_next_time(user: Any) -> None:
    opt_in(user, "alpha")
    opt_in(user, "beta")
    s = weekly(user)
    assert schedules.pause(user, s)
    assert schedules.start_due(T0 + timedelta(days=1)) == []
    assert not Tournament.objects.exists()
    assert schedules.resume(user, s, now=T0 + timedelta(days=8))
    s.refresh_from_db()
    assert s.status == Schedule.Status.ACTIVE and s.next_start == T0 + 2 * WEEK


@pytest.mark.django_db
def test_a_rated_event_takes_only_the_bots_that_accept_rated_tournaments(
    user: Any, other_user: Any
) -> None:
    mine = opt_in(user, "mine")
    willing = opt_in(other_user, "willing", rated_tournaments=True)
    opt_in(other_user, "unwilling")
    weekly(user, rated=True)
    (t,) = schedules.start_due(T0)
    assert t.rated
    assert {e.version.bot for e in t.entries.all()} == {mine, willing}


@pytest.mark.django_db
def test_owners_who_turned_the_event_off_are_not_told_by_email(user: Any) -> None:
    opt_in(user, "alpha")
    opt_in(user, "beta")
    NotificationSettings.objects.create(user=user, events=[Event.TOURNAMENT_FINISHED])
    weekly(user)
    schedules.start_due(T0)
    n = Notification.objects.get(event=Event.TOURNAMENT_STARTED)
    assert notifications.fan_out(n.pk) == 0 and not n.deliveries.exists()


@pytest.mark.django_db
def test_bad_schedules_are_refused_and_save_nothing(user: Any, other_user: Any) -> None:
    bad: list[dict[str, Any]] = [
        {"interval_days": 0},
        {"interval_days": 366},
        {"format": "ladder"},
        {"format": "round-robin", "rounds": 3},
        {"format": "knockout", "games_per_pair": 3},
        {"time_control": "fast"},
        {"name": " "},
        {"variant": "chess"},
        {"first_start": datetime(2025, 3, 3, 18)},
    ]
    for kw in bad:
        with pytest.raises(TournamentError):
            weekly(user, **kw)
    s = weekly(user)
    with pytest.raises(TournamentError):
        schedules.update(user, s, name="renamed", interval_days=0)
    with pytest.raises(PermissionDenied):
        schedules.update(other_user, s, name="theirs")
    assert Schedule.objects.get().name == "Monday cup"


@pytest.mark.django_db
def test_a_scheduled_tournament_is_played_through_to_the_end(user: Any) -> None:
    opt_in(user, "alpha")
    opt_in(user, "beta")
    weekly(user, games_per_pair=2)
    (t,) = schedules.start_due(T0)
    while (m := t.matches.filter(status=Match.Status.QUEUED).first()) is not None:
        assert games.play(m.pk) == "finished"
    t.refresh_from_db()
    assert t.status == Tournament.Status.FINISHED
    assert Notification.objects.filter(event=Event.TOURNAMENT_FINISHED, user=user).exists()


# ----------------------------------------------------------------------------- site and API


@pytest.mark.django_db
def test_the_organiser_schedules_pauses_and_deletes_on_the_site(user: Any) -> None:
    c = Client()
    c.force_login(user)
    form = {
        "name": "Weekly Swiss",
        "variant": "blitz",
        "format": "swiss",
        "time_control": "5+0.1",
        "games_per_pair": "2",
        "first_start": "2030-01-07T18:00",
        "interval_days": "7",
    }
    r = c.post("/tournaments/schedules/", form | {"interval_days": "0"})
    assert r.status_code == 200 and not Schedule.objects.exists()
    r = c.post("/tournaments/schedules/", form | {"format": "knockout", "games_per_pair": "3"})
    assert r.status_code == 200 and b"even" in r.content and not Schedule.objects.exists()
    r = c.post("/tournaments/schedules/", form)
    s = Schedule.objects.get()
    assert r.status_code == 302 and r["Location"] == f"/tournaments/schedules/{s.pk}/"
    assert s.next_start == datetime(2030, 1, 7, 18, tzinfo=UTC) and s.format == "swiss"
    link = f'href="/tournaments/schedules/{s.pk}/"'.encode()
    assert link in c.get("/tournaments/").content
    assert b"Pause" in c.get(f"/tournaments/schedules/{s.pk}/").content
    c.post(f"/tournaments/schedules/{s.pk}/pause/")
    s.refresh_from_db()
    assert s.status == Schedule.Status.PAUSED
    assert link not in c.get("/tournaments/").content  # only active ones are upcoming
    c.post(f"/tournaments/schedules/{s.pk}/delete/")
    assert not Schedule.objects.exists()


@pytest.mark.django_db
def test_others_cannot_change_a_schedule_on_the_site(user: Any, other_user: Any) -> None:
    s = weekly(user)
    c = Client()
    c.force_login(other_user)
    assert c.post(f"/tournaments/schedules/{s.pk}/delete/").status_code == 403
    assert c.get(f"/tournaments/schedules/{s.pk}/").status_code == 200
    assert Schedule.objects.filter(pk=s.pk).exists()


@pytest.mark.django_db
def test_the_api_creates_reads_changes_and_deletes_schedules(user: Any, other_user: Any) -> None:
    opt_in(other_user, "alpha")
    api = APIClient()
    api.force_authenticate(user)
    body = {
        "name": "Daily",
        "variant": "blitz",
        "first_start": "2030-01-01T00:00:00Z",
        "interval_days": 1,
    }
    for bad in ({"interval_days": 0}, {"format": "ladder"}, {"rounds": 2}):
        assert api.post("/api/schedules/", body | bad, format="json").status_code == 400
    assert not Schedule.objects.exists()
    r = api.post("/api/schedules/", body, format="json")
    assert r.status_code == 201, r.json()
    pk = r.json()["id"]
    got = APIClient().get(f"/api/schedules/{pk}/").json()
    assert got["entrants"] == ["alpha"] and got["status"] == "active"
    assert [s["id"] for s in APIClient().get("/api/schedules/").json()["results"]] == [pk]
    theirs = APIClient()
    theirs.force_authenticate(other_user)
    assert theirs.patch(f"/api/schedules/{pk}/", {"name": "x"}, format="json").status_code == 403
    assert theirs.delete(f"/api/schedules/{pk}/").status_code == 403
    assert (
        api.patch(f"/api/schedules/{pk}/", {"interval_days": 0}, format="json").status_code == 400
    )
    r = api.patch(f"/api/schedules/{pk}/", {"status": "paused", "interval_days": 7}, format="json")
    assert r.status_code == 200 and r.json()["status"] == "paused"
    assert r.json()["interval_days"] == 7
    assert api.delete(f"/api/schedules/{pk}/").status_code == 204
    assert not Schedule.objects.exists()


@pytest.mark.django_db
def test_an_owner_opts_a_bot_in_on_its_page_and_through_the_api(user: Any) -> None:
    b = make_version(user, "alpha").bot
    assert not b.scheduled_events
    c = Client()
    c.force_login(user)
    c.post("/bots/alpha/edit/", {"description": "", "scheduled_events": "on"})
    b.refresh_from_db()
    assert b.scheduled_events
    api = APIClient()
    api.force_authenticate(user)
    r = api.patch("/api/bots/alpha/", {"scheduled_events": False}, format="json")
    assert r.status_code == 200 and r.json()["scheduled_events"] is False
    assert (
        api.patch("/api/bots/alpha/", {"scheduled_events": "on"}, format="json").status_code == 400
    )
    b.refresh_from_db()
    assert not b.scheduled_events
