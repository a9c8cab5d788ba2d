from django.apps import AppConfig


class TournamentsConfig(AppConfig):
    """Round-robin tournaments."""

    name = "arena.tournaments"
    label = "tournaments"
    verbose_name = "Tournaments"

    def ready(self) -> None:
        from arena.games.signals import match_closed
        from arena.tournaments import receivers

        match_closed.connect(receivers.release_next_games, dispatch_uid="tournaments-release")
