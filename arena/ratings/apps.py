from django.apps import AppConfig


class RatingsConfig(AppConfig):
    """Pair counts, fitted ratings, their history and the leaderboards."""

    name = "arena.ratings"
    label = "ratings"
    verbose_name = "Ratings"
