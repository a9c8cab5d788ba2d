from django.apps import AppConfig


class ApiConfig(AppConfig):
    """The REST API (Django REST framework) and its OpenAPI schema."""

    name = "arena.api"
    label = "api"
    verbose_name = "REST API"
