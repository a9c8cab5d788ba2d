"""Pairing by trying everything: what the tests of matchings and formats compare with."""

from collections.abc import Callable


def pairable(players: list[int], ok: Callable[[int, int], bool]) -> bool:
    """Whether ``players`` can be paired with ``ok`` pairs only."""
    if not players:
        return True
    first, rest = players[0], players[1:]
    return any(ok(first, other) and pairable([p for p in rest if p != other], ok) for other in rest)
