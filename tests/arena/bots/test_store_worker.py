"""A worker on a machine of its own: it shares only the database and the broker with the web
side (its own var folder, bot store folder and cache), yet checks the uploads, each verified
against its hash on arrival."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings

from arena.bots import services as bots
from arena.bots import store
from arena.bots.models import BotVersion
from arena.bots.storage import DatabaseStorage
from tests.arena.conftest import BOTS, upload, wait_for, zipped_folder

V = BotVersion.Status


@pytest.fixture
def worker_env(
    worker_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    """The worker's environment with a var folder of its own: none of the web side's files."""
    own = tmp_path_factory.mktemp("worker-host")
    worker_env.update(
        ARENA_VAR_DIR=str(own),
        ARENA_BOT_STORAGE="database",
        ARENA_BOT_STORE=str(own / "bots"),
        ARENA_BOT_CACHE=str(own / "bot-cache"),
        ARENA_BOT_BUILD_DIR=str(own / "builds"),
        ARENA_SANDBOX_DIR=str(django_settings.SANDBOX_STATE_DIR),
        # One attempt: a check the machine cannot run is held at once (no retry to wait for).
        ARENA_MATCH_MAX_ATTEMPTS="1",
    )
    return worker_env


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_that_sees_no_shared_folder_checks_uploads_from_the_database(
    worker_env: dict[str, str], worker: Callable[[], str], user: Any, settings: Any
) -> None:
    (anchor,) = bots.register_builtin_bots(names=["random"])
    mine = bots.create_bot(user, "far-greedy", upload(zipped_folder(BOTS / "greedy"), "g.zip"))
    # An upload whose row in the store was damaged before it came: the same name, other bytes.
    data = zipped_folder(BOTS / "random")
    sha = hashlib.sha256(data).hexdigest()
    DatabaseStorage().save(store.name(sha), io.BytesIO(b"damaged"))
    damaged = bots.create_bot(user, "far-damaged", upload(data, "r.zip"))
    assert damaged.sha256 == sha

    def done() -> bool:
        status = dict(
            BotVersion.objects.filter(pk__in=[anchor.pk, mine.pk, damaged.pk]).values_list(
                "pk", "status"
            )
        )
        return status[anchor.pk] == status[mine.pk] == V.ACTIVE and status[damaged.pk] == V.HELD

    wait_for("the checks", done, worker)
    # The machine's failure, not the bot's: held for an operator, never rejected.
    damaged.refresh_from_db()
    assert damaged.status == V.HELD and "hash" in damaged.reason, damaged.reason
    # Nothing went through the web side's folders; the worker unpacked into its own cache
    # and kept no download.
    assert not Path(settings.BOT_STORE_DIR).exists()
    assert not Path(settings.BOT_CACHE_DIR).exists()
    cache = Path(worker_env["ARENA_BOT_CACHE"])
    entries = {p.name for p in cache.iterdir() if not p.name.startswith(".")}
    assert {anchor.sha256, mine.sha256} <= entries and sha not in entries
    assert not [p for p in cache.rglob(".stored")] and not list(cache.rglob(".fetch-*"))
