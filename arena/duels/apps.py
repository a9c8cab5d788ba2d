from django.apps import AppConfig


class DuelsConfig(AppConfig):
    """Tests between two versions (SPRT) and challenges between bots."""

    name = "arena.duels"
    label = "duels"
    verbose_name = "Tests and challenges"

    def ready(self) -> None:
        from arena.bots.signals import bot_withdrawn
        from arena.duels import receivers
        from arena.games.signals import match_closed

        match_closed.connect(receivers.count_and_continue, dispatch_uid="duels-count")
        bot_withdrawn.connect(receivers.stop_for_withdrawn_bot, dispatch_uid="duels-withdrawn")
