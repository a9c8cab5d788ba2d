from django.db import migrations, models
from django.db.migrations.loader import MigrationLoader

LADDERS = [("sandbox", "ladder"), ("open", "open ladder")]
COLUMNS = ("variant", "results", "fitted", "fitted_at", "white_advantage", "fit_seconds")


def _ladder() -> models.CharField:
    return models.CharField(choices=LADDERS, db_default="sandbox", default="sandbox", max_length=7)


def _rebuild(schema_editor, old, new, rows):
    """Replace the rating states' table by one of ``new``'s shape, with ``rows`` in it (a
    handful: one per variant and ladder)."""
    schema_editor.delete_model(old)
    schema_editor.create_model(new)
    new.objects.using(schema_editor.connection.alias).bulk_create(new(**row) for row in rows)


def _state_model(schema_editor, migration):
    loader = MigrationLoader(schema_editor.connection)
    return loader.project_state(("ratings", migration)).apps.get_model("ratings", "RatingState")


def forward(apps, schema_editor):
    """The rating states' key was the variant; now it is a number, the variant and the ladder
    unique together. Every existing row is the sandboxed ladder's."""
    old = _state_model(schema_editor, "0001_initial")
    rows = list(old.objects.using(schema_editor.connection.alias).values(*COLUMNS))
    _rebuild(schema_editor, old, apps.get_model("ratings", "RatingState"), rows)


def backward(apps, schema_editor):
    """Back to one state per variant: the sandboxed ladder's (the open ladder's are dropped)."""
    new = apps.get_model("ratings", "RatingState")
    rows = list(
        new.objects.using(schema_editor.connection.alias).filter(ladder="sandbox").values(*COLUMNS)
    )
    _rebuild(schema_editor, new, _state_model(schema_editor, "0001_initial"), rows)


class Migration(migrations.Migration):
    """A rating space per ladder and variant: every rating table gets a ladder (the sandboxed
    ladder for every existing row)."""

    dependencies = [("ratings", "0001_initial")]

    operations = [
        migrations.AddField(model_name="pairstats", name="ladder", field=_ladder()),
        migrations.AddField(model_name="rating", name="ladder", field=_ladder()),
        migrations.AddField(model_name="ratingpoint", name="ladder", field=_ladder()),
        migrations.RemoveConstraint(model_name="pairstats", name="pairstats_unique_pair"),
        migrations.AddConstraint(
            model_name="pairstats",
            constraint=models.UniqueConstraint(
                fields=("ladder", "variant", "white", "black"), name="pairstats_unique_pair"
            ),
        ),
        migrations.RemoveConstraint(model_name="rating", name="rating_unique"),
        migrations.AddConstraint(
            model_name="rating",
            constraint=models.UniqueConstraint(
                fields=("ladder", "variant", "version"), name="rating_unique"
            ),
        ),
        migrations.RemoveIndex(model_name="rating", name="rating_rank_idx"),
        migrations.AddIndex(
            model_name="rating",
            index=models.Index(fields=["ladder", "variant", "rank"], name="rating_rank_idx"),
        ),
        migrations.AlterModelOptions(
            name="rating", options={"ordering": ["ladder", "variant", "rank"]}
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="ratingstate",
                    name="variant",
                    field=models.CharField(
                        choices=[
                            ("yinsh", "YINSH"),
                            ("blitz", "Blitz YINSH"),
                            ("yangsh", "Yangsh"),
                            ("yangsh7", "Yangsh (7 pawns)"),
                        ],
                        max_length=10,
                    ),
                ),
                migrations.AddField(
                    model_name="ratingstate",
                    name="id",
                    field=models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                    preserve_default=False,
                ),
                migrations.AddField(model_name="ratingstate", name="ladder", field=_ladder()),
                migrations.AddConstraint(
                    model_name="ratingstate",
                    constraint=models.UniqueConstraint(
                        fields=("ladder", "variant"), name="ratingstate_unique"
                    ),
                ),
            ],
        ),
        migrations.RunPython(forward, backward),
    ]
