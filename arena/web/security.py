"""The Content-Security-Policy header of every answer, from ``settings.SECURE_CSP`` (a dict
of directive to sources, as Django 6's own setting of that name): what a page may load and
run. The site's pages need no inline script (``arena/static/arena/site.js`` and ``board.js``
are files), so a script injected into a page would not run.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

__all__ = ["ContentSecurityPolicy", "header"]


def header(policy: dict[str, list[str]]) -> str:
    """The header's value of ``policy``.

    >>> header({"default-src": ["'self'"], "img-src": ["'self'", "data:"]})
    "default-src 'self'; img-src 'self' data:"
    """
    return "; ".join(" ".join([directive, *sources]) for directive, sources in policy.items())


class ContentSecurityPolicy:
    """Adds the policy to every answer that has none of its own."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.value = header(settings.SECURE_CSP)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if self.value:
            response.headers.setdefault("Content-Security-Policy", self.value)
        return response
