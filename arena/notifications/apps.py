from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    """What users are told when their work finishes: per-user settings, email and webhook
    deliveries, and the task that sends them."""

    name = "arena.notifications"
    label = "notifications"
    verbose_name = "Notifications"
