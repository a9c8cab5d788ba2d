"""Move-count (perft) tables: tests/data/perft.json, made by tests/engine/perft_tables.py."""

import json

import pytest

from engine import State, perft
from tests.engine import reference
from tests.engine.helpers import DATA

TABLE = json.loads((DATA / "perft.json").read_text())["positions"]


def position(entry: dict) -> State:
    if "setup" in entry:
        su = entry["setup"]
        return State.from_setup(
            entry["variant"],
            0 if su["turn"] == "white" else 1,
            su["wr"],
            su["br"],
            su.get("wm", []),
            su.get("bm", []),
            removed=tuple(su["removed"]) if "removed" in su else None,
        )
    s = State(entry["variant"])
    for token in entry["actions"].split():
        s.play(token)
    return s


def test_the_table_holds_the_published_counts():
    by_name = {e["name"]: e["counts"] for e in TABLE}
    assert by_name["yinsh start"] == [85, 7140, 592620]
    assert by_name["yinsh after a fixed opening"] == [86, 6258, 486978]
    variants = {e["variant"] for e in TABLE}
    assert variants == {"yinsh", "blitz", "yangsh", "yangsh7"}


@pytest.mark.parametrize("entry", TABLE, ids=[e["name"] for e in TABLE])
def test_engine_move_counts_match_the_table(entry):
    s = position(entry)
    assert s.describe() == entry["position"]
    key = s.key()
    for depth, count in enumerate(entry["counts"], 1):
        assert perft(s, depth) == count, f"depth {depth}"
    assert s.key() == key  # perft leaves the position as it found it


@pytest.mark.parametrize("entry", TABLE, ids=[e["name"] for e in TABLE])
def test_reference_move_counts_match_the_table_at_shallow_depths(entry):
    s = position(entry)
    g = reference.Game.from_json(s.to_json())
    for depth, count in enumerate(entry["counts"][:2], 1):
        assert reference.perft(g, depth) == count, f"depth {depth}"
