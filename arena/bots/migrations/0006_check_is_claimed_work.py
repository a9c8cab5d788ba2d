from django.db import migrations, models


class Migration(migrations.Migration):
    """A version's check is claimed work (arena.jobs.models.ClaimedWork): its claim's columns
    take the names every kind of claimed work has, and the worker that holds it is kept."""

    dependencies = [("bots", "0005_bot_rated_challenges")]

    operations = [
        migrations.RenameField("botversion", "check_attempts", "attempts"),
        migrations.RenameField("botversion", "check_queued_at", "queued_at"),
        migrations.RenameField("botversion", "check_started_at", "started_at"),
        migrations.AddField(
            model_name="botversion",
            name="worker",
            field=models.CharField(blank=True, max_length=200),
        ),
    ]
