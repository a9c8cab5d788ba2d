"""The storage quota: the sum of a user's uploads and of what their builds keep, checked by the
one upload service that the site, the API and the ``uploadbot`` command share, and by the check
of a version that has a build (tests/arena/admission/test_checks.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from arena.bots import services
from arena.bots.models import Bot, BotVersion
from tests.arena.api.test_api import client_for
from tests.arena.bots.test_uploads import stored_files
from tests.arena.conftest import BOTS, make_version, upload, zipped_folder

MB = 1024 * 1024


@pytest.fixture
def bot_zip() -> bytes:
    return zipped_folder(BOTS / "random")


def quota_for(settings: Any, data: bytes, uploads: float) -> None:
    """A quota that holds ``uploads`` files like ``data``."""
    settings.BOT_QUOTA_MB = len(data) * uploads / MB


@pytest.mark.django_db
def test_an_upload_over_the_quota_is_refused_saying_used_and_limit(
    user: Any, settings: Any, bot_zip: bytes
) -> None:
    quota_for(settings, bot_zip, 1.5)
    first = services.create_bot(user, "one", upload(bot_zip, "one.zip"))
    files = stored_files()
    with pytest.raises(services.QuotaExceeded) as refused:
        services.add_version(user, first.bot, upload(bot_zip + b"\0", "two.zip"))
    used = f"{len(bot_zip) / MB:.1f} MB"
    limit = f"{settings.BOT_QUOTA_MB:.1f} MB"
    assert f"use {used} of your {limit}" in str(refused.value)
    with pytest.raises(services.QuotaExceeded):
        services.create_bot(user, "two", upload(bot_zip, "two.zip"))
    # Nothing changed: no bot, no version, no file.
    assert list(Bot.objects.values_list("name", flat=True)) == ["one"]
    assert BotVersion.objects.count() == 1 and stored_files() == files


@pytest.mark.django_db
def test_the_quota_counts_every_version_of_the_users_bots_and_only_theirs(
    user: Any, other_user: Any, settings: Any
) -> None:
    mine = [
        make_version(user, "mine", status=BotVersion.Status.RETIRED),
        make_version(user, "mine"),
        make_version(user, "also"),
    ]
    make_version(other_user, "theirs")
    assert services.storage_used(user) == sum(v.size for v in mine)
    Bot.objects.filter(name="also").update(status=Bot.Status.WITHDRAWN)  # its file stays
    assert services.storage_used(user) == sum(v.size for v in mine)
    settings.BOT_QUOTA_MB = services.storage_used(user) / MB
    data = b"#!/bin/sh\nexit 0\n"
    with pytest.raises(services.QuotaExceeded):
        services.create_bot(user, "more", upload(data, "bot.sh"))
    services.create_bot(other_user, "more", upload(data, "bot.sh"))  # bob has room


@pytest.mark.django_db
def test_an_upload_that_lies_about_its_size_still_meets_the_quota(
    user: Any, settings: Any, bot_zip: bytes
) -> None:
    settings.BOT_QUOTA_MB = len(bot_zip) / 2 / MB
    f = upload(bot_zip, "bot.zip")
    f.size = 10  # type: ignore[attr-defined]
    with pytest.raises(services.QuotaExceeded):
        services.create_bot(user, "liar", f)
    assert not Bot.objects.exists()


@pytest.mark.django_db
def test_operators_are_exempt_unless_configured_and_zero_means_no_quota(
    user: Any, settings: Any, bot_zip: bytes
) -> None:
    settings.BOT_QUOTA_MB = 0.001
    user.is_staff = True
    user.save()
    services.create_bot(user, "staff1", upload(bot_zip, "b.zip"))
    settings.BOT_QUOTA_EXEMPT_STAFF = False
    with pytest.raises(services.QuotaExceeded):
        services.create_bot(user, "staff2", upload(bot_zip, "b.zip"))
    settings.BOT_QUOTA_MB = 0
    services.create_bot(user, "staff3", upload(bot_zip, "b.zip"))
    assert services.storage_quota(user) is None


@pytest.mark.django_db
def test_the_site_and_the_api_show_the_quota_message(
    user: Any, settings: Any, bot_zip: bytes
) -> None:
    settings.BOT_QUOTA_MB = len(bot_zip) / 2 / MB
    c = Client()
    c.force_login(user)
    r = c.post("/upload/", {"name": "webbot", "file": SimpleUploadedFile("b.zip", bot_zip)})
    assert (
        r.status_code == 200
        and "storage quota: your bots&#x27; uploads and builds use" in r.content.decode()
    )
    r = client_for(user).post(
        "/api/bots/",
        {"name": "apibot", "file": SimpleUploadedFile("b.zip", bot_zip)},
        format="multipart",
    )
    assert r.status_code == 400 and "storage quota" in r.json()["file"][0]
    assert not Bot.objects.exists()


@pytest.mark.django_db
def test_what_the_builds_keep_counts_in_the_quota(user: Any, settings: Any, bot_zip: bytes) -> None:
    built = make_version(user, "built")
    plain = make_version(user, "plain", status=BotVersion.Status.REJECTED)
    BotVersion.objects.filter(pk=built.pk).update(built_size=3 * MB)
    assert services.storage_used(user) == built.size + plain.size + 3 * MB
    # Room for the uploads and this file, not for the build as well.
    settings.BOT_QUOTA_MB = (built.size + plain.size + len(bot_zip)) / MB + 1
    with pytest.raises(services.QuotaExceeded) as refused:
        services.create_bot(user, "more", upload(bot_zip, "more.zip"))
    assert "your bots' uploads and builds use 3." in str(refused.value)


@pytest.mark.django_db
def test_a_build_must_fit_in_what_is_left_of_the_quota(user: Any, settings: Any) -> None:
    other = make_version(user, "other")
    version = make_version(user, "new", status=BotVersion.Status.CHECKING)
    settings.BOT_QUOTA_MB = (other.size + version.size) / MB + 2
    services.check_build_quota(version, 2 * MB)  # just fits
    with pytest.raises(services.QuotaExceeded) as refused:
        services.check_build_quota(version, 2 * MB + 1)
    assert str(refused.value) == (
        "the built bot (2.0 MB) does not fit in your storage quota: your bots' uploads and "
        f"builds use {(other.size + version.size) / MB:.1f} MB of your "
        f"{settings.BOT_QUOTA_MB:.1f} MB; delete a bot that never played, or ask an operator "
        "for more room"
    )
    # Checked again, a version's own earlier build is not counted twice.
    BotVersion.objects.filter(pk=version.pk).update(built_size=2 * MB)
    services.check_build_quota(version, 2 * MB)
    settings.BOT_QUOTA_MB = 0
    services.check_build_quota(version, 10**12)  # no quota
