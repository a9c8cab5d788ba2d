from django.db import migrations, models


class Migration(migrations.Migration):
    """A version's built size, measured by its check: it counts in its owner's storage. The
    column has a default in the database too, so that processes not yet upgraded can still
    create versions."""

    dependencies = [("bots", "0006_check_is_claimed_work")]

    operations = [
        migrations.AddField(
            model_name="botversion",
            name="built_size",
            field=models.PositiveBigIntegerField(default=0, db_default=0),
        ),
    ]
