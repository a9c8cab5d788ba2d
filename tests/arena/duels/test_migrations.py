"""The duels' migrations that move data: an arena upgraded in place keeps its numbers apt."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE_NUMBERS = ("duels", "0001_initial")


@pytest.mark.django_db(transaction=True)
def test_existing_tests_and_challenges_are_numbered_by_kind_in_order(user: Any) -> None:
    executor = MigrationExecutor(connection)
    before = [BEFORE_NUMBERS]
    executor.migrate(before)
    others = [n for n in executor.loader.graph.leaf_nodes() if n[0] != "duels"]
    old = executor.loader.project_state([*others, BEFORE_NUMBERS]).apps
    Bot = old.get_model("bots", "Bot")
    BotVersion = old.get_model("bots", "BotVersion")
    Duel = old.get_model("duels", "Duel")
    bot = Bot.objects.create(name="kept", owner_id=user.pk)
    a = BotVersion.objects.create(bot=bot, number=1, sha256="0" * 64, kind="file", size=1)
    b = BotVersion.objects.create(bot=bot, number=2, sha256="1" * 64, kind="file", size=1)
    kinds = ["test", "challenge", "challenge", "test", "test"]
    ids = [
        Duel.objects.create(
            kind=kind,
            variant="yinsh",
            time_control="10+0.1",
            created_by_id=user.pk,
            candidate_id=b.pk,
            opponent_id=a.pk,
            games=2,
            max_games=2,
        ).pk
        for kind in kinds
    ]

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    from arena.duels.models import Duel as Current

    numbers = {d.pk: (d.kind, d.number) for d in Current.objects.all()}
    assert [numbers[pk] for pk in ids] == [
        ("test", 1),
        ("challenge", 1),
        ("challenge", 2),
        ("test", 2),
        ("test", 3),
    ]
