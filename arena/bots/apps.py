from django.apps import AppConfig


class BotsConfig(AppConfig):
    """Bots, their versions, the content-addressed bot store and the upload checks."""

    name = "arena.bots"
    label = "bots"
    verbose_name = "Bots"
