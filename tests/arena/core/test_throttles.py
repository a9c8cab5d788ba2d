"""Throttles: the limits on uploads, tests, challenges and tournaments (one check in the
services, shared by the site and the API: 429 with Retry-After there) and on API requests."""

from __future__ import annotations

import doctest
import os
import subprocess
import sys
import time
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client

import arena.core.throttles
from arena.bots import services as bots
from arena.bots.models import Bot, BotVersion
from arena.bots.unpack import UploadError
from arena.checks import check_throttle_rates
from arena.core import throttles
from arena.duels import services as duels
from arena.duels.models import Duel
from arena.tournaments import services as tournaments
from arena.tournaments.models import Tournament
from tests.arena.api.test_api import client_for
from tests.arena.conftest import BOTS, ROOT, make_version, upload, zipped_folder


@pytest.fixture
def bot_zip() -> bytes:
    return zipped_folder(BOTS / "random")


# ----------------------------------------------------------------------------- the check


def test_rates_read_as_drf_writes_them_and_bad_ones_are_refused_by_a_system_check(
    settings: Any,
) -> None:
    assert throttles.parse_rate("3/day") == throttles.Rate(3, 86400)
    assert str(throttles.Rate(20, 3600)) == "20 per hour"
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "upload": "20/fortnight", "test": "x"}
    errors = check_throttle_rates(None)
    assert [e.id for e in errors] == ["arena.E003", "arena.E003"]
    assert "ARENA_THROTTLE_UPLOAD: '20/fortnight'" in errors[0].msg


@pytest.mark.django_db
def test_uploads_over_the_rate_are_refused_and_change_nothing(
    user: Any, other_user: Any, settings: Any, bot_zip: bytes
) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "upload": "2/hour"}
    first = bots.create_bot(user, "one", upload(bot_zip, "b.zip"))
    bots.add_version(user, first.bot, upload(bot_zip, "b.zip"))
    with pytest.raises(throttles.Throttled) as refused:
        bots.create_bot(user, "two", upload(bot_zip, "b.zip"))
    assert str(refused.value).startswith("too many uploads: at most 2 per hour; try again in ")
    assert 3500 < refused.value.wait <= 3600
    with pytest.raises(throttles.Throttled):
        bots.add_version(user, first.bot, upload(bot_zip, "b.zip"))
    assert list(Bot.objects.values_list("name", flat=True)) == ["one"]
    assert BotVersion.objects.count() == 2
    # Another user has a rate of their own; an operator has none.
    bots.create_bot(other_user, "theirs", upload(bot_zip, "b.zip"))
    user.is_staff = True
    user.save()
    bots.create_bot(user, "staff", upload(bot_zip, "b.zip"))


@pytest.mark.django_db
def test_a_refused_upload_does_not_count(user: Any, settings: Any, bot_zip: bytes) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "upload": "1/hour"}
    for _ in range(3):
        with pytest.raises(UploadError):
            bots.create_bot(user, "bad", upload(b"not a zip", "b.zip"))
    bots.create_bot(user, "good", upload(bot_zip, "b.zip"))
    with pytest.raises(throttles.Throttled):
        bots.create_bot(user, "more", upload(bot_zip, "b.zip"))


@pytest.mark.django_db
def test_actions_older_than_the_period_no_longer_count(user: Any, settings: Any) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "upload": "2/hour"}
    now = time.time()
    cache.set(f"throttle:upload:{user.pk}", [now - 3599, now - 3601, now - 7200], 3600)
    throttles.check(user, "upload")  # one in the last hour
    throttles.record(user, "upload")
    with pytest.raises(throttles.Throttled) as refused:
        throttles.check(user, "upload")
    assert refused.value.wait == 1  # the older of the two leaves the window in a second


@pytest.mark.django_db
def test_tests_challenges_and_tournaments_have_rates_of_their_own(
    user: Any, other_user: Any, settings: Any
) -> None:
    settings.OPEN_TOURNAMENTS = True
    settings.THROTTLE_RATES = {
        **settings.THROTTLE_RATES,
        "test": "1/hour",
        "challenge": "1/day",
        "tournament": "1/minute",
    }
    new = make_version(user, "mybot")
    old = make_version(user, "mybot", status=BotVersion.Status.RETIRED)
    theirs = make_version(other_user, "rival")
    duels.start_test(user, new, old, variant="yinsh", games=2)
    with pytest.raises(throttles.Throttled, match="too many tests: at most 1 per hour"):
        duels.start_test(user, new, old, variant="yinsh", games=2)
    duels.start_challenge(user, new, theirs, variant="yinsh", games=2)
    with pytest.raises(throttles.Throttled, match="too many challenges: at most 1 per day"):
        duels.start_challenge(user, new, theirs, variant="yinsh", games=2)
    assert Duel.objects.count() == 2
    entrants = [new.bot, theirs.bot]
    kw = {"variant": "yinsh", "time_control": "10+0.1", "games_per_pair": 1, "bots": entrants}
    tournaments.create(user, name="first", **kw)
    with pytest.raises(throttles.Throttled, match="too many tournaments: at most 1 per minute"):
        tournaments.create(user, name="second", **kw)
    assert list(Tournament.objects.values_list("name", flat=True)) == ["first"]


# ----------------------------------------------------------------------------- site and API


@pytest.mark.django_db
def test_the_site_says_why_with_429_and_the_api_adds_retry_after(
    user: Any, settings: Any, bot_zip: bytes
) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "upload": "1/hour"}
    api = client_for(user)
    r = api.post(
        "/api/bots/",
        {"name": "apibot", "file": SimpleUploadedFile("b.zip", bot_zip)},
        format="multipart",
    )
    assert r.status_code == 201
    r = api.post(
        "/api/bots/apibot/versions/",
        {"file": SimpleUploadedFile("b.zip", bot_zip)},
        format="multipart",
    )
    assert r.status_code == 429
    assert r.json()["detail"].startswith("too many uploads: at most 1 per hour; try again in ")
    assert 3500 < int(r["Retry-After"]) <= 3600
    site = Client()
    site.force_login(user)
    r = site.post("/upload/", {"name": "webbot", "file": SimpleUploadedFile("b.zip", bot_zip)})
    assert r.status_code == 429 and "too many uploads: at most 1 per hour" in r.content.decode()
    r = site.post("/bots/apibot/upload/", {"file": SimpleUploadedFile("b.zip", bot_zip)})
    assert r.status_code == 429 and "too many uploads" in r.content.decode()
    assert BotVersion.objects.count() == 1


@pytest.mark.django_db
def test_the_test_challenge_and_tournament_forms_say_why_with_429(
    user: Any, other_user: Any, settings: Any
) -> None:
    settings.OPEN_TOURNAMENTS = True
    off = {"test": "0/hour", "challenge": "0/hour", "tournament": "0/hour"}
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, **off}
    new = make_version(user, "mybot")
    old = make_version(user, "mybot", status=BotVersion.Status.RETIRED)
    theirs = make_version(other_user, "rival")
    site = Client()
    site.force_login(user)
    duel = {"variant": "yinsh", "time_control": "5+0.1", "games": "4"}
    r = site.post(
        "/bots/mybot/test/", {**duel, "candidate": new.pk, "opponent": old.pk, "mode": "games"}
    )
    assert r.status_code == 429 and "too many tests: at most 0 per hour" in r.content.decode()
    r = site.post("/bots/rival/challenge/", {**duel, "candidate": new.pk, "opponent": theirs.pk})
    assert r.status_code == 429 and "too many challenges" in r.content.decode()
    r = site.post(
        "/tournaments/new/",
        {
            "name": "Cup",
            "variant": "yinsh",
            "time_control": "5+0.1",
            "games_per_pair": 1,
            "bots": [new.bot.pk, theirs.bot.pk],
        },
    )
    assert r.status_code == 429 and "too many tournaments" in r.content.decode()
    assert not Duel.objects.exists() and not Tournament.objects.exists()


@pytest.mark.django_db
def test_the_api_answers_429_for_tests_challenges_and_tournaments(
    user: Any, other_user: Any, settings: Any
) -> None:
    settings.OPEN_TOURNAMENTS = True
    off = {"test": "0/hour", "challenge": "0/day", "tournament": "0/minute"}
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, **off}
    new = make_version(user, "mybot")
    old = make_version(user, "mybot", status=BotVersion.Status.RETIRED)
    theirs = make_version(other_user, "rival")
    api = client_for(user)
    duel = {"variant": "yinsh", "candidate": new.pk, "games": 4}
    r = api.post("/api/duels/", {**duel, "kind": "test", "opponent": old.pk}, format="json")
    assert r.status_code == 429 and r["Retry-After"] == "3600"
    assert r.json()["detail"] == "too many tests: at most 0 per hour; try again in 1 hour"
    r = api.post("/api/duels/", {**duel, "kind": "challenge", "opponent": theirs.pk}, format="json")
    assert r.status_code == 429 and r["Retry-After"] == "86400"
    tournament = {"name": "Cup", "variant": "yinsh", "bots": ["mybot", "rival"]}
    r = api.post("/api/tournaments/", tournament, format="json")
    assert r.status_code == 429 and r["Retry-After"] == "60", r.content
    assert not Duel.objects.exists() and not Tournament.objects.exists()


@pytest.mark.django_db
def test_the_upload_command_says_why_too(user: Any, settings: Any) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "upload": "1/day"}
    call_command("uploadbot", str(BOTS / "random"), owner=user.username, name="cli")
    with pytest.raises(CommandError, match="too many uploads: at most 1 per day"):
        call_command("uploadbot", str(BOTS / "random"), owner=user.username, name="cli")
    assert BotVersion.objects.count() == 1


@pytest.mark.django_db
def test_api_requests_are_throttled_per_user_and_per_address(
    user: Any, other_user: Any, settings: Any
) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "api": "3/minute", "anon": "2/hour"}
    api = client_for(user)
    assert [api.get("/api/bots/").status_code for _ in range(3)] == [200, 200, 200]
    r = api.get("/api/matches/")
    assert r.status_code == 429 and 0 < int(r["Retry-After"]) <= 60
    assert client_for(other_user).get("/api/bots/").status_code == 200  # bob's own count
    anon = client_for()
    assert [anon.get("/api/bots/").status_code for _ in range(3)] == [200, 200, 429]
    user.is_staff = True
    user.save()
    assert api.get("/api/bots/").status_code == 200  # operators are not throttled


@pytest.mark.django_db
def test_no_rate_means_no_limit(user: Any, bot_zip: bytes) -> None:
    # The tests' own settings: every rate empty (tests/arena/conftest.py).
    for i in range(25):
        bots.create_bot(user, f"bot{i}", upload(bot_zip, "b.zip"))
    assert [client_for(user).get("/api/bots/").status_code for _ in range(3)] == [200] * 3


# ----------------------------------------------------------------------------- the cache


def cache_backend(**env: str) -> str:
    """The cache backend of a process started with this environment."""
    code = "from django.conf import settings; print(settings.CACHES['default']['BACKEND'])"
    base = {"DJANGO_SETTINGS_MODULE": "arena.settings", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**base, **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def test_the_cache_is_local_memory_by_default_and_redis_with_redis_url() -> None:
    """So that, with Redis, the counts hold across every web process."""
    assert cache_backend() == "django.core.cache.backends.locmem.LocMemCache"
    redis = cache_backend(REDIS_URL="redis://127.0.0.1:6379/9")
    assert redis == "django.core.cache.backends.redis.RedisCache"


@pytest.mark.django_db
@pytest.mark.skipif(not django_settings.REDIS_URL, reason="the local-memory cache is per process")
def test_with_redis_the_counts_hold_across_processes(user: Any, settings: Any) -> None:
    """An upload counted by another process (another web worker) counts here too."""
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "upload": "1/hour"}
    code = (
        "import django, types; django.setup(); from arena.core import throttles; "
        f"throttles.record(types.SimpleNamespace(pk={user.pk}, is_staff=False), 'upload')"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "arena.settings",
        "ARENA_CACHE_PREFIX": settings.CACHES["default"]["KEY_PREFIX"],
        "ARENA_THROTTLE_UPLOAD": "1/hour",
    }
    subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, check=True)
    with pytest.raises(throttles.Throttled):
        throttles.check(user, "upload")


def test_the_module_examples_hold() -> None:
    failures, tried = doctest.testmod(arena.core.throttles)
    assert tried and not failures
