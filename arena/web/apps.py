from django.apps import AppConfig


class WebConfig(AppConfig):
    """The site's pages, accounts and the command that runs everything locally."""

    name = "arena.web"
    label = "web"
    verbose_name = "Web site"
