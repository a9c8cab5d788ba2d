"""Celery set-up: late acknowledgement, prefetch 1, time limits under the visibility timeout,
the beat schedule, and tasks that take ids."""

from __future__ import annotations

import inspect

from django.conf import settings

import engine
from arena.admission.tasks import check_version
from arena.bots.models import check_limits
from arena.celery import app as celery_app
from arena.games.tasks import play_match
from arena.jobs.limits import budget_seconds, time_limits
from arena.jobs.tasks import sweep
from arena.tournaments.limits import MAX_GAMES_PER_PAIR
from arena.tournaments.services import check_time_control


def test_tasks_are_acknowledged_late_one_at_a_time() -> None:
    assert celery_app.conf.task_acks_late is True
    assert celery_app.conf.task_reject_on_worker_lost is True
    assert celery_app.conf.worker_prefetch_multiplier == 1
    for task in (play_match, check_version, sweep):
        assert task.acks_late is True


def test_every_hard_time_limit_is_below_the_visibility_timeout() -> None:
    visibility = settings.CELERY_VISIBILITY_TIMEOUT
    if settings.REDIS_URL:
        assert celery_app.conf.broker_transport_options["visibility_timeout"] == visibility
    for tc in {settings.LADDER_TIME_CONTROL, settings.QUALIFICATION_TIME_CONTROL}:
        soft, hard = time_limits(tc, builds=2)
        assert budget_seconds(tc) + 2 * settings.BOT_BUILD_SECONDS <= soft < hard
        assert hard < visibility
    soft, hard = check_limits()
    assert settings.BOT_BUILD_SECONDS < soft < hard < visibility


def test_a_checks_time_limit_covers_a_bot_that_declares_every_variant() -> None:
    n = len(engine.VARIANTS)
    soft, _ = check_limits()
    conformance = budget_seconds(settings.CHECK_TIME_CONTROL, games=n)
    qualification = budget_seconds(settings.QUALIFICATION_TIME_CONTROL, games=2 * n)
    assert soft >= conformance + qualification


def test_tournament_time_controls_are_capped_by_the_visibility_timeout() -> None:
    import pytest

    from arena.tournaments.services import TournamentError

    longest = "600+5"
    check_time_control(longest)
    assert time_limits(longest, builds=2)[1] < settings.CELERY_VISIBILITY_TIMEOUT
    with pytest.raises(TournamentError, match="too long"):
        check_time_control("7200+30")
    assert MAX_GAMES_PER_PAIR >= 2


def test_the_heartbeat_is_much_faster_than_the_sweepers_patience() -> None:
    assert settings.MATCH_STALE_AFTER_S >= 3 * settings.MATCH_HEARTBEAT_S


def test_the_beat_schedule_names_real_tasks() -> None:
    celery_app.loader.import_default_modules()  # what a worker does at start: every tasks.py
    names = set(celery_app.tasks)
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["task"] in names, entry["task"]
        assert entry["options"]["queue"] == settings.PERIODIC_QUEUE
        assert celery_app.tasks[entry["task"]].acks_late is True


def test_tasks_take_ids_only() -> None:
    for task in (play_match, check_version):
        params = list(inspect.signature(task.run).parameters)
        assert params[-1].endswith("_id"), params
