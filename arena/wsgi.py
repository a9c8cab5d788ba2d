"""WSGI entry point for production servers (gunicorn arena.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")
application = get_wsgi_application()
# Every view module is imported now, when the server loads the application (once, before it
# forks its workers: gunicorn --preload), not by each worker's first request: on a slow host
# that import outlasted gunicorn's worker timeout, and the workers were killed over and over.
url_patterns = get_resolver().url_patterns
