from django.apps import AppConfig


class GamesConfig(AppConfig):
    """Matches, the ladder scheduler, live games and downloads."""

    name = "arena.games"
    label = "games"
    verbose_name = "Games and ratings"

    def ready(self) -> None:
        from arena.bots.signals import bot_withdrawn, versions_retired
        from arena.games import receivers

        bot_withdrawn.connect(receivers.cancel_ladder_matches, dispatch_uid="games-withdrawn")
        versions_retired.connect(receivers.cancel_ladder_matches, dispatch_uid="games-retired")
