from django.db import migrations


class Migration(migrations.Migration):
    """The rating models move to the ratings app (arena.ratings), tables and all: nothing
    changes in the database."""

    dependencies = [
        ("games", "0009_drop_periodic_run"),
        ("ratings", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name="pairstats",
                    name="black",
                ),
                migrations.RemoveField(
                    model_name="pairstats",
                    name="white",
                ),
                migrations.RemoveField(
                    model_name="rating",
                    name="version",
                ),
                migrations.RemoveField(
                    model_name="ratingpoint",
                    name="version",
                ),
                migrations.DeleteModel(
                    name="RatingState",
                ),
                migrations.DeleteModel(
                    name="PairStats",
                ),
                migrations.DeleteModel(
                    name="Rating",
                ),
                migrations.DeleteModel(
                    name="RatingPoint",
                ),
            ],
            database_operations=[],
        ),
    ]
