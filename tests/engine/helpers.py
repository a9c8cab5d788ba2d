"""Shared helpers for the engine tests: position snapshots, random games, random set-ups."""

from __future__ import annotations

import random
from pathlib import Path

from engine import Action, Color, Phase, State, geometry, variant

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
REAL_GAMES = DATA / "real-games"  # the six real games, as in /work/shared/data/real-games
VARIANT_NAMES = ("yinsh", "blitz", "yangsh", "yangsh7")

W, B = Color.WHITE, Color.BLACK


def pts(text: str) -> list[str]:
    """``"a2 b3 c4"`` -> ``["a2", "b3", "c4"]``: positions in the tests read like the diagrams."""
    return text.split()


def setup(
    turn: Color = W,
    wr: str = "",
    br: str = "",
    wm: str = "",
    bm: str = "",
    *,
    v: str = "yinsh",
    removed: tuple[int, int] | None = None,
) -> State:
    """``State.from_setup`` with space-separated point lists."""
    return State.from_setup(v, turn, pts(wr), pts(br), pts(wm), pts(bm), removed=removed)


def legal(state: State) -> list[str]:
    """The legal actions as sorted tokens."""
    return sorted(str(a) for a in state.legal_actions())


def moves_from(state: State, ring: str) -> list[str]:
    """The destinations of one ring's legal moves, sorted."""
    return sorted(
        str(a).split("-")[1] for a in state.legal_actions() if str(a).startswith(ring + "-")
    )


def snapshot(state: State) -> dict:
    """The engine's position in the reference implementation's snapshot format."""
    o = state.outcome
    return {
        "variant": state.variant.name,
        "turn": state.turn.label,
        "next": state.next.value,
        "moved": state.moved,
        "white rings": sorted(state.points(state.rings[0])),
        "black rings": sorted(state.points(state.rings[1])),
        "white markers": sorted(state.points(state.markers[0])),
        "black markers": sorted(state.points(state.markers[1])),
        "removed": (state.removed[0], state.removed[1]),
        "pool": state.pool,
        "passes": state.passes,
        "result": (o.result.value, o.termination.value) if o else None,
    }


def random_action(state: State, rng: random.Random, seek_rows: bool = False) -> Action:
    """A random legal action; with ``seek_rows``, half the time a ring move that makes a row
    (for either player), so that the games go through many more removals."""
    actions = state.legal_actions()
    if seek_rows and state.next is Phase.MOVE and rng.random() < 0.5:
        making = []
        for a in actions:
            state.push(a)
            if state.next is Phase.REMOVE_ROW:
                making.append(a)
            state.pop()
        if making:
            return rng.choice(making)
    return actions[rng.randrange(len(actions))]


def random_game(name: str, seed: int, seek_rows: bool = False) -> State:
    """A random game played to its end."""
    state = State(name)
    rng = random.Random(seed)
    while state.legal_actions():
        state.push(random_action(state, rng, seek_rows))
    return state


def random_setup_lists(name: str, rng: random.Random) -> tuple:
    """Arguments for ``State.from_setup``: a random ring-moving position, often crowded.

    Rings and markers go on random points; a marker colour that would leave the player not to
    act with a complete row is flipped until no such row is left (``from_setup`` refuses those).
    The player to act may be left with rows: they are removed first, as at the start of a turn.
    """
    v = variant(name)
    g = geometry(v.board)
    points = g.board.points()
    rng.shuffle(points)
    removed = (rng.randrange(v.rows_to_win), rng.randrange(v.rows_to_win))
    n_w, n_b = v.rings - removed[0], v.rings - removed[1]
    wr, br = points[:n_w], points[n_w : n_w + n_b]
    free = points[n_w + n_b :]
    n_markers = rng.randint(0, min(len(free), v.markers))
    turn = rng.choice((W, B))
    colors = {p: rng.choice((W, B)) for p in free[:n_markers]}
    waiting = turn.other
    while True:
        bits = g.bits_of([p for p, c in colors.items() if c == waiting])
        if not g.has_row(bits):
            break
        # Flip one marker of a complete row of the waiting colour.
        start = next(s for s in g.row_starts(bits) if s)
        colors[g.name((start & -start).bit_length() - 1)] = turn
    wm = [p for p, c in colors.items() if c == W]
    bm = [p for p, c in colors.items() if c == B]
    return name, turn, wr, br, wm, bm, removed


def random_setup(name: str, rng: random.Random) -> State:
    """A random ring-moving position (see :func:`random_setup_lists`)."""
    return State.from_setup(*random_setup_lists(name, rng))


def crowd(name: str, occupied: str, count: int) -> tuple[str, str]:
    """``count`` markers on the points not named in ``occupied``, coloured so that no row forms.

    Points are filled in notation order, colours alternating; a point where either colour would
    complete a row is left empty. Returns white and black markers as space-separated lists, for
    positions whose pool must be nearly empty.
    """
    g = geometry(variant(name).board)
    skip = set(pts(occupied))
    chosen: list[list[str]] = [[], []]
    colour = 0
    for p in g.board.points():
        if sum(map(len, chosen)) == count:
            break
        if p in skip:
            continue
        for c in (colour, 1 - colour):
            if not g.has_row(g.bits_of([*chosen[c], p])):
                chosen[c].append(p)
                colour = 1 - c
                break
    assert sum(map(len, chosen)) == count, "not enough room for the markers"
    return " ".join(chosen[0]), " ".join(chosen[1])
