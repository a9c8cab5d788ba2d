"""Uploads, on the web side: size, type, storage, names, permissions."""

from __future__ import annotations

import os
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied

from arena.bots import services, store
from arena.bots.models import Bot, BotVersion
from arena.bots.unpack import UploadError
from arena.games.models import Match
from tests.arena.conftest import (
    BOTS,
    make_version,
    packed,
    upload,
    zipped,
    zipped_folder,
)

V = BotVersion.Status


def stored_files() -> set[str]:
    return set(store.hashes())


# ----------------------------------------------------------------------------- uploads


@pytest.mark.django_db
def test_an_upload_is_stored_by_hash_and_waits_for_its_check(
    user: Any, django_capture_on_commit_callbacks: Any
) -> None:
    data = zipped_folder(BOTS / "random")
    with django_capture_on_commit_callbacks() as sent:
        version = services.create_bot(user, "mybot", upload(data, "mybot.zip"))
    assert version.status == V.PENDING and version.number == 1 and version.kind == "zip"
    with store.open(version.sha256) as f:
        assert f.read() == data
    assert version.bot.owner == user and not version.bot.trusted
    assert len(sent) == 1  # the check task, after commit


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("data", "name", "message"),
    [
        (b"", "bot.zip", "empty"),
        (b"not a zip", "bot.zip", "not a zip archive"),
        (b"Rar!\x1a\x07\x00", "bot.rar", "RAR"),
        (b"print('no shebang')", "bot.py", "not a bot"),
        (b"plain tar", "bot.tar", "only .zip and .tar.gz"),
    ],
)
def test_bad_uploads_are_refused_and_change_nothing(
    user: Any, data: bytes, name: str, message: str
) -> None:
    with pytest.raises(UploadError, match=message):
        services.create_bot(user, "mybot", upload(data, name))
    assert not Bot.objects.exists() and not BotVersion.objects.exists()
    assert stored_files() == set()


@pytest.mark.django_db
def test_an_oversized_upload_is_refused_before_it_is_read(user: Any, settings: Any) -> None:
    settings.BOT_UPLOAD_MAX_BYTES = 1000
    data = zipped({"bot.toml": os.urandom(5000)})
    with pytest.raises(UploadError, match="at most 1000 bytes"):
        services.create_bot(user, "mybot", upload(data, "b.zip"))
    assert stored_files() == set() and not Bot.objects.exists()


@pytest.mark.django_db
def test_an_upload_larger_than_it_claims_is_refused(user: Any, settings: Any) -> None:
    settings.BOT_UPLOAD_MAX_BYTES = 1000
    f = upload(b"#!/bin/sh\n" + b"x" * 5000, "bot.sh")
    f.size = 10  # type: ignore[attr-defined]
    with pytest.raises(UploadError, match="over 1000 bytes"):
        services.create_bot(user, "mybot", f)
    assert stored_files() == set()


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["A", "x", "has space", "-dash", "random", "é"])
def test_bad_bot_names_are_refused(user: Any, name: str) -> None:
    with pytest.raises(UploadError):
        services.create_bot(user, name, upload(b"#!/bin/sh\n", "b.sh"))


@pytest.mark.django_db
def test_a_taken_name_is_refused(user: Any, other_user: Any) -> None:
    services.create_bot(user, "mine", upload(b"#!/bin/sh\n", "b.sh"))
    with pytest.raises(UploadError, match="exists already"):
        services.create_bot(other_user, "mine", upload(b"#!/bin/sh\n", "b.sh"))


@pytest.mark.django_db
def test_versions_are_numbered_in_order(user: Any) -> None:
    v1 = services.create_bot(user, "mine", upload(b"#!/bin/sh\n", "b.sh"))
    v2 = services.add_version(user, v1.bot, upload(b"#!/bin/sh\necho 2\n", "b.sh"))
    assert (v1.number, v2.number) == (1, 2)


@pytest.mark.django_db
def test_only_the_owner_changes_a_bot(user: Any, other_user: Any) -> None:
    v = services.create_bot(user, "mine", upload(b"#!/bin/sh\n", "b.sh"))
    bot = v.bot
    with pytest.raises(PermissionDenied):
        services.add_version(other_user, bot, upload(b"#!/bin/sh\n", "b.sh"))
    with pytest.raises(PermissionDenied):
        services.update_bot(other_user, bot, description="mine now")
    with pytest.raises(PermissionDenied):
        services.delete_bot(other_user, bot)
    with pytest.raises(PermissionDenied):
        services.source_file(other_user, v)
    assert BotVersion.objects.filter(bot=bot).count() == 1
    bot.refresh_from_db()
    assert bot.description == ""
    with services.source_file(user, v) as f:
        assert f.read() == b"#!/bin/sh\n"


@pytest.mark.django_db
def test_deleting_a_bot_that_played_withdraws_it(user: Any, anchor: Any) -> None:
    v = make_version(user, "mine")
    Match.objects.create(
        variant="yinsh", kind="ladder", status="queued", white=v, black=anchor, time_control="1"
    )
    assert services.delete_bot(user, v.bot) == "withdrawn"
    v.refresh_from_db()
    assert v.status == V.RETIRED and v.bot.status == Bot.Status.WITHDRAWN
    assert Match.objects.get().status == Match.Status.CANCELLED
    fresh = make_version(user, "fresh")
    assert services.delete_bot(user, fresh.bot) == "deleted"
    assert not Bot.objects.filter(name="fresh").exists()


@pytest.mark.django_db
def test_builtin_bots_are_registered_once_per_content(system_user: Any) -> None:
    created = services.register_builtin_bots(names=["random", "greedy"])
    assert [v.label for v in created] == ["random v1", "greedy v1"]
    assert all(v.bot.trusted and v.bot.owner == system_user for v in created)
    assert services.register_builtin_bots(names=["random", "greedy"]) == []


def test_packing_a_folder_is_deterministic() -> None:
    assert packed(BOTS / "random") == packed(BOTS / "random")
