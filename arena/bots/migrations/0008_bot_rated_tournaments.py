from django.db import migrations, models


class Migration(migrations.Migration):
    """Whether a bot's owner lets other people's rated tournaments include it (off until the
    owner says so; built-in bots accept whatever it says). The column has a default in the
    database too, so that processes not yet upgraded can still create bots."""

    dependencies = [("bots", "0007_version_built_size")]

    operations = [
        migrations.AddField(
            model_name="bot",
            name="rated_tournaments",
            field=models.BooleanField(
                db_default=False,
                default=False,
                help_text="Let other people include this bot in rated tournaments.",
            ),
        ),
    ]
