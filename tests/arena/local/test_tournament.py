"""``manage.py tournament --format ...``: each format played for real between small bots, its
table printed, its records enough to rebuild the table, and an interrupted knockout resumed."""

import json
import os
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

import engine
from arena import stats
from arena.local.management.commands import tournament as command
from arena.referee import RefereeError
from arena.referee.tournament import Tournament
from tests.referee.games import BOTS, ROOT, interrupted

pytestmark = pytest.mark.usefixtures("command_sandbox_dir")

FAST = ("--time", "2+0.05", "--no-sandbox", "--opening-plies", "2")


def run(*args: str) -> str:
    out = StringIO()
    call_command("tournament", *args, stdout=out)
    return out.getvalue()


def random_bot(folder: Path, name: str) -> str:
    """A copy of the random bot named ``name`` (a player of its own, with a label of its own)."""
    shutil.copytree(BOTS / "random", folder / name)
    toml = folder / name / "bot.toml"
    toml.write_text(toml.read_text().replace('name = "random"', f'name = "{name}"'))
    return str(folder / name)


def bots(tmp_path: Path, count: int) -> list[str]:
    """``random``, ``greedy``, then copies of the random bot: ``count`` of them."""
    given = [str(BOTS / "random"), str(BOTS / "greedy")]
    given += [random_bot(tmp_path / "bots", f"r{i}") for i in range(3, count + 1)]
    return given[:count]


def records(out: Path) -> list[engine.Record]:
    """The games' records, in the order of their numbers (their files' names)."""
    return [engine.Record.parse(p.read_text()) for p in sorted(out.glob("*.txt"))]


def labels(out: Path) -> list[str]:
    """The players' labels (as records name them), in seed order."""
    saved = Tournament.load(out, trusted=True)
    return [p.label for p in saved.players]


def test_a_double_round_robin_and_a_round_robin_name_each_games_round(tmp_path):
    three = bots(tmp_path, 3)
    out = run(
        *three,
        "--format",
        "double-round-robin",
        "--games",
        "1",
        *FAST,
        "--out",
        str(tmp_path / "d"),
    )
    assert "double-round-robin, 1 round(s), every pair 2 times, 6 games" in out
    assert out.count("/6 done") == 6
    assert "player  random  greedy  r3      score" in out and "rank  player" in out
    saved = Tournament.load(tmp_path / "d", trusted=True)
    assert Counter(frozenset((g.white, g.black)) for g in saved.schedule) == dict.fromkeys(
        [frozenset(p) for p in ((0, 1), (0, 2), (1, 2))], 2
    )
    for r in (tmp_path / "d").glob("*.txt"):
        number = int(r.name.split("-")[0])
        record = engine.Record.parse(r.read_text())
        assert record.headers["Round"] == str(saved.event.game(number).round)
        assert record.headers["Event"] == "double-round-robin"
    run(*three[:2], "--games", "1", *FAST, "--out", str(tmp_path / "r"))
    assert sorted(r.headers["Round"] for r in records(tmp_path / "r")) == ["1"]


def rebuild_swiss(out: Path) -> dict[str, tuple[float, float, float, float, int]]:
    """Points, Buchholz, Sonneborn-Berger, head-to-head and byes of each player, from the
    records alone: a player missing from a round had its bye, worth that round's mini-match."""
    games = [
        (r.headers["Round"], r.headers["White"], r.headers["Black"], r.outcome.result.value)
        for r in records(out)
    ]
    players = sorted({p for _, w, b, _ in games for p in (w, b)})
    points: Counter[str] = Counter()
    byes: Counter[str] = Counter()
    against: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    by_round = defaultdict(list)
    for rnd, white, black, result in games:
        by_round[rnd].append((white, black))
        for me, other, side in ((white, black, "white"), (black, white, "black")):
            points[me] += stats.points(result, side)
            against[me][other][0] += stats.points(result, side)
            against[me][other][1] += 1
    for played in by_round.values():
        seated = {p for pair in played for p in pair}
        mini_match = len(played) // (len(seated) // 2)
        for p in set(players) - seated:
            byes[p] += 1
            points[p] += mini_match
    buchholz = {p: sum(points[o] for o in against[p]) for p in players}
    sb = {p: sum(x / n * points[o] for o, (x, n) in against[p].items()) for p in players}

    def key(p: str) -> tuple[float, float, float]:
        return (points[p], buchholz[p], round(sb[p], 9))

    h2h = {p: sum(x for o, (x, _) in against[p].items() if key(o) == key(p)) for p in players}
    return {p: (points[p], buchholz[p], sb[p], h2h[p], byes[p]) for p in players}


def test_a_swiss_pairs_round_after_round_and_its_records_rebuild_its_table(tmp_path):
    out = run(
        *bots(tmp_path, 5),
        "--format",
        "swiss",
        "--rounds",
        "3",
        "--games",
        "1",
        "--concurrency",
        "2",
        *FAST,
        "--out",
        str(tmp_path / "s"),
    )
    assert "Swiss of 3 rounds, mini-matches of 1 game" in out
    for n in (1, 2, 3):
        assert f"Round {n}: " in out and "; bye: " in out.split(f"Round {n}: ")[1].split("\n")[0]
    assert out.index("Round 2: ") > out.index("-- 2/2 done")  # round 2 waited for round 1
    assert "Buchholz" in out and "SB" in out and "H2H" in out
    saved = Tournament.load(tmp_path / "s", trusted=True)
    assert saved.event.finished and len(saved.games) == 6
    names = labels(tmp_path / "s")
    table = {
        names[s.player]: (s.points, s.buchholz, s.sonneborn_berger, s.head_to_head, s.byes)
        for s in saved.event.standings()
    }
    rebuilt = rebuild_swiss(tmp_path / "s")
    assert rebuilt.keys() == table.keys()
    for p in table:
        assert rebuilt[p] == pytest.approx(table[p]), p
    assert sorted(rebuilt[p][4] for p in rebuilt) == [0, 0, 1, 1, 1]
    state = json.loads((tmp_path / "s" / "tournament.json").read_text())
    assert state["format"] == "swiss" and [len(r["byes"]) for r in state["schedule"]] == [1, 1, 1]


def test_a_gauntlet_prints_the_seeds_score_against_each(tmp_path):
    three = bots(tmp_path, 3)
    out = run(three[1], three[0], three[2], "--format", "gauntlet", *FAST, "--out", str(tmp_path))
    assert "gauntlet of greedy against each, mini-matches of 2 games" in out
    assert "greedy against each:" in out
    lines = out.split("greedy against each:")[1].splitlines()
    assert lines[2].split()[:2][0] == "random" and lines[2].split()[1].endswith("/2")
    assert lines[3].split()[0] == "r3" and lines[3].split()[1].endswith("/2")
    assert lines[4].split()[:2][0] == "in" and lines[4].split()[2].endswith("/4")
    played = [
        (r.headers["Round"], r.headers["White"], r.headers["Black"]) for r in records(tmp_path)
    ]
    greedy = labels(tmp_path)[0]
    assert all(greedy in (w, b) for _, w, b in played)
    assert Counter(rnd for rnd, _, _ in played) == {"1": 2, "2": 2}


def rebuild_bracket(out: Path) -> list[list[tuple[str, str, str]]]:
    """Each round's ties (higher seed, lower seed, winner), from the records alone: the higher
    seed has White in a tie's first game; a level tie goes to its tie-break games (``N.k``),
    two by two, and the decider to the higher seed."""
    ties: dict[int, dict[frozenset[str], list[tuple[int, str, str, str]]]] = defaultdict(dict)
    for r in records(out):
        rnd, _, k = r.headers["Round"].partition(".")
        pair = frozenset((r.headers["White"], r.headers["Black"]))
        ties[int(rnd)].setdefault(pair, []).append(
            (int(k or 0), r.headers["White"], r.headers["Black"], r.outcome.result.value)
        )
    bracket = []
    for rnd in sorted(ties):
        out_round = []
        for games in ties[rnd].values():
            high = games[0][1]
            low = games[0][2]
            stages: dict[int, list[float]] = defaultdict(lambda: [0.0, 0.0])
            for k, white, _, result in games:
                stage = (k + 1) // 2
                mine = stats.points(result, "white" if white == high else "black")
                stages[stage][0] += mine
                stages[stage][1] += 1 - mine
            winner = high  # the decider, unless a stage was not level
            for stage in sorted(stages):
                h, low_points = stages[stage]
                if h != low_points:
                    winner = high if h > low_points else low
                    break
            out_round.append((high, low, winner))
        bracket.append(out_round)
    return bracket


def test_an_interrupted_knockout_resumes_and_its_records_rebuild_its_bracket(
    tmp_path, command_sandbox_dir
):
    out = tmp_path / "k"
    five = bots(tmp_path, 5)
    env = dict(os.environ, ARENA_SANDBOX_DIR=str(command_sandbox_dir), PYTHONUNBUFFERED="1")
    args = [
        sys.executable,
        "manage.py",
        "tournament",
        *five,
        "--format",
        "knockout",
        "--concurrency",
        "2",
        "--tiebreaks",
        "1",
        *FAST,
        "--out",
        str(out),
    ]
    status, first = interrupted(args, env)
    assert status == 130, first
    assert "knockout of 3 rounds, mini-matches of 2 games, up to 1 tie-break pairs" in first
    assert "Round 1: r4 - r5; bye: random, greedy, r3" in first
    assert "interrupted:" in first and "--resume" in first
    kept = json.loads((out / "tournament.json").read_text())["games"]
    assert 1 <= len(kept) <= 2  # the other game of the round is aborted unless it just ended

    second = subprocess.run(
        [*args, "--resume"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"Resuming: {len(kept)} games already played" in second.stdout
    assert "Round 2: " in second.stdout and "Round 3: " in second.stdout
    saved = Tournament.load(out, trusted=True)
    assert saved.event.finished
    champion = saved.names[saved.event.champion]
    assert f"Champion: {champion}" in second.stdout
    assert "Round 1\n  random (1)  bye" in second.stdout and "Round 3, the final" in second.stdout
    # The bracket from the records alone: byes are the seeds missing from round 1.
    names = labels(out)
    expected = [
        [(names[t.high], names[t.low], names[t.winner]) for t in ties if t.low is not None]
        for ties in saved.event.bracket()
    ]
    assert [sorted(r) for r in rebuild_bracket(out)] == [sorted(r) for r in expected]
    assert all(r.headers["Round"].partition(".")[0] in {"1", "2", "3"} for r in records(out))


def test_a_swiss_stalled_by_a_game_not_played_says_so_and_resumes(tmp_path, monkeypatch):
    three = bots(tmp_path, 3)
    args = (*three, "--format", "swiss", "--rounds", "2", *FAST, "--out", str(tmp_path))
    real = command.run_games

    def one_fails(referee, jobs, out, **kwargs):
        # The machine fails the first game of the round: it is reported, not played.
        kwargs["report"](jobs[0], None, RefereeError("the machine failed"))
        return real(referee, jobs[1:], out, **kwargs)

    monkeypatch.setattr(command, "run_games", one_fails)
    with pytest.raises(
        CommandError,
        match=(
            "incomplete: 1 of 2 games were not played; round 2 waits for them; play them with "
            "--resume"
        ),
    ):
        run(*args)
    monkeypatch.setattr(command, "run_games", real)
    out = run(*args, "--resume")
    assert "Resuming: 1 games already played, 1 to go in round 1" in out
    assert "Round 2: " in out
    saved = Tournament.load(tmp_path, trusted=True)
    assert saved.event.finished and len(saved.games) == 4


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "knockout", "--games", "3"], "even number of games"),
        (["--format", "swiss", "--rounds", "4"], "at most 3 rounds"),
        (["--format", "gauntlet", "--rounds", "2"], "--rounds is for round robins and a Swiss"),
        (["--format", "ladder"], "invalid choice: 'ladder'"),
    ],
)
def test_a_format_that_cannot_be_played_is_refused_before_any_game(tmp_path, args, message):
    with pytest.raises(CommandError, match=message):
        run(*bots(tmp_path, 3), *args, *FAST, "--out", str(tmp_path / "t"))
    assert not (tmp_path / "t" / "tournament.json").exists()
