"""The Celery application: ``celery -A arena worker`` / ``celery -A arena beat``."""

import os

from celery import Celery
from kombu.transport import TRANSPORT_ALIASES

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")

# The embedded broker (sqla+sqlite:///var/celery-broker.sqlite3) polls more often: arena.broker.
TRANSPORT_ALIASES["sqla"] = "arena.broker:Transport"

app = Celery("arena")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
