"""Middleware of the site."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, resolve

from arena.core import throttles
from arena.core.errors import Refused
from arena.web import clients, refusals

#: Room for the form fields around the largest upload.
_ENVELOPE = 1024 * 1024


class RequestSizeLimit:
    """Refuse a request whose body is larger than any the site accepts, before it is read.

    Django writes an uploaded file to disk while it parses the request, whatever its size, and
    checks the size only afterwards; this answers 413 at once, from the declared length.
    (A request without a declared length is limited by the proxy in front of the site:
    docs/deployment.md.)
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        limit = settings.BOT_UPLOAD_MAX_BYTES + _ENVELOPE
        if length > limit:
            most = settings.BOT_UPLOAD_MAX_BYTES // (1024 * 1024)
            message = f"the request is {length} bytes; an upload may be at most {most} MiB"
            if request.path.startswith("/api/"):
                return JsonResponse({"detail": message}, status=413)
            return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


class RefusalPages:
    """A service's refusal (:class:`~arena.core.errors.Refused`) that no form showed: a small
    page with its words, sent with its status and headers (:func:`arena.web.refusals.page`),
    not a server error. (The API answers its own: :func:`arena.api.views.exception_handler`.)
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, Refused):
            return refusals.page(request, exception)
        return None


#: Pages asked for again and again by the site's own scripts (a live game's moves), by the
#: containers' health check and by a metrics scraper (which has a token of its own), by URL
#: name: never counted against an address's rate of pages.
POLLED = frozenset(
    {
        "match-live",
        "match-live-events",
        "trial-events",
        "test-events",
        "challenge-events",
        "tournament-events",
        "bot-events",
        "healthz",
        "metrics",
    }
)


class PageRateLimit:
    """A rate on the site's pages per address for visitors without a login
    (``ARENA_THROTTLE_PAGES``, generous: a few hundred a minute), to keep one address from
    keeping the site busy. Over it: a small page sent with 429 and ``Retry-After``.

    Not counted: logged-in users (their costly actions have rates of their own), the API (it
    has its own rates: :mod:`arena.api.throttles`), static files (served before this), and the
    URLs the site's scripts poll or listen to (:data:`POLLED`). Counts live in Django's cache:
    per process with the embedded defaults, shared by every web process with Redis.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if self._counted(request):
            try:
                throttles.hit(clients.address(request), "pages")
            except throttles.Throttled as e:
                return refusals.page(request, e)
        return self.get_response(request)

    @staticmethod
    def _counted(request: HttpRequest) -> bool:
        if request.user.is_authenticated:
            return False
        static = "/" + settings.STATIC_URL.lstrip("/")
        if request.path.startswith(("/api/", static)):
            return False
        try:
            name = resolve(request.path_info).url_name
        except Resolver404:
            return True
        return name not in POLLED
