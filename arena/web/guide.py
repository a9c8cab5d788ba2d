"""The guide "Writing a bot": pages made at run time from the Markdown files of the repository.

Each topic is one or more parts: a file (``docs/protocol.md``), or chosen sections of one, by
heading (the limits are four sections of ``docs/sandbox.md``). The pages render those very
files, so the site and the repository never disagree; a page is rendered again when one of its
files changes (the cache is keyed by their modification times). A topic whose file does not
exist yet says so. Links between the files point to the guide's pages when the file has one,
to the site's download when they name the SDK, a starter kit or the checker, and are plain text
otherwise: no page names a path of the repository.

:func:`how_to_fix` maps a rejected version's reason to the page that explains the fix; the
bot's page shows it beside the reason.
"""

from __future__ import annotations

import functools
import logging
import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import mark_safe

import engine
from arena.referee import runtimes
from arena.referee.conformance import plan
from arena.referee.outcomes import Failure
from arena.web import rendering

__all__ = ["TOPICS", "Fix", "Part", "Topic", "how_to_fix", "index", "page", "render_topic"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Part:
    """A file of the repository (``path`` from its root), whole or only some ``sections``
    (headings as a reader sees them, code marks left out)."""

    path: str
    sections: tuple[str, ...] = ()


@dataclass(frozen=True)
class Topic:
    slug: str
    title: str
    summary: str
    parts: tuple[Part, ...]


BOTS_MD = "docs/bots.md"

TOPICS: tuple[Topic, ...] = (
    Topic(
        "protocol",
        "The protocol",
        "The JSON lines a bot reads and writes, the clock, and every way a game can be lost.",
        (Part("docs/protocol.md"),),
    ),
    Topic(
        "position",
        "The position",
        "The position as JSON, as every request gives it: rings, markers, the pool and what "
        "comes next.",
        (Part("docs/position-json.md"),),
    ),
    Topic(
        "sdk",
        "The Python SDK",
        "A whole bot as one Python function, with the rules library for bots that search.",
        (Part("bots/README.md", ("A bot in five lines",)),),
    ),
    Topic(
        "bots",
        "Packaging a bot",
        "The bot.toml manifest, single-file bots, and what an upload may hold.",
        (Part(BOTS_MD),),
    ),
    Topic(
        "trials",
        "Trying a bot",
        "One unrated game in the arena's own sandbox, with your bot's log move by move, before "
        "you publish it.",
        (Part(BOTS_MD, ("Trying a bot in the arena before you publish it",)),),
    ),
    Topic(
        "variants",
        "Variants",
        "The four variants, and how a bot says which ones it plays.",
        (Part(BOTS_MD, ("Variants",)), Part("docs/rules.md", ("The variants",))),
    ),
    Topic(
        "builds",
        "Builds",
        "Shipping sources and a build command instead of a program.",
        (Part(BOTS_MD, ("Builds",)),),
    ),
    Topic(
        "runtimes",
        "Runtimes",
        "The languages and interpreters a bot can use in the sandbox.",
        (Part("docs/runtimes.md", ("The set", "What bots may use")),),
    ),
    Topic(
        "limits",
        "Limits",
        "What a bot sees in the sandbox, its memory, processes, files and CPU time, and what "
        "happens when it goes past them.",
        (
            Part(
                "docs/sandbox.md",
                (
                    "What a bot sees (FULL and NAMESPACE)",
                    "The system-call filter",
                    "Limits (SandboxSettings)",
                    "Violations",
                ),
            ),
        ),
    ),
    Topic(
        "tests",
        "Tests and challenges",
        "Is v2 stronger than v1? Sequential tests (SPRT) on pairs of games, and challenges "
        "between bots.",
        (Part("docs/duels.md"),),
    ),
    Topic(
        "play",
        "Playing a bot",
        "Play a bot yourself in the browser: choosing the game, moving on the board, and where "
        "the games are listed.",
        (Part("docs/people.md"),),
    ),
    Topic(
        "tournaments",
        "Tournaments",
        "The formats: round robins, Swiss, gauntlet and knockout; who meets whom, colours, "
        "byes, tie-breaks and the tables.",
        (Part("docs/tournaments.md"),),
    ),
    Topic(
        "notifications",
        "Notifications",
        "Being told when a check, a test or a tournament finishes: the inbox, e-mail and "
        "webhooks, and what a webhook receives.",
        (
            Part(
                "docs/notifications.md",
                ("Events", "Settings", "The inbox", "Verifying an address", "The webhook payload"),
            ),
        ),
    ),
    Topic(
        "starters",
        "Starter kits",
        "Bots ready to copy, one per language.",
        (Part("bots/starters/README.md"),),
    ),
)
_BY_SLUG = {t.slug: t for t in TOPICS}


@dataclass(frozen=True)
class Page:
    """A rendered topic: ``html`` is safe to insert."""

    topic: Topic
    title: str
    #: The title's anchor when it is the file's own ``#`` heading (links may point to it).
    anchor: str
    html: str
    headings: tuple[rendering.Heading, ...]
    written: bool


def _root() -> Path:
    return Path(settings.GUIDE_ROOT)


def _stamp(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


#: Every file of the guide: a page's links depend on the others' headings.
_FILES = tuple(dict.fromkeys(part.path for topic in TOPICS for part in topic.parts))


def render_topic(topic: Topic) -> Page:
    """The topic's page, rendered again only when one of the guide's files changed."""
    root = _root()
    return _render(topic, str(root), tuple(_stamp(root / path) for path in _FILES))


@functools.lru_cache(maxsize=64)
def _render(topic: Topic, root: str, stamps: tuple[int | None, ...]) -> Page:
    """``stamps``: the modification times of :data:`_FILES`, the key of the cache."""
    sources = [_source(Path(root), part) for part in topic.parts]
    anchors = set().union(*(rendering.heading_ids(text) for text in sources if text))
    html: list[str] = []
    headings: list[rendering.Heading] = []
    title, anchor = topic.title, ""
    for part, text in zip(topic.parts, sources, strict=True):
        if text is None:
            html.append(
                '<p class="note not-written">This page is not written yet: it will be made '
                f"from <code>{part.path}</code>.</p>\n"
            )
            continue
        rendered = rendering.render(text, link=_linker(Path(root), part.path, anchors))
        if rendered.title and len(topic.parts) == 1:
            title, anchor = rendered.title, rendering.slugify(rendered.title)
        html.append(rendered.html)
        headings += rendered.headings
    written = any(text is not None for text in sources)
    return Page(topic, title, anchor, mark_safe("".join(html)), tuple(headings), written)


def _source(root: Path, part: Part) -> str | None:
    """The part's Markdown, or None when its file does not exist."""
    try:
        text = (root / part.path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    if not part.sections:
        return text
    chosen, missing = rendering.select_sections(text, part.sections)
    if missing:
        log.warning("guide: %s has no section %s", part.path, ", ".join(map(repr, missing)))
    return chosen


def _linker(root: Path, source: str, anchors: set[str]) -> rendering.LinkFunction:
    """How the links of ``source`` (a path from the root) are rewritten on a page whose
    headings have ``anchors``."""

    def link(href: str) -> str | None:
        parts = urlsplit(href)
        if parts.scheme or parts.netloc or href.startswith("/"):
            return href  # another site, or a page of this one
        fragment = parts.fragment
        if not parts.path:
            if fragment in anchors:
                return href
            return _page_url(source, fragment, root)  # a section left out of this page
        here = posixpath.dirname(source)
        for candidate in (posixpath.join(here, parts.path), parts.path):
            path = posixpath.normpath(candidate)
            url = _page_url(path, fragment, root) or _download_url(path)
            if url is not None:
                return url
        return None

    return link


def _page_url(path: str, fragment: str, root: Path) -> str | None:
    """The guide's address for ``path#fragment``: the page that shows that section (or the
    page made of the whole file when there is no fragment), else None."""
    holders = [t for t in TOPICS if any(p.path == path for p in t.parts)]
    if not holders:
        return None
    whole = [t for t in holders if any(p.path == path and not p.sections for p in t.parts)]
    chosen = (whole or holders)[0]
    if fragment:
        showing = [t for t in holders if fragment in _anchors_of(t, root)]
        if not showing:
            return None if not whole else _url(whole[0], fragment)
        chosen = next((t for t in showing if t in whole), showing[0])
    return _url(chosen, fragment)


def _download_url(path: str) -> str | None:
    """The site's download of a folder of the repository a bot author needs (the SDK, a
    starter kit, the checker's module), else None."""
    if path in ("bots/sdk", "bots/sdk/yinshbot"):
        return reverse("sdk-download")
    if path == "arena/referee/checker.py":
        return reverse("checkbot-download")
    folder, _, key = path.rpartition("/")
    if folder == "bots/starters" and key in {r.key for r in runtimes.RUNTIMES}:
        return reverse("starter-kit", args=[key])
    return None


def _anchors_of(topic: Topic, root: Path) -> set[str]:
    texts = (_source(root, part) for part in topic.parts)
    return set().union(*(rendering.heading_ids(text) for text in texts if text))


def _url(topic: Topic, fragment: str = "") -> str:
    url = reverse("guide-page", args=[topic.slug])
    return f"{url}#{fragment}" if fragment else url


# ----------------------------------------------------------------------------- rejections


@dataclass(frozen=True)
class Fix:
    """Where the guide explains how to fix a rejection."""

    title: str
    url: str


_MANIFEST_KEY = re.compile(r"\bbot\.toml: (?:unknown )?(build|variants?)\b")


def how_to_fix(reason: str) -> Fix | None:
    """The guide's page for a rejected version's ``reason`` (None: the guide cannot help).

    A sandbox violation goes to the limits, a build failure to the builds, an upload that
    cannot be used to the packaging page (its builds or variants when the manifest's key is
    named), a failed protocol check or qualification game to the protocol.
    """
    text = reason.strip()
    if "stopped by the sandbox" in text or f"lost by {Failure.SANDBOX.value}" in text:
        slug = "limits"
    elif text.startswith("the build") or "build failed" in text:
        slug = "builds"
    elif text.startswith("the upload cannot be used"):
        key = _MANIFEST_KEY.search(text)
        slug = "bots" if key is None else ("builds" if key[1] == "build" else "variants")
    elif text.startswith(("the protocol check failed", "qualification game")):
        slug = "protocol"
    else:
        return None
    topic = _BY_SLUG[slug]
    return Fix(topic.title, _url(topic))


# ----------------------------------------------------------------------------- views


@dataclass(frozen=True)
class Games:
    """How many games a stage of the arena's check of a version plays, from the settings."""

    least: int
    every_variant: int
    clock: str


def check_games() -> tuple[Games, Games]:
    """The protocol check's games and the qualification games (:mod:`arena.admission`): the
    least a bot plays, and what a bot that declares every variant plays."""
    every = list(engine.VARIANTS)
    check, qualification = settings.CHECK_GAMES, settings.QUALIFICATION_GAMES
    return (
        Games(
            len(plan(every[:1], check)),
            len(plan(every, check)),
            settings.CHECK_TIME_CONTROL,
        ),
        Games(
            len(plan(every[:1], qualification, each_colour=True)),
            len(plan(every, qualification, each_colour=True)),
            settings.QUALIFICATION_TIME_CONTROL,
        ),
    )


def index(request: HttpRequest) -> HttpResponse:
    root = _root()
    topics = [(t, all(os.path.exists(root / p.path) for p in t.parts)) for t in TOPICS]
    check, qualification = check_games()
    context = {
        "topics": topics,
        "check": check,
        "qualification": qualification,
        "kits": runtimes.RUNTIMES,
    }
    return render(request, "web/guide_index.html", context)


def page(request: HttpRequest, topic: str) -> HttpResponse:
    try:
        chosen = _BY_SLUG[topic]
    except KeyError:
        raise Http404("no such page in the guide") from None
    return render(
        request,
        "web/guide_page.html",
        {"page": render_topic(chosen), "topics": TOPICS},
    )
