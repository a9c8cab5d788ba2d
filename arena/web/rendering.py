"""Markdown to safe HTML, for the guide's pages (:mod:`arena.web.guide`).

CommonMark with tables (markdown-it-py), raw HTML escaped rather than passed through, and
links the renderer refuses (``javascript:`` and the like) left as text. Every heading gets an
``id`` made as GitHub makes it (``## Limits (`SandboxSettings`)`` is ``#limits-sandboxsettings``),
so links written for the repository work on the site. Links are handed to a function that
returns where they should point, or None to keep only their text; images become their
alternative text.

    >>> page = render("# Title\\n\\n## A *b* c\\n\\n<b>x</b> [y](y.md)", link=lambda href: None)
    >>> page.title, page.html
    ('Title', '<h2 id="a-b-c">A <em>b</em> c</h2>\\n<p>&lt;b&gt;x&lt;/b&gt; y</p>\\n')
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token

__all__ = [
    "Heading",
    "LinkFunction",
    "Rendered",
    "heading_ids",
    "render",
    "select_sections",
    "slugify",
]

#: Where a link should point (its ``href`` given), or None to keep only its text.
LinkFunction = Callable[[str], str | None]

_MD = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable(
    "table"
)
_NOT_IN_SLUG = re.compile(r"[^\w\- ]")


@dataclass(frozen=True)
class Heading:
    level: int
    id: str
    text: str


@dataclass(frozen=True)
class Rendered:
    """A page: ``html`` (safe to insert), the text of its leading ``#`` heading (``title``,
    taken out of ``html``; empty if it had none) and its other headings."""

    html: str
    title: str
    headings: tuple[Heading, ...]


def slugify(text: str) -> str:
    """A heading's anchor, as GitHub makes it.

    >>> slugify("What a bot sees (FULL and NAMESPACE)"), slugify("D. Placing the rings")
    ('what-a-bot-sees-full-and-namespace', 'd-placing-the-rings')
    """
    return _NOT_IN_SLUG.sub("", text.strip().lower()).replace(" ", "-")


def _plain(inline: Token) -> str:
    """The text of an inline token as a reader sees it (markup dropped, code kept)."""
    parts = []
    for child in inline.children or ():
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(child.content)
    return "".join(parts)


def _headings(tokens: Sequence[Token]) -> Iterable[tuple[int, int, str]]:
    """(index of the heading_open token, level, plain text) of each heading."""
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            yield i, int(token.tag[1:]), _plain(tokens[i + 1])


class _Ids:
    """Unique ids in a page: a second "Examples" is ``examples-1``, as on GitHub."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def __call__(self, text: str) -> str:
        base = slugify(text)
        n = self.seen.get(base, 0)
        self.seen[base] = n + 1
        return base if n == 0 else f"{base}-{n}"


def heading_ids(text: str) -> set[str]:
    """The anchors of every heading of ``text`` (as :func:`render` gives them)."""
    ids = _Ids()
    return {ids(plain) for _, _, plain in _headings(_MD.parse(text))}


def select_sections(text: str, headings: Sequence[str]) -> tuple[str, list[str]]:
    """The sections of ``text`` under the given headings (their plain text, e.g. ``Limits
    (SandboxSettings)``), in that order, each with its subsections; and the headings not found.

    A section runs from its heading to the next heading of the same or a higher level. Headings
    are found by parsing, so a ``#`` line in a code block is not one.

    >>> doc = "# T\\n\\n## A\\n\\na\\n\\n### A1\\n\\n```\\n## not\\n```\\n\\n## B\\n\\nb\\n"
    >>> select_sections(doc, ["A", "C"])
    ('## A\\n\\na\\n\\n### A1\\n\\n```\\n## not\\n```\\n', ['C'])
    """
    lines = text.splitlines(keepends=True)
    tokens = _MD.parse(text)
    found = list(_headings(tokens))
    chosen: list[str] = []
    missing: list[str] = []
    for wanted in headings:
        at = next((k for k, (_, _, plain) in enumerate(found) if plain == wanted), None)
        if at is None:
            missing.append(wanted)
            continue
        index, level, _ = found[at]
        start = _line(tokens[index])
        end = next((_line(tokens[i]) for i, lv, _ in found[at + 1 :] if lv <= level), len(lines))
        section = "".join(lines[start:end]).rstrip("\n") + "\n"
        chosen.append(section)
    return "\n".join(chosen), missing


def _line(token: Token) -> int:
    assert token.map is not None  # block tokens carry their lines
    return token.map[0]


def render(text: str, *, link: LinkFunction) -> Rendered:
    """``text`` as safe HTML; ``link(href)`` gives each link's new address, or None for text."""
    tokens = _MD.parse(text)
    title = ""
    if len(tokens) >= 3 and tokens[0].type == "heading_open" and tokens[0].tag == "h1":
        title = _plain(tokens[1])
        tokens = tokens[3:]
    ids = _Ids()
    headings = []
    for index, level, plain in list(_headings(tokens)):
        anchor = ids(plain)
        tokens[index].attrSet("id", anchor)
        headings.append(Heading(level, anchor, plain))
    for token in tokens:
        if token.type == "inline" and token.children:
            token.children = _relink(token.children, link)
    html = _MD.renderer.render(tokens, _MD.options, {})
    return Rendered(html, title, tuple(headings))


def _relink(children: list[Token], link: LinkFunction) -> list[Token]:
    out: list[Token] = []
    dropping = False  # links do not nest: a dropped link_open pairs with the next link_close
    for child in children:
        if child.type == "link_open":
            target = link(str(child.attrGet("href") or ""))
            if target is None:
                dropping = True
                continue
            child.attrSet("href", target)
        elif child.type == "link_close" and dropping:
            dropping = False
            continue
        elif child.type == "image":
            child = Token("text", "", 0, content=child.content)
        out.append(child)
    return out
