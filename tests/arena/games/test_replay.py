"""The replay widget's data (arena.games.replay): frames, positions, notation, board geometry."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

import engine
from arena.games.replay import board_layout, replay_frames
from engine import Forfeit, Kind, Outcome, Record, Result, State, Termination

ROOT = Path(__file__).resolve().parents[3]
REAL_GAMES = ROOT / "tests" / "data" / "real-games"
STATIC = ROOT / "arena" / "static" / "arena"
BGA_GAME = REAL_GAMES / "bga_862307561.long.txt"


def random_record(variant: str, seed: int) -> Record:
    """A finished random game."""
    rng = random.Random(seed)
    s = State(variant)
    while not s.is_over():
        s.push(rng.choice(s.legal_actions()))
    return Record.from_state(s, White="alpha", Black="beta")


def real_records() -> list[Record]:
    """The six real games kept in tests/data/real-games."""
    return [Record.parse(p.read_text()) for p in sorted(REAL_GAMES.glob("*.long.txt"))]


def bga_record() -> Record:
    """A real game (Board Game Arena 862307561): 70 turns, five rows, Black wins 3 to 2."""
    return Record.parse(BGA_GAME.read_text())


def record_with_opponent_row_first() -> Record:
    """A random YINSH game with a turn that starts by removing a row the opponent made."""
    for seed in range(200):
        r = random_record("yinsh", seed)
        if any(t.split(".", 1)[1].startswith("x") for t in engine.write_moves(r.actions).split()):
            return r
    raise AssertionError("no such game in 200 random games")


# --------------------------------------------------------------------------- frames


def test_one_frame_per_action_with_the_engines_position_after_it():
    games = [
        random_record(v, seed) for v in ("yinsh", "blitz", "yangsh", "yangsh7") for seed in (1, 2)
    ]
    for record in [*games, *real_records()]:
        data = replay_frames(record)
        assert len(data["frames"]) == len(record.actions)
        s = State(record.variant)
        assert data["initial"] == s.to_json()
        for k, (frame, action) in enumerate(zip(data["frames"], record.actions, strict=True), 1):
            by = s.turn.label
            s.push(action)
            assert frame["n"] == k
            assert frame["action"] == str(action)
            assert frame["by"] == by
            assert frame["position"] == s.to_json()


@pytest.mark.parametrize("after", [0, 1, 10, 40])
def test_the_frames_after_a_ply_are_the_tail_of_the_whole_games(after: int) -> None:
    record = random_record("yinsh", 3)
    whole = replay_frames(record)
    tail = replay_frames(record, after=after)
    assert tail["frames"] == whole["frames"][after:]
    assert tail["turns"] == whole["turns"]
    assert {k: v for k, v in tail.items() if k != "frames"} == {
        k: v for k, v in whole.items() if k != "frames"
    }


def test_frames_after_a_ply_cannot_take_a_transcript() -> None:
    with pytest.raises(ValueError, match="transcript"):
        replay_frames(random_record("yinsh", 3), {"moves": []}, after=2)


def test_the_game_header_fields_come_from_the_record():
    record = random_record("yangsh", 3)
    data = replay_frames(record)
    assert (data["variant"], data["title"], data["white"], data["black"]) == (
        "yangsh",
        "Yangsh",
        "alpha",
        "beta",
    )
    assert data["result"] == record.outcome.result.value
    assert data["termination"] == record.outcome.termination.value
    assert data["score"] == record.outcome.result.score
    assert data["rows_to_win"] == 3


def test_an_unfinished_game_has_no_result():
    data = replay_frames(Record.parse("1.e3 2.a5 3.b5"))
    assert (data["result"], data["termination"], data["score"]) == (None, None, "*")
    assert (data["white"], data["black"]) == ("", "")


def test_a_resigned_game_ends_on_the_last_action_with_the_recorded_result():
    moves = "1.g2 2.c6 3.f2 4.d4 5.e1 6.e4 7.h3 8.a4 9.d1 10.f6 11.e1-e2 12.resign"
    data = replay_frames(Record.parse(moves))
    assert len(data["frames"]) == 11
    assert (data["result"], data["termination"]) == ("white", "resignation")
    assert data["frames"][-1]["position"]["next"] == "move"


def test_a_forfeit_between_a_row_and_its_ring_keeps_the_row_frame():
    record = random_record("yinsh", 4)
    cut = next(k for k, a in enumerate(record.actions) if a.kind == Kind.REMOVE_ROW)
    short = Record(
        record.variant, record.actions[: cut + 1], Outcome(Result.BLACK, Forfeit("time"))
    )
    data = replay_frames(short)
    assert data["frames"][-1]["kind"] == "remove-row"
    assert data["frames"][-1]["turn"].endswith(str(record.actions[cut]))
    assert data["termination"] == "time"


def test_each_frame_carries_the_notation_of_its_turn():
    record = bga_record()
    data = replay_frames(record)
    turns = engine.write_moves(record.actions, record.variant).split()
    assert [t["label"] for t in data["turns"]] == turns
    turn31 = [(f["action"], f["turn"]) for f in data["frames"] if f["turn_index"] == 30]
    label = "31.c5-a3;xb3-b7xb2"
    assert turn31 == [("c5-a3", label), ("xb3-b7", label), ("xb2", label)]
    for frame in data["frames"]:
        turn = data["turns"][frame["turn_index"]]
        assert turn["first"] <= frame["n"] <= turn["last"]
        assert frame["turn"] == turn["label"]
        assert frame["by"] == turn["by"]


def test_a_row_removed_before_the_move_belongs_to_the_movers_turn():
    data = replay_frames(record_with_opponent_row_first())
    turn = next(t for t in data["turns"] if t["label"].split(".", 1)[1].startswith("x"))
    frames = data["frames"][turn["first"] - 1 : turn["last"]]
    assert [f["kind"] for f in frames[:3]] == ["remove-row", "remove-ring", "move"]
    assert {f["turn"] for f in frames} == {turn["label"]}
    assert {f["by"] for f in frames} == {turn["by"]}
    row, ring, move = frames[:3]
    assert turn["label"].startswith(f"{turn['label'].split('.')[0]}.{row['action']}x")
    assert f"{row['action']}{ring['action']};{move['action']}" in turn["label"]


def test_a_move_records_the_ring_path_and_the_flipped_markers():
    record = bga_record()
    data = replay_frames(record)
    flips = 0
    for before, frame in zip(
        [data["initial"]] + [f["position"] for f in data["frames"]], data["frames"], strict=False
    ):
        after = frame["position"]
        if frame["kind"] != "move":
            assert frame["moved"] is None and frame["flipped"] == []
            continue
        a, b = frame["action"].split("-")
        assert frame["moved"] == [a, b]
        changed = (set(before["markers"]["white"]) & set(after["markers"]["black"])) | (
            set(before["markers"]["black"]) & set(after["markers"]["white"])
        )
        assert sorted(frame["flipped"]) == sorted(changed)
        assert frame["removed"] == []
        flips += len(changed)
    assert flips > 0


def test_a_removal_names_the_pieces_taken_off():
    data = replay_frames(bga_record())
    rows = [f for f in data["frames"] if f["kind"] == "remove-row"]
    rings = [f for f in data["frames"] if f["kind"] == "remove-ring"]
    assert len(rows) == len(rings) == 5
    g = engine.geometry(engine.HEX)
    for f in rows:
        a, b = f["action"][1:].split("-")
        assert len(f["removed"]) == 5
        assert a in f["removed"] and b in f["removed"]
        assert not set(f["removed"]) & set(f["position"]["markers"][f["by"]])
        assert g.bits_of(f["removed"]) in set(g.rows.values())  # five in a row on a line
    for f in rings:
        assert f["removed"] == [f["action"][1:]]
        assert f["action"][1:] not in f["position"]["rings"][f["by"]]


def test_the_data_is_plain_json():
    data = replay_frames(random_record("yinsh", 5))
    assert json.loads(json.dumps(data)) == data


# --------------------------------------------------------------------------- board geometry


def _vectors(board: engine.Board) -> dict[tuple[int, int], set[tuple[float, float]]]:
    """For each axis, the set of screen vectors from a point to its neighbour along it."""
    layout = board_layout(board)
    where = {p["name"]: (p["x"], p["y"]) for p in layout["points"]}
    out: dict[tuple[int, int], set[tuple[float, float]]] = {}
    for name, (x, y) in where.items():
        c, n = ord(name[0]) - ord("a"), int(name[1:])
        for dc, dn in board.axes:
            other = where.get(f"{chr(ord('a') + c + dc)}{n + dn}")
            if other:
                out.setdefault((dc, dn), set()).add(
                    (round(other[0] - x, 3), round(other[1] - y, 3))
                )
    return out


def test_hex_points_lie_on_a_triangular_lattice_with_straight_lines_at_60_degrees():
    vectors = _vectors(engine.HEX)
    assert set(vectors) == {(0, 1), (1, 0), (1, 1)}
    unit = {}
    for axis, found in vectors.items():
        assert len(found) == 1, f"axis {axis} bends: {found}"  # one step vector: straight lines
        (v,) = found
        assert math.hypot(*v) == pytest.approx(1, abs=1e-3)
        unit[axis] = v
    assert unit[(0, 1)] == (0, -1)  # a column is vertical, numbers grow upwards
    assert unit[(1, 0)][0] > 0  # letters grow to the right
    for a, b in [((0, 1), (1, 0)), ((0, 1), (1, 1)), ((1, 0), (1, 1))]:
        cos = unit[a][0] * unit[b][0] + unit[a][1] * unit[b][1]
        assert abs(cos) == pytest.approx(0.5, abs=1e-3)  # 60 (or 120) degrees apart


def test_hex_diagonal_e2_f3_g4_is_one_straight_line():
    where = {p["name"]: (p["x"], p["y"]) for p in board_layout(engine.HEX)["points"]}
    (x1, y1), (x2, y2), (x3, y3) = where["e2"], where["f3"], where["g4"]
    assert (x2 - x1) * (y3 - y1) - (y2 - y1) * (x3 - x1) == pytest.approx(0, abs=1e-3)


@pytest.mark.parametrize("board", [engine.HEX, engine.SQUARE8])
def test_every_line_segment_joins_neighbours_and_every_neighbour_pair_has_one(board):
    layout = board_layout(board)
    at = {(p["x"], p["y"]): p["name"] for p in layout["points"]}
    g = engine.geometry(board)
    expected = set()
    for i in g.points:
        for ray in g.rays[i]:
            if ray:
                expected.add(frozenset((g.name(i), g.name(ray[0]))))
    segments = [frozenset((at[(x1, y1)], at[(x2, y2)])) for x1, y1, x2, y2 in layout["lines"]]
    assert len(segments) == len(set(segments))
    assert set(segments) == expected


@pytest.mark.parametrize("board", [engine.HEX, engine.SQUARE8])
def test_the_board_fits_its_width_and_height_with_a_margin(board):
    layout = board_layout(board)
    assert len(layout["points"]) == board.size
    for p in layout["points"]:
        assert 1 - 1e-9 <= p["x"] <= layout["width"] - 1 + 1e-9
        assert 1 - 1e-9 <= p["y"] <= layout["height"] - 1 + 1e-9
    for label in layout["labels"]:
        assert 0 < label["x"] < layout["width"] and 0 < label["y"] < layout["height"]


def test_the_square_board_is_an_8x8_grid_with_a1_bottom_left():
    layout = board_layout(engine.SQUARE8)
    assert layout["kind"] == "square"
    where = {p["name"]: (p["x"], p["y"]) for p in layout["points"]}
    for c in "abcdefgh":
        for n in range(1, 9):
            assert where[f"{c}{n}"] == (ord(c) - ord("a") + 1, 9 - n)
    assert {v for vs in _vectors(engine.SQUARE8).values() for v in vs} == {
        (0, -1),
        (1, 0),
        (1, -1),
        (1, 1),
    }
    assert sorted(label["text"] for label in layout["labels"]) == sorted(
        [*"abcdefgh", *map(str, range(1, 9))]
    )


def test_yinsh_and_blitz_use_the_hex_board_and_yangsh_the_square_one():
    kinds = {v: replay_frames(Record(engine.variant(v)))["board"]["kind"] for v in engine.VARIANTS}
    assert kinds == {"yinsh": "hex", "blitz": "hex", "yangsh": "square", "yangsh7": "square"}


# --------------------------------------------------------------------------- transcripts


def test_think_times_and_info_are_copied_from_a_per_action_transcript():
    record = random_record("yinsh", 6)
    entries = [
        {"action": str(a), "think_ms": 10 * k, "info": f"depth {k}"}
        for k, a in enumerate(record.actions)
    ]
    data = replay_frames(record, {"actions": entries})
    for k, frame in enumerate(data["frames"]):
        assert frame["think_ms"] == 10 * k
        assert frame["info"] == f"depth {k}"


def test_each_frame_has_the_stderr_its_bot_wrote_on_that_action():
    record = random_record("yinsh", 6)
    entries = [
        {"action": str(a), "ms": 3, "stderr": f"line {k}\n"} | ({"stderr_bytes": 9000} if k else {})
        for k, a in enumerate(record.actions)
    ]
    entries[2].pop("stderr")
    data = replay_frames(record, {"moves": entries}, logs={"black", "white"})
    frames = data["frames"]
    assert frames[0]["stderr"] == "line 0\n" and "stderr_bytes" not in frames[0]
    assert frames[1]["stderr"] == "line 1\n" and frames[1]["stderr_bytes"] == 9000
    assert "stderr" not in frames[2]
    assert data["logs"] == ["white", "black"]  # in the board's order


def test_without_logs_the_data_says_so_and_a_huge_stderr_keeps_its_end():
    record = random_record("yinsh", 6)
    entry = {"action": str(record.actions[0]), "stderr": "x" * 10_000 + "END", "stderr_bytes": True}
    data = replay_frames(record, {"moves": [entry]})
    assert data["logs"] == []
    assert len(data["frames"][0]["stderr"]) == 4096 and data["frames"][0]["stderr"].endswith("END")
    assert "stderr_bytes" not in data["frames"][0]


def test_a_per_turn_transcript_puts_the_time_on_the_first_action_of_the_turn():
    record = record_with_opponent_row_first()
    turns = engine.write_moves(record.actions).split()
    entries = [
        {"move": t.split(".", 1)[1], "ms": 5, "info": {"eval": k}} for k, t in enumerate(turns)
    ]
    data = replay_frames(record, {"moves": entries})
    firsts = {t["first"] for t in data["turns"]}
    for frame in data["frames"]:
        if frame["n"] in firsts:
            assert frame["think_ms"] == 5
            assert frame["info"] == f"eval: {frame['turn_index']}"  # to read, not JSON
        else:
            assert "think_ms" not in frame and "info" not in frame


def test_a_transcript_in_the_short_form_still_matches():
    record = bga_record()
    short = engine.write_moves(record.actions, long=False).split()
    entries = [{"action": t.split(".", 1)[1], "think_ms": 1} for t in short]
    data = replay_frames(record, {"actions": entries})
    assert sum(1 for f in data["frames"] if "think_ms" in f) == len(short)


def test_entries_without_an_action_go_to_the_frames_in_order():
    record = random_record("blitz", 7)
    data = replay_frames(record, {"actions": [{"think_ms": 3}, {"think_ms": 4.4}]})
    assert [f.get("think_ms") for f in data["frames"][:3]] == [3, 4, None]


@pytest.mark.parametrize(
    "transcript",
    [
        None,
        {},
        [],
        "not a transcript",
        {"actions": "nope"},
        {"actions": [1, 2, 3]},
        {"actions": [{"action": "zz9", "think_ms": 5}]},
        {"actions": [{"action": "", "think_ms": 5}]},
        {"unknown": [{"action": "e3", "think_ms": 5}]},
    ],
)
def test_a_missing_or_unknown_transcript_adds_nothing(transcript):
    record = random_record("yinsh", 8)
    assert replay_frames(record, transcript) == replay_frames(record)


def test_merging_stops_where_the_transcript_leaves_the_game():
    record = random_record("yinsh", 9)
    tokens = [str(a) for a in record.actions]
    entries = [{"action": t, "think_ms": 1} for t in tokens[:4]]
    entries += [{"action": "a2-a5", "think_ms": 1}, {"action": tokens[5], "think_ms": 1}]
    data = replay_frames(record, {"actions": entries})
    assert [("think_ms" in f) for f in data["frames"][:6]] == [True] * 4 + [False] * 2


def test_a_final_entry_beyond_the_game_is_ignored():
    record = random_record("yangsh", 10)
    entries = [{"action": str(a), "think_ms": 2} for a in record.actions]
    entries.append({"action": "a1-h8", "think_ms": 99, "info": "illegal"})
    data = replay_frames(record, {"actions": entries})
    assert all(f["think_ms"] == 2 for f in data["frames"])


def test_bad_values_in_an_entry_are_dropped():
    record = random_record("yinsh", 11)
    first = str(record.actions[0])
    data = replay_frames(record, {"actions": [{"action": first, "think_ms": -5, "info": True}]})
    assert "think_ms" not in data["frames"][0] and "info" not in data["frames"][0]
    data = replay_frames(record, {"actions": [{"action": first, "info": "x" * 2000}]})
    assert len(data["frames"][0]["info"]) == 500


# --------------------------------------------------------------------------- the demo data


@pytest.mark.parametrize("name", ["replay-demo.json", "replay-demo-yangsh.json"])
def test_the_demo_data_is_what_the_code_makes_of_its_game(name):
    """The shipped demo files are regenerated by `python -m arena.games.replay` (docs/replay.md)."""
    data = json.loads((STATIC / name).read_text())
    v = engine.variant(data["variant"])
    s = State(v)
    for frame in data["frames"]:
        s.play(frame["action"])
    outcome = None
    if data["result"]:
        outcome = Outcome(Result(data["result"]), Termination(data["termination"]))
    record = Record(v, list(s.history), outcome, data["headers"])
    assert replay_frames(record) == data


def test_the_yinsh_demo_is_the_board_game_arena_game():
    data = json.loads((STATIC / "replay-demo.json").read_text())
    record = Record.parse(BGA_GAME.read_text())
    assert [f["action"] for f in data["frames"]] == [str(a) for a in record.actions]
    assert (data["result"], data["termination"]) == ("black", "rows")
    assert data["frames"][-1]["position"]["removed"] == {"white": 2, "black": 3}
