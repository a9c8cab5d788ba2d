"""The runtimes page (languages and versions bots can use) and the starter kits' downloads.

The versions are those of the host serving the page, probed at most every
:data:`PROBE_SECONDS` per cache and kept in Django's cache: the page never runs compilers on
each request. The web process and the workers run the same image (Dockerfile), so what it
finds is what the bots get; docs/runtimes.md explains this and how to check a worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.cache import cache
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from arena.games import downloads
from arena.referee import runtimes
from arena.referee.bots import BotError, BotSpec

#: How long a probe's result is kept, in seconds.
PROBE_SECONDS = 600
_CACHE_KEY = "arena:runtimes:v2"  # v2: with each runtime's minimum and features


@dataclass(frozen=True)
class Kit:
    """A starter kit as the page shows it: its manifest's build and run commands."""

    key: str
    filename: str
    build: str
    command: str


def probed() -> tuple[list[dict[str, Any]], datetime]:
    """The runtimes' reports (as JSON) and when they were made, from the cache if fresh."""
    found = cache.get(_CACHE_KEY)
    if found is None:
        found = {
            "at": timezone.now().isoformat(),
            "runtimes": [r.to_json() for r in runtimes.probe()],
        }
        cache.set(_CACHE_KEY, found, PROBE_SECONDS)
    return found["runtimes"], datetime.fromisoformat(found["at"])


def _kit(runtime: runtimes.Runtime) -> Kit | None:
    try:
        spec = BotSpec.load(runtime.kit)
    except BotError:
        return None
    return Kit(
        runtime.key,
        f"yinsh-starter-{runtime.key}.zip",
        spec.build,
        " ".join(spec.command),
    )


def runtime_list(request: HttpRequest) -> HttpResponse:
    reports, at = probed()
    kits = {r.key: _kit(r) for r in runtimes.RUNTIMES}
    rows = [(report, kits.get(report["key"])) for report in reports]
    return render(request, "web/runtimes.html", {"rows": rows, "probed_at": at})


def starter_kit(request: HttpRequest, key: str) -> HttpResponse:
    """The starter kit of runtime ``key`` as a zip, made from ``bots/starters/<key>/``."""
    try:
        runtime = runtimes.by_key(key)
    except KeyError:
        raise Http404(f"no runtime {key!r}") from None
    if not runtime.kit.is_dir():
        raise Http404(f"no starter kit for {key!r}")
    name, data = runtimes.kit_archive(runtime)
    return downloads.Download(data, name, downloads.ZIP_TYPE).response()
