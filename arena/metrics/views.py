"""``GET /metrics``: the arena's metrics in Prometheus's text format, for a scraper that
sends the bearer token ``ARENA_METRICS_TOKEN``.

Without the token set the URL does not exist (404); a missing or wrong token gets 401 with
``WWW-Authenticate: Bearer``. No session or CSRF is involved (the scraper sends neither), and
the page rate limit leaves it alone (:data:`arena.web.middleware.POLLED`).
"""

from __future__ import annotations

import hmac
import os

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from arena.metrics.collector import ArenaCollector
from arena.metrics.middleware import LATENCY

__all__ = ["metrics", "registry"]


def registry() -> CollectorRegistry:
    """What one scrape reads: the arena's facts (from the database and the broker) and the
    request latencies, of every gunicorn process when ``PROMETHEUS_MULTIPROC_DIR`` is set."""
    found = CollectorRegistry()
    found.register(ArenaCollector())
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        MultiProcessCollector(found)
    else:
        found.register(LATENCY)
    return found


def authorized(request: HttpRequest, token: str) -> bool:
    """Whether the request carries ``Authorization: Bearer <token>`` (compared in constant
    time)."""
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(
        given.strip().encode(), token.encode()
    )


@require_GET
@never_cache
def metrics(request: HttpRequest) -> HttpResponse:
    """The metrics, to a scraper with the token."""
    token = settings.METRICS_TOKEN
    if not token:
        raise Http404("the metrics are off (ARENA_METRICS_TOKEN is not set)")
    if not authorized(request, token):
        refused = HttpResponse(
            "The metrics need the bearer token (Authorization: Bearer <token>).\n",
            status=401,
            content_type="text/plain; charset=utf-8",
        )
        refused["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return refused
    return HttpResponse(generate_latest(registry()), content_type=CONTENT_TYPE_LATEST)
