from django.apps import AppConfig


class GamesConfig(AppConfig):
    """Matches, the ladder scheduler, ratings and the sweeper."""

    name = "arena.games"
    label = "games"
    verbose_name = "Games and ratings"
