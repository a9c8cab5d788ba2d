"""Celery tasks of the bots app: thin wrappers that take ids and call a service."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.db import OperationalError

from arena.bots import services
from arena.games.services import InfrastructureError

#: Retries of a task whose database was away.
DATABASE_RETRIES = 5


@shared_task(bind=True, acks_late=True, max_retries=None)
def check_version(self: Any, version_id: int) -> str:
    """Unpack and check an uploaded bot version; it becomes active or is rejected."""
    try:
        return services.check_version(version_id)
    except (InfrastructureError, OperationalError) as e:
        if isinstance(e, OperationalError) and self.request.retries >= DATABASE_RETRIES:
            raise
        raise self.retry(exc=e, countdown=min(300, 10 * 2**self.request.retries)) from e
