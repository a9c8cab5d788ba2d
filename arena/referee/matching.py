"""Perfect matchings of small general graphs, for pairings (a Swiss round, its bye).

:func:`perfect_matching` finds one with Edmonds' blossom algorithm (maximum cardinality, so a
graph with odd cycles is handled, which a bipartite assignment is not). :func:`preferred_matching`
picks, among all perfect matchings, the first in an order of preference: the first vertex gets
the partner it prefers most among those that still leave the rest pairable, then the next
unpaired vertex, and so on. Both are exact; a graph of ``n`` vertices costs at most ``O(n)``
searches for an augmenting path per vertex.

    >>> allowed = {(0, 1), (0, 2), (1, 3), (2, 3)}
    >>> ok = lambda a, b: (a, b) in allowed or (b, a) in allowed
    >>> perfect_matching([0, 1, 2, 3], ok) is not None
    True
    >>> preferred_matching([0, 1, 2, 3], ok, lambda v: [3, 2, 1, 0])
    [(0, 2), (1, 3)]
    >>> perfect_matching([0, 1, 2], ok) is None
    True
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

__all__ = ["perfect_matching", "preferred_matching"]

V = TypeVar("V", bound=Hashable)


def perfect_matching(vertices: Sequence[V], allowed: Callable[[V, V], bool]) -> dict[V, V] | None:
    """A perfect matching of ``vertices`` using only pairs ``allowed(a, b)`` (which must be
    symmetric), as a map from each vertex to its partner; None when there is none."""
    return _complete(list(vertices), allowed, {})


def preferred_matching(
    vertices: Sequence[V],
    allowed: Callable[[V, V], bool],
    preferences: Callable[[V], Iterable[V]],
) -> list[tuple[V, V]] | None:
    """The perfect matching first in the order of preference, or None when there is none.

    ``vertices`` are taken in their order: each vertex not yet paired is paired with the first
    vertex of ``preferences(vertex)`` that is allowed, not yet paired, and leaves the others
    pairable; a vertex missing from its preferences is tried after them, in the order of
    ``vertices``. Returns the pairs ``(vertex, partner)`` in the order they were made.
    """
    order = list(vertices)
    mate = _complete(order, allowed, {})
    if mate is None:
        return None
    free = set(order)
    pairs: list[tuple[V, V]] = []
    for v in order:
        if v not in free:
            continue
        free.discard(v)
        for c in _candidates(v, preferences(v), order):
            if c not in free or not allowed(v, c):
                continue
            if mate[v] != c:
                rest = [x for x in order if x in free and x != c]
                partial = {
                    x: y for x, y in mate.items() if x in free and y in free and c not in (x, y)
                }
                found = _complete(rest, allowed, partial)
                if found is None:
                    continue
                mate = {**found, v: c, c: v}
            free.discard(c)
            pairs.append((v, c))
            break
        else:  # pragma: no cover - mate[v] itself is always a candidate that works
            raise AssertionError("a perfect matching was lost")
    return pairs


def _candidates(v: V, preferred: Iterable[V], order: Sequence[V]) -> Iterable[V]:
    seen = set()
    for c in preferred:
        if c != v and c not in seen:
            seen.add(c)
            yield c
    for c in order:
        if c != v and c not in seen:
            yield c


def _complete(
    vertices: list[V], allowed: Callable[[V, V], bool], partial: dict[V, V]
) -> dict[V, V] | None:
    """A perfect matching of ``vertices`` that grows the matching ``partial`` (pairs among
    them), or None."""
    n = len(vertices)
    if n % 2:
        return None
    index = {v: i for i, v in enumerate(vertices)}
    adj = [[j for j in range(n) if j != i and allowed(vertices[i], vertices[j])] for i in range(n)]
    mate = [-1] * n
    for a, b in partial.items():
        mate[index[a]] = index[b]
    for i in range(n):  # a greedy start leaves few augmenting paths to find
        if mate[i] == -1:
            for j in adj[i]:
                if mate[j] == -1:
                    mate[i], mate[j] = j, i
                    break
    for i in range(n):
        if mate[i] == -1 and not _augment(adj, mate, i):
            return None
    return {vertices[i]: vertices[mate[i]] for i in range(n)}


def _augment(adj: list[list[int]], mate: list[int], root: int) -> bool:
    """Edmonds' search for an augmenting path from the free vertex ``root``: a breadth-first
    search of alternating paths that shrinks each odd cycle it meets (a blossom) to its base.
    Flips the path found into ``mate`` and returns True; False when there is none."""
    n = len(adj)
    base = list(range(n))
    parent = [-1] * n
    outer = [False] * n
    outer[root] = True
    queue = deque([root])

    def common_base(a: int, b: int) -> int:
        seen = [False] * n
        while True:
            a = base[a]
            seen[a] = True
            if mate[a] == -1:
                break
            a = parent[mate[a]]
        while True:
            b = base[b]
            if seen[b]:
                return b
            b = parent[mate[b]]

    def mark_path(v: int, b: int, child: int, blossom: list[bool]) -> None:
        while base[v] != b:
            blossom[base[v]] = blossom[base[mate[v]]] = True
            parent[v] = child
            child = mate[v]
            v = parent[mate[v]]

    while queue:
        v = queue.popleft()
        for to in adj[v]:
            if base[v] == base[to] or mate[v] == to:
                continue
            if to == root or (mate[to] != -1 and parent[mate[to]] != -1):
                b = common_base(v, to)
                blossom = [False] * n
                mark_path(v, b, to, blossom)
                mark_path(to, b, v, blossom)
                for i in range(n):
                    if blossom[base[i]]:
                        base[i] = b
                        if not outer[i]:
                            outer[i] = True
                            queue.append(i)
            elif parent[to] == -1:
                parent[to] = v
                if mate[to] == -1:
                    while to != -1:
                        pv = parent[to]
                        after = mate[pv]
                        mate[to], mate[pv] = pv, to
                        to = after
                    return True
                outer[mate[to]] = True
                queue.append(mate[to])
    return False
