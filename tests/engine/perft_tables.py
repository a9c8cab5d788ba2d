"""Make tests/data/perft.json: move counts from chosen positions, counted twice and compared.

Run ``python -m tests.engine.perft_tables`` from the repository root. Each position is counted by
the engine (``engine.perft``) and by the reference implementation (``reference.perft``, written
independently from the rulebook); the script stops if the two disagree anywhere, and otherwise
writes the table that ``test_perft.py`` checks. A count at depth ``d`` is the number of action
sequences of ``d`` actions (placements, ring moves, passes, row and ring removals each count).

Positions come from three sources: the start and a fixed opening; hand-made set-ups and games
(``positions.py``: rows, passes, the notation examples); and random games, found by scanning
seeds for a position with a wanted feature (rows about to be made, a pool about to run out, ...).
Those are stored as the actions that lead to them, so the table does not depend on this script.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable

from engine import Kind, Phase, State, perft, replay
from tests.engine import positions, reference
from tests.engine.helpers import DATA, random_action, setup

OUT = DATA / "perft.json"

OPENING = "e3 a5 b5 c6 d6 e4 h7 g2 g3 g8"


def actions(game: str) -> str:
    """The actions of a game in the official notation, one token each."""
    return " ".join(str(a) for a in replay(game).history)


def find(
    name: str, want: Callable[[State], bool], seek_rows: bool = False, seeds: int = 5000
) -> str:
    """The actions of the first random game position (seed by seed) where ``want`` holds."""
    for seed in range(seeds):
        s = State(name)
        rng = random.Random(seed)
        while not s.is_over():
            if want(s):
                return " ".join(str(a) for a in s.history)
            s.push(random_action(s, rng, seek_rows))
    raise LookupError(f"no {name} position found")


def makes_rows_for_both(s: State) -> bool:
    """A ring move is open that makes a row for the mover and one for the opponent."""
    if s.next is not Phase.MOVE:
        return False
    for a in s.legal_actions():
        s.push(a)
        both = s.next is Phase.REMOVE_ROW and bool(s.rows(s.turn.other))
        s.pop()
        if both:
            return True
    return False


def last_marker_makes_a_row(s: State) -> bool:
    if s.next is not Phase.MOVE or s.pool != 1:
        return False
    for a in s.legal_actions():
        s.push(a)
        row = s.next is Phase.REMOVE_ROW
        s.pop()
        if row:
            return True
    return False


def spec() -> list[dict]:
    """The positions of the table, with the depths to count."""
    rows = [
        dict(name="yinsh start", variant="yinsh", actions="", depths=3),
        dict(name="yinsh after a fixed opening", variant="yinsh", actions=OPENING, depths=3),
        dict(
            name="yinsh notation case 1: White's next move makes two separate rows",
            variant="yinsh",
            actions=actions(positions.CASE_1),
            depths=4,
        ),
        dict(
            name="yinsh notation case 3: White starts its turn with two rows to remove",
            variant="yinsh",
            actions=actions(positions.CASE_3),
            depths=6,
        ),
        dict(
            name="yinsh two separate rows (hand-made)",
            variant="yinsh",
            setup=positions.TWO_ROWS,
            depths=4,
        ),
        dict(
            name="yinsh crossing rows (hand-made)",
            variant="yinsh",
            setup=positions.CROSSING,
            depths=3,
        ),
        dict(
            name="yinsh a row for each player (hand-made)",
            variant="yinsh",
            setup=positions.BOTH,
            depths=4,
        ),
        dict(
            name="yinsh White blocked: passes (hand-made)",
            variant="yinsh",
            setup=positions.BLOCKED_WHITE,
            depths=4,
        ),
        dict(
            name="yinsh both blocked: two passes end the game (hand-made)",
            variant="yinsh",
            setup=positions.BLOCKED_BOTH,
            depths=3,
        ),
        dict(
            name="yinsh game: White's rings walled in, it must pass",
            variant="yinsh",
            actions=actions(positions.WALLED_IN),
            depths=4,
        ),
        dict(
            name="yinsh random game: a move makes rows for both players",
            variant="yinsh",
            actions=find("yinsh", makes_rows_for_both, seek_rows=True),
            depths=4,
        ),
        dict(
            name="yinsh random game: two markers left in the pool",
            variant="yinsh",
            actions=find("yinsh", lambda s: s.next is Phase.MOVE and s.pool == 2),
            depths=5,
        ),
        dict(
            name="yinsh random game: the last marker can make a row",
            variant="yinsh",
            actions=find("yinsh", last_marker_makes_a_row, seek_rows=True),
            depths=5,
        ),
        dict(
            name="yinsh random game: in the middle of removing a row",
            variant="yinsh",
            actions=find(
                "yinsh", lambda s: s.next is Phase.REMOVE_RING and s.removed[s.turn] == 1, True
            ),
            depths=4,
        ),
        dict(
            name="blitz a row for each player (hand-made)",
            variant="blitz",
            setup=positions.BOTH,
            depths=4,
        ),
        dict(
            name="blitz random game: a move makes rows for both players",
            variant="blitz",
            actions=find("blitz", makes_rows_for_both, seek_rows=True),
            depths=4,
        ),
        dict(name="yangsh start", variant="yangsh", actions="", depths=3),
        dict(
            name="yangsh random game: rings all placed",
            variant="yangsh",
            actions=find("yangsh", lambda s: s.next is Phase.MOVE),
            depths=3,
        ),
        dict(
            name="yangsh random game: a move makes rows for both players",
            variant="yangsh",
            actions=find("yangsh", makes_rows_for_both, seek_rows=True),
            depths=4,
        ),
        dict(
            name="yangsh random game: two markers left in the pool",
            variant="yangsh",
            actions=find("yangsh", lambda s: s.next is Phase.MOVE and s.pool == 2),
            depths=5,
        ),
        dict(
            name="yangsh7 random game: the last two rings placed",
            variant="yangsh7",
            actions=find(
                "yangsh7",
                lambda s: s.next is Phase.PLACE and (s.rings[0] | s.rings[1]).bit_count() == 12,
            ),
            depths=3,
        ),
        dict(
            name="yangsh7 random game: White one row from winning",
            variant="yangsh7",
            actions=find(
                "yangsh7",
                lambda s: s.next is Phase.MOVE and s.removed[0] == 4 and s.turn == 0,
                seek_rows=True,
            ),
            depths=4,
        ),
    ]
    return rows


def start(row: dict) -> tuple[State, reference.Game]:
    """The position of a table row, on both implementations."""
    if "setup" in row:
        s = setup(0, **row["setup"], v=row["variant"])
        return s, reference.Game.from_json(s.to_json())
    s = State(row["variant"])
    g = reference.Game(row["variant"])
    for token in row["actions"].split():
        s.play(token)
        g.play(token)
    assert s.key() and g.snapshot()
    return s, g


def main() -> int:
    table = []
    for row in spec():
        s, g = start(row)
        counts = []
        for depth in range(1, row["depths"] + 1):
            t = time.perf_counter()
            ours = perft(s, depth)
            theirs = reference.perft(g, depth)
            if ours != theirs:
                print(f"{row['name']}: depth {depth}: engine {ours}, reference {theirs}")
                return 1
            counts.append(ours)
            print(f"{row['name']}: depth {depth}: {ours} ({time.perf_counter() - t:.1f}s)")
        entry = {"name": row["name"], "variant": row["variant"]}
        if "setup" in row:
            entry["setup"] = {
                k: (v.split() if isinstance(v, str) else list(v)) for k, v in row["setup"].items()
            }
            entry["setup"]["turn"] = "white"
        else:
            entry["actions"] = row["actions"]
        entry["position"] = s.describe()
        entry["counts"] = counts
        table.append(entry)
    kinds = [k.name.lower().replace("_", " ") for k in Kind]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            {
                "about": (
                    "perft counts: counts[d-1] is the number of action sequences of d actions "
                    f"(any of {', '.join(kinds)}) from the position. Made by "
                    "tests/engine/perft_tables.py; every count was computed by the engine and "
                    "by tests/engine/reference.py, and they agreed."
                ),
                "positions": table,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
