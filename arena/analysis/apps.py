from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    """The analysis board's requests: one bot asked for its action in one position."""

    name = "arena.analysis"
    label = "analysis"
    verbose_name = "Analysis board"
