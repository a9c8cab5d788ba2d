"""The web server's request latency, a Prometheus histogram observed around every request.

Labels stay few whatever clients send: the method (``other`` for unusual ones), the route
pattern the request resolved to (never its raw path; ``unresolved`` for static files and
unknown paths) and the status class. Under gunicorn with ``PROMETHEUS_MULTIPROC_DIR`` set,
prometheus_client keeps each process's observations in files there, added up at scrape time
(:mod:`arena.metrics.gunicorn`); else in this process.

A page's event stream (``text/event-stream``, :mod:`arena.web.streams`) is left out: it lasts
up to its lifetime by design, and the time until its first byte is only the time its view took
to start it, so either figure would only blur the histogram of what people wait for.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from prometheus_client import Histogram, disable_created_metrics

__all__ = ["LATENCY", "RequestLatency"]

# No ``_created`` series beside each histogram: the text format gives them as gauges of their
# own, one per label set, that say only when this process first saw that route.
disable_created_metrics()

#: Registered by the view (:func:`arena.metrics.views.registry`), not in the global registry.
LATENCY = Histogram(
    "arena_http_request_duration_seconds",
    "Time the web server took to answer a request, by method, route and status class.",
    ["method", "route", "status"],
    registry=None,
)

_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class RequestLatency:
    """Times every request but the event streams, first in and last out of the middleware."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        start = time.perf_counter()
        response = self.get_response(request)
        if response.get("Content-Type", "").startswith("text/event-stream"):
            return response
        elapsed = time.perf_counter() - start
        match = request.resolver_match
        LATENCY.labels(
            request.method if request.method in _METHODS else "other",
            match.route if match is not None else "unresolved",
            f"{response.status_code // 100}xx",
        ).observe(elapsed)
        return response
