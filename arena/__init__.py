"""The arena: the Django project, the referee and the Celery tasks."""

import os

# The rating fit's matrices are sparse or small: OpenBLAS's threads would only spin against
# the other processes on the same cores (a fit several times slower on a busy machine). Set
# before anything loads numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# The Celery app is loaded with Django so that tasks enqueued by the web process use it.
from arena.celery import app as celery_app

__all__ = ["celery_app"]
