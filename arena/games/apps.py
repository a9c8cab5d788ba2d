from django.apps import AppConfig


class GamesConfig(AppConfig):
    """Matches, the ladder scheduler, ratings and the sweeper."""

    name = "arena.games"
    label = "games"
    verbose_name = "Games and ratings"

    def ready(self) -> None:
        from celery.signals import worker_init, worker_ready

        from arena.bots.signals import bot_withdrawn, versions_retired
        from arena.games import receivers, startup

        bot_withdrawn.connect(receivers.cancel_ladder_matches, dispatch_uid="games-withdrawn")
        versions_retired.connect(receivers.cancel_ladder_matches, dispatch_uid="games-retired")
        worker_init.connect(startup.note_start, dispatch_uid="games-worker-init")
        worker_ready.connect(startup.recover, dispatch_uid="games-worker-ready")
