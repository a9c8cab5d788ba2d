from django.apps import AppConfig


class TournamentsConfig(AppConfig):
    """Round-robin tournaments."""

    name = "arena.tournaments"
    label = "tournaments"
    verbose_name = "Tournaments"
