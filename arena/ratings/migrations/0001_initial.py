import django.db.models.deletion
from django.db import migrations, models


def relabel(apps, schema_editor):
    """The models' content types (and so their permissions) follow them from the games app."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(
        app_label="games", model__in=["pairstats", "ratingstate", "rating", "ratingpoint"]
    ).update(app_label="ratings")


def unlabel(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(
        app_label="ratings", model__in=["pairstats", "ratingstate", "rating", "ratingpoint"]
    ).update(app_label="games")


class Migration(migrations.Migration):
    """The rating models move from the games app: their tables stay as they are (they keep
    their names), only Django's idea of which app holds them changes."""

    initial = True

    dependencies = [
        ("bots", "0006_check_is_claimed_work"),
        ("games", "0009_drop_periodic_run"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="RatingState",
                    fields=[
                        (
                            "variant",
                            models.CharField(
                                choices=[
                                    ("yinsh", "YINSH"),
                                    ("blitz", "Blitz YINSH"),
                                    ("yangsh", "Yangsh"),
                                    ("yangsh7", "Yangsh (7 pawns)"),
                                ],
                                max_length=10,
                                primary_key=True,
                                serialize=False,
                            ),
                        ),
                        ("results", models.PositiveBigIntegerField(default=0)),
                        ("fitted", models.PositiveBigIntegerField(default=0)),
                        ("fitted_at", models.DateTimeField(blank=True, null=True)),
                        ("white_advantage", models.FloatField(default=0.0)),
                        ("fit_seconds", models.FloatField(default=0.0)),
                    ],
                    options={
                        "db_table": "games_ratingstate",
                    },
                ),
                migrations.CreateModel(
                    name="PairStats",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "variant",
                            models.CharField(
                                choices=[
                                    ("yinsh", "YINSH"),
                                    ("blitz", "Blitz YINSH"),
                                    ("yangsh", "Yangsh"),
                                    ("yangsh7", "Yangsh (7 pawns)"),
                                ],
                                max_length=10,
                            ),
                        ),
                        ("wins", models.PositiveIntegerField(default=0)),
                        ("draws", models.PositiveIntegerField(default=0)),
                        ("losses", models.PositiveIntegerField(default=0)),
                        (
                            "black",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="bots.botversion",
                            ),
                        ),
                        (
                            "white",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="bots.botversion",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "pair statistics",
                        "verbose_name_plural": "pair statistics",
                        "db_table": "games_pairstats",
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("variant", "white", "black"), name="pairstats_unique_pair"
                            )
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="Rating",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "variant",
                            models.CharField(
                                choices=[
                                    ("yinsh", "YINSH"),
                                    ("blitz", "Blitz YINSH"),
                                    ("yangsh", "Yangsh"),
                                    ("yangsh7", "Yangsh (7 pawns)"),
                                ],
                                max_length=10,
                            ),
                        ),
                        ("elo", models.FloatField()),
                        ("error", models.FloatField(blank=True, null=True)),
                        ("games", models.PositiveIntegerField()),
                        ("points", models.FloatField()),
                        ("rank", models.PositiveIntegerField()),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        (
                            "version",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="ratings",
                                to="bots.botversion",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "games_rating",
                        "ordering": ["variant", "rank"],
                        "indexes": [
                            models.Index(fields=["variant", "rank"], name="rating_rank_idx")
                        ],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("variant", "version"), name="rating_unique"
                            )
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="RatingPoint",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "variant",
                            models.CharField(
                                choices=[
                                    ("yinsh", "YINSH"),
                                    ("blitz", "Blitz YINSH"),
                                    ("yangsh", "Yangsh"),
                                    ("yangsh7", "Yangsh (7 pawns)"),
                                ],
                                max_length=10,
                            ),
                        ),
                        ("at", models.DateTimeField()),
                        ("elo", models.FloatField()),
                        ("error", models.FloatField(blank=True, null=True)),
                        ("games", models.PositiveIntegerField()),
                        (
                            "version",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="rating_history",
                                to="bots.botversion",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "games_ratingpoint",
                        "ordering": ["at"],
                        "indexes": [
                            models.Index(
                                fields=["version", "variant", "at"], name="ratingpoint_version_idx"
                            )
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(relabel, unlabel),
    ]
