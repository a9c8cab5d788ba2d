"""Migrations that move data: an arena upgraded in place keeps what it had."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE_RATINGS_MOVED = [("games", "0009_drop_periodic_run"), ("ratings", None)]


@pytest.mark.django_db(transaction=True)
def test_the_ratings_keep_their_rows_when_they_move_to_their_own_app(user: Any) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE_RATINGS_MOVED)
    old = executor.loader.project_state(
        [BEFORE_RATINGS_MOVED[0], ("bots", "0006_check_is_claimed_work")]
    ).apps
    Bot = old.get_model("bots", "Bot")
    BotVersion = old.get_model("bots", "BotVersion")
    ContentType = old.get_model("contenttypes", "ContentType")
    bot = Bot.objects.create(name="kept", owner_id=user.pk)
    a = BotVersion.objects.create(bot=bot, number=1, sha256="0" * 64, kind="file", size=1)
    b = BotVersion.objects.create(bot=bot, number=2, sha256="1" * 64, kind="file", size=1)
    old.get_model("games", "PairStats").objects.create(
        variant="yinsh", white_id=a.pk, black_id=b.pk, wins=3, draws=1, losses=2
    )
    old.get_model("games", "RatingState").objects.create(variant="yinsh", results=6, fitted=6)
    old.get_model("games", "Rating").objects.create(
        variant="yinsh", version_id=a.pk, elo=1050.0, error=80.0, games=6, points=3.5, rank=1
    )
    ContentType.objects.get_or_create(app_label="games", model="rating")

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    from django.contrib.contenttypes.models import ContentType as Current

    from arena.ratings.models import PairStats, Rating, RatingState

    pair = PairStats.objects.get()
    assert (pair.white_id, pair.black_id, pair.wins, pair.draws, pair.losses) == (
        a.pk,
        b.pk,
        3,
        1,
        2,
    )
    assert RatingState.objects.get(variant="yinsh").results == 6
    assert Rating.objects.get(version_id=a.pk).elo == 1050.0
    assert Current.objects.filter(app_label="ratings", model="rating").count() == 1
    assert not Current.objects.filter(app_label="games", model="rating").exists()
