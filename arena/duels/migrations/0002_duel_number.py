"""Tests and challenges numbered apart ("Test #1", "Challenge #1"): existing duels are numbered
by kind in the order they were created (by id)."""

from typing import Any

from django.db import migrations, models


def number_by_kind(apps: Any, schema_editor: Any) -> None:
    Duel = apps.get_model("duels", "Duel")
    for kind in ("test", "challenge"):
        ids = Duel.objects.filter(kind=kind).order_by("id").values_list("id", flat=True)
        for number, pk in enumerate(ids, start=1):
            Duel.objects.filter(pk=pk).update(number=number)


class Migration(migrations.Migration):
    dependencies = [("duels", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="duel",
            name="number",
            field=models.PositiveIntegerField(null=True),
        ),
        migrations.RunPython(number_by_kind, migrations.RunPython.noop),
    ]
