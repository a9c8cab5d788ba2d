"""The arena: the Django project, the referee and the Celery tasks."""

# The Celery app is loaded with Django so that tasks enqueued by the web process use it.
from arena.celery import app as celery_app

__all__ = ["celery_app"]
