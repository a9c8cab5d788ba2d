from typing import Any

from django.conf import settings
from django.db import migrations, models

#: As arena.games.reliability.RECENT_GAMES was when this migration was written.
RECENT_GAMES = 50


def recount(apps: Any, schema_editor: Any) -> None:
    """Bring the standing alerts to the new verdict, which counts the latest games only (it
    counted all of them): a version whose latest games are good is no longer failing, and so
    not paused now that pausing is the default."""
    alerts = apps.get_model("games", "FailureAlert")
    matches = apps.get_model("games", "Match")
    window = max(RECENT_GAMES, settings.FAILING_MIN_GAMES)
    for alert in alerts.objects.filter(failing=True):
        latest: list[tuple[int, bool]] = []
        for side in ("white", "black"):
            rows = (
                matches.objects.filter(
                    **{side: alert.version_id}, variant=alert.variant, status="finished"
                )
                .order_by("-id")
                .values_list("pk", "fault")[:window]
            )
            latest += [(pk, fault == side) for pk, fault in rows]
        latest.sort(reverse=True)
        recent = latest[:window]
        games, failed = len(recent), sum(1 for _, own in recent if own)
        failing = games >= settings.FAILING_MIN_GAMES and failed >= settings.FAILING_RATE * games
        alerts.objects.filter(pk=alert.pk).update(games=games, failures=failed, failing=failing)


class Migration(migrations.Migration):
    """When its owner last resumed a failing version on the ladder; the standing alerts
    counted again over the latest games only."""

    dependencies = [("games", "0010_ratings_move_to_their_app")]

    operations = [
        migrations.AddField(
            model_name="failurealert",
            name="resumed_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(recount, migrations.RunPython.noop),
    ]
