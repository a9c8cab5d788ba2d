"""Usernames that look alike: ``\u0430lice`` (a Cyrillic a) beside ``alice``, ``Alice``,
``a1ice``.

Two names look alike when they have the same *skeleton* (Unicode Technical Standard #39,
section 4): each character replaced by a representative of the characters it can be mistaken
for, from Unicode's table of confusables (``confusables.txt``, as the maintained
``confusable_homoglyphs`` package ships it), after compatibility normalisation (NFKC) and case
folding. Sign-up refuses a name whose skeleton an existing user's has: a newcomer cannot pass
for someone already known. Existing names are left as they are.

The package answers whether one string mixes scripts; the skeleton comparison between two
names is built here from its table: characters it lists as confusable with each other form
one class, whose representative is its ASCII letter or digit when it has one.
"""

from __future__ import annotations

import functools
import string
import unicodedata

from confusable_homoglyphs import confusables  # type: ignore[import-untyped]  # ships no types
from django.contrib.auth import get_user_model

__all__ = ["skeleton", "too_like"]

_PREFERRED = string.ascii_lowercase + string.digits + string.ascii_uppercase


@functools.cache
def _representatives() -> dict[str, str]:
    """Each confusable character's representative (characters absent stand for themselves)."""
    parent: dict[str, str] = {}

    def find(c: str) -> str:
        while parent.get(c, c) != c:
            parent[c] = parent.get(parent[c], parent[c])
            c = parent[c]
        return c

    for char, homoglyphs in confusables.confusables_data.items():
        for h in homoglyphs:
            other = h["c"]
            if len(char) == 1 and len(other) == 1:
                parent.setdefault(char, char)
                parent.setdefault(other, other)
                a, b = find(char), find(other)
                if a != b:
                    parent[a] = b
    classes: dict[str, list[str]] = {}
    for c in list(parent):
        classes.setdefault(find(c), []).append(c)
    chosen: dict[str, str] = {}
    for members in classes.values():
        ascii_ones = sorted((m for m in members if m in _PREFERRED), key=_PREFERRED.index)
        rep = ascii_ones[0] if ascii_ones else min(members)
        for m in members:
            chosen[m] = rep
    return chosen


def skeleton(name: str) -> str:
    """What ``name`` looks like, for comparing: equal skeletons look alike.

    >>> skeleton("alice") == skeleton("\\u0430lice") == skeleton("Alice") == skeleton("a1ice")
    True
    >>> skeleton("alice") == skeleton("aIice")  # a capital I for the l
    True
    >>> skeleton("alice") == skeleton("alicia")
    False
    """
    reps = _representatives()
    once = "".join(reps.get(c, c) for c in unicodedata.normalize("NFKC", name))
    folded = unicodedata.normalize("NFKC", once.casefold())
    return "".join(reps.get(c, c) for c in folded)


def too_like(name: str) -> str | None:
    """The existing username that ``name`` looks like (itself, if taken), or None."""
    wanted = skeleton(name)
    names = get_user_model().objects.values_list("username", flat=True)
    for existing in names.iterator(chunk_size=2000):
        if skeleton(existing) == wanted:
            return str(existing)
    return None
