from django.apps import AppConfig


class AdmissionConfig(AppConfig):
    """The check of uploaded versions and their qualification."""

    name = "arena.admission"
    label = "admission"
    verbose_name = "Checks of uploaded versions"
