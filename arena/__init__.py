"""The arena: the Django project (settings, URLs, the Celery app) and its apps, the referee and
the statistics.

The Celery app (:mod:`arena.celery`, ``celery -A arena``) is loaded when Django starts
(``arena.jobs``' ``ready``), not here: the referee and the statistics import without Celery.
"""

import os

# The rating fit's matrices are sparse or small: OpenBLAS's threads would only spin against
# the other processes on the same cores and slow the fit down on a busy machine. Set before
# anything loads numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
