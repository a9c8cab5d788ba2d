from django.apps import AppConfig


class LocalConfig(AppConfig):
    """Management commands that play matches locally: no server, no database."""

    name = "arena.local"
    label = "local"
    verbose_name = "Local play"

    def ready(self) -> None:
        from arena import checks  # noqa: F401  (registers the system checks)
