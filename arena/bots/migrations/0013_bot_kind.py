from typing import Any

from django.db import migrations, models


def kinds_from_remote(apps: Any, schema_editor: Any) -> None:
    Bot = apps.get_model("bots", "Bot")
    Bot.objects.filter(remote=True).update(kind="remote")


def remote_from_kinds(apps: Any, schema_editor: Any) -> None:
    Bot = apps.get_model("bots", "Bot")
    Bot.objects.exclude(kind="upload").update(remote=True)


class Migration(migrations.Migration):
    """``Bot.remote`` becomes ``Bot.kind`` (uploaded, remote, or a person's seat), and bots may
    let people play them in the browser (``Bot.people``)."""

    dependencies = [
        ("bots", "0012_bot_remote"),
    ]

    operations = [
        migrations.AddField(
            model_name="bot",
            name="kind",
            field=models.CharField(
                choices=[
                    ("upload", "runs in the arena's sandbox"),
                    ("remote", "runs on its owner's machine"),
                    ("person", "a person in the browser"),
                ],
                db_default="upload",
                default="upload",
                max_length=8,
            ),
        ),
        migrations.RunPython(kinds_from_remote, remote_from_kinds),
        migrations.RemoveField(model_name="bot", name="remote"),
        migrations.AddField(
            model_name="bot",
            name="people",
            field=models.BooleanField(
                db_default=False,
                default=False,
                help_text="Let logged-in visitors play this bot in their browser (unrated games).",
            ),
        ),
    ]
