"""The guide's downloads: the Python bot SDK and the local checker, ``checkbot.pyz``.

Both are made from the project's modules by :mod:`arena.referee.bundles` (again only when a
file changed); the starter kits are on the runtimes page (:mod:`arena.web.runtimes`).
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from arena.games import downloads
from arena.referee import bundles

__all__ = ["checkbot", "sdk"]

#: ``checkbot.pyz`` is a zip that Python runs; it is offered as a file to save, not opened.
PYZ_TYPE = "application/octet-stream"


def sdk(request: HttpRequest) -> HttpResponse:
    name, data = bundles.sdk_archive()
    return downloads.Download(data, name, downloads.ZIP_TYPE).response()


def checkbot(request: HttpRequest) -> HttpResponse:
    name, data = bundles.checkbot_archive()
    return downloads.Download(data, name, PYZ_TYPE).response()
