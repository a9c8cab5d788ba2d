"""The local commands: match, tournament (interrupted with Ctrl-C, then resumed) and checkbot."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

import engine
from arena.referee.tournament import Tournament

from .games import BOTS, ROOT, TEST_BOTS, interrupted


@pytest.fixture(autouse=True)
def sandbox_dir(settings):
    """Commands keep their sandbox state in a test folder of their own, reachable by the slot
    uids (pytest's own folders are not: any pytest starting on the host makes them 0700)."""
    directory = Path(tempfile.mkdtemp(prefix="yinsh-commands-"))
    directory.chmod(0o711)
    settings.SANDBOX_STATE_DIR = directory
    settings.BOT_BUILD_DIR = directory / "builds"
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def run(*args: str) -> str:
    from io import StringIO

    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_match_plays_alternating_colours_and_writes_replayable_games(tmp_path):
    out = run(
        "match",
        str(BOTS / "random"),
        str(BOTS / "greedy"),
        "--games",
        "2",
        "--time",
        "20+0.1",
        "--seed",
        "3",
        "--out",
        str(tmp_path),
    )
    assert "Sandbox: protection level" in out
    assert "[1/2] random - greedy:" in out and "[2/2] greedy - random:" in out
    assert "Score of random vs greedy:" in out and "Elo difference:" in out
    for n, (white, black) in ((1, ("random", "greedy")), (2, ("greedy", "random"))):
        record = engine.Record.parse((tmp_path / f"game-{n}.txt").read_text())
        transcript = json.loads((tmp_path / f"game-{n}.json").read_text())
        assert record.headers["White"].startswith(white)
        assert record.headers["Black"].startswith(black)
        assert record.outcome.result.value == transcript["result"]
        assert transcript["players"]["white"]["name"] == white
        assert transcript["seed"] == 3


def test_match_plays_pairs_from_one_opening_with_colours_reversed(tmp_path):
    run(
        "match",
        str(BOTS / "random"),
        str(BOTS / "greedy"),
        "--games",
        "4",
        "--time",
        "20+0.1",
        "--out",
        str(tmp_path),
    )
    records = [engine.Record.parse((tmp_path / f"game-{n}.txt").read_text()) for n in (1, 2, 3, 4)]
    openings = [r.headers["Opening"] for r in records]
    assert openings[0] == openings[1] != openings[2] == openings[3]
    assert len(openings[0].split()) == 4
    for r in records:
        assert " ".join(str(a) for a in r.actions[:4]) == r.headers["Opening"]
    assert records[0].headers["White"] == records[1].headers["Black"]


def test_match_sprt_stops_when_h1_is_accepted(tmp_path):
    out = run(
        "match",
        str(BOTS / "greedy"),
        str(BOTS / "random"),
        "--sprt",
        "0,200",
        "--games",
        "400",
        "--concurrency",
        "2",
        "--time",
        "20+0.1",
        "--out",
        str(tmp_path),
    )
    assert "SPRT: H0 elo 0, H1 elo 200, alpha 0.05, beta 0.05; LLR bounds (-2.94, 2.94)" in out
    verdict = out.splitlines()[-1]
    assert verdict.startswith("H1 accepted: LLR ") and "(-2.94, 2.94) [0, 200]" in verdict
    assert float(verdict.split()[3]) >= 2.94
    assert len(list(tmp_path.glob("game-*.txt"))) < 400  # stopped early


def test_match_sprt_accepts_h0_for_a_weaker_bot(tmp_path):
    out = run(
        "match",
        str(BOTS / "random"),
        str(BOTS / "greedy"),
        "--sprt",
        "0,100",
        "--games",
        "400",
        "--time",
        "20+0.1",
        "--out",
        str(tmp_path),
    )
    assert out.splitlines()[-1].startswith("H0 accepted: LLR -")
    assert "Elo -inf" in out or "Elo -" in out


def test_match_sprt_says_when_the_budget_ran_out(tmp_path):
    out = run(
        "match",
        str(BOTS / "greedy"),
        str(BOTS / "random"),
        "--sprt",
        "0,5",
        "--games",
        "3",
        "--time",
        "20+0.1",
        "--out",
        str(tmp_path),
    )
    assert "at most 4 games" in out  # rounded up to whole pairs
    assert out.splitlines()[-1].startswith("No verdict: LLR ")
    assert "after 2 pairs of a budget of 2" in out


def test_match_without_sandbox_says_so(tmp_path):
    out = run(
        "match",
        str(BOTS / "random"),
        str(BOTS / "random"),
        "--games",
        "1",
        "--no-sandbox",
        "--out",
        str(tmp_path),
    )
    assert "Sandbox: none (--no-sandbox)" in out
    assert (tmp_path / "game-1.txt").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/no/such/bot", str(BOTS / "random")], "no such bot folder or file"),
        ([str(TEST_BOTS), str(BOTS / "random")], "no bot.toml"),
        ([str(BOTS / "random"), str(BOTS / "random"), "--time", "fast"], "bad time control"),
        ([str(BOTS / "random"), str(BOTS / "random"), "--variant", "chess"], "unknown variant"),
        ([str(BOTS / "random"), str(BOTS / "random"), "--games", "0"], "--games"),
        ([str(BOTS / "random"), str(BOTS / "random"), "--sprt", "0,x"], "takes ELO0,ELO1"),
        ([str(BOTS / "random"), str(BOTS / "random"), "--sprt", "5,0"], "elo0 must be below"),
        ([str(BOTS / "random"), str(BOTS / "random"), "--sprt", "0,5", "--alpha", "0.7"], "alpha"),
        ([str(BOTS / "random"), str(BOTS / "random"), "--sprt", "0,5", "--games", "1"], "2"),
        ([str(BOTS / "random"), str(BOTS / "random"), "--opening-plies", "11"], "0 to 10"),
    ],
)
def test_match_refuses_bad_arguments_clearly(args, message):
    with pytest.raises(CommandError, match=message):
        run("match", *args)


def test_tournament_prints_a_cross_table_and_ratings(tmp_path):
    bots = [str(BOTS / b) for b in ("random", "greedy", "search")]
    out = run(
        "tournament",
        *bots,
        "--rounds",
        "1",
        "--concurrency",
        "2",
        "--time",
        "5+0.05",
        "--out",
        str(tmp_path),
    )
    assert out.count("/6 done") == 6
    assert "player  random  greedy  search  score" in out
    assert "rank  player" in out and "elo" in out
    state = json.loads((tmp_path / "tournament.json").read_text())
    assert len(state["games"]) == 6
    colours = {(g["white"], g["black"]) for g in state["games"]}
    assert len(colours) == 6  # every pair with each colour once
    for g in state["games"]:
        engine.Record.parse((tmp_path / g["record"]).read_text())


def test_tournament_refuses_to_overwrite_and_to_resume_nothing(tmp_path):
    with pytest.raises(CommandError, match="nothing to resume"):
        run("tournament", "--resume", "--out", str(tmp_path))
    with pytest.raises(CommandError, match="at least two bots"):
        run("tournament", str(BOTS / "random"), "--out", str(tmp_path))


def test_an_interrupted_tournament_keeps_its_games_and_resumes(tmp_path, sandbox_dir):
    out = tmp_path / "t"
    bots = [str(BOTS / b) for b in ("greedy", "search", "random")]
    env = dict(os.environ, ARENA_SANDBOX_DIR=str(sandbox_dir), PYTHONUNBUFFERED="1")
    args = [
        sys.executable,
        "manage.py",
        "tournament",
        *bots,
        "--rounds",
        "2",
        "--concurrency",
        "2",
        "--time",
        "4+0.05",
        "--out",
        str(out),
    ]
    status, first = interrupted(args, env)
    assert status == 130, first
    assert "interrupted:" in first and "--resume" in first
    state = json.loads((out / "tournament.json").read_text())
    kept = {g["number"] for g in state["games"]}
    assert 1 <= len(kept) < 12
    stamps = {
        n: (out / g["record"]).stat().st_mtime_ns
        for n, g in ((g["number"], g) for g in state["games"])
    }

    second = subprocess.run(
        [*args, "--resume"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"Resuming: {len(kept)} games already played" in second.stdout
    state = json.loads((out / "tournament.json").read_text())
    assert sorted(g["number"] for g in state["games"]) == list(range(1, 13))
    for n in kept:  # finished games were not played again
        assert f"[{n:>2}] " not in second.stdout
        record = next(g["record"] for g in state["games"] if g["number"] == n)
        assert (out / record).stat().st_mtime_ns == stamps[n]
    assert "player" in second.stdout and "rank" in second.stdout


def test_resuming_with_other_settings_is_refused(tmp_path):
    bots = [str(BOTS / "random"), str(BOTS / "greedy")]
    run("tournament", *bots, "--time", "5+0", "--no-sandbox", "--out", str(tmp_path))
    with pytest.raises(CommandError, match="other settings"):
        run(
            "tournament", *bots, "--time", "9+0", "--resume", "--no-sandbox", "--out", str(tmp_path)
        )


def test_checkbot_passes_a_good_bot():
    out = run("checkbot", str(BOTS / "random"), "--time", "30+0.5")
    assert "ok    start-up: ready in" in out
    assert "ok    conformance: passed" in out
    assert "FAIL" not in out


def test_checkbot_fails_a_bad_bot_with_a_readable_report():
    from io import StringIO

    out = StringIO()
    with pytest.raises(CommandError, match="does not conform"):
        call_command("checkbot", str(TEST_BOTS / "protocol" / "exits_midgame"), stdout=out)
    text = out.getvalue()
    assert "FAIL  game 1 (yinsh, exits_midgame as white" in text
    assert "exit code 3" in text
    assert "giving up after three actions" in text
    assert "FAIL  conformance: failed" in text


def test_checkbot_checks_every_variant_the_bot_declares_and_only_those():
    out = run("checkbot", str(TEST_BOTS / "honest" / "yinsh_and_blitz"), "--time", "30+0.5")
    assert "Variants: yinsh, blitz" in out
    assert "ok    game 1 (yinsh, yinsh_and_blitz as white" in out
    assert "ok    game 2 (blitz, yinsh_and_blitz as black" in out
    assert "yangsh" not in out and "ok    conformance: passed" in out


def test_checkbot_fails_a_bot_in_a_variant_it_declares_but_cannot_play(tmp_path):
    from io import StringIO

    bot = tmp_path / "boasting"
    shutil.copytree(TEST_BOTS / "honest" / "yinsh_and_blitz", bot)
    manifest = bot / "bot.toml"
    manifest.write_text(manifest.read_text().replace('variants = ["yinsh", "blitz"]\n', ""))
    out = StringIO()
    with pytest.raises(CommandError, match="does not conform"):
        call_command("checkbot", str(bot), "--time", "30+0.5", stdout=out)
    text = out.getvalue()
    assert "Variants: yinsh, blitz, yangsh, yangsh7" in text
    assert "FAIL  game 3 (yangsh, yinsh_and_blitz as white, 0 actions)" in text
    assert "yangsh is not implemented" in text


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("checkbot", ["--variant", "yangsh"]),
        ("match", [str(BOTS / "random"), "--variant", "yangsh"]),
        ("tournament", [str(BOTS / "random"), "--variant", "yangsh", "--out", "{out}"]),
    ],
)
def test_a_variant_a_bot_does_not_declare_is_refused_before_playing(tmp_path, command, args):
    out = tmp_path / "out"
    args = [a.replace("{out}", str(out)) for a in args]
    bot = str(TEST_BOTS / "honest" / "yinsh_and_blitz")
    message = (
        r"yinsh_and_blitz does not play yangsh: its bot.toml declares "
        r'variants = \["yinsh", "blitz"\]'
    )
    with pytest.raises(CommandError, match=message):
        run(command, bot, *args)
    assert not out.exists()


def test_checkbot_fails_a_bot_that_does_not_exit_after_end():
    from io import StringIO

    out = StringIO()
    with pytest.raises(CommandError):
        call_command(
            "checkbot", str(TEST_BOTS / "protocol" / "ignores_end"), "--games", "1", stdout=out
        )
    assert "did not exit within 1 s of end" in out.getvalue()


def test_a_single_executable_file_is_a_bot(tmp_path):
    bot = tmp_path / "first.py"
    bot.write_text(
        "#!/usr/bin/python3\n"
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m['type'] == 'hello': print(json.dumps({'type': 'ready', 'name': 'first'}))\n"
        "    elif m['type'] == 'request':\n"
        "        print(json.dumps({'type': 'action', 'action': m['actions'][0]}))\n"
        "    else: break\n"
        "    sys.stdout.flush()\n"
    )
    bot.chmod(0o755)
    tmp_path.chmod(0o755)
    out = run("checkbot", str(bot), "--games", "1")
    assert "ok    conformance: passed" in out
    assert Path(bot).exists()


def _opening(out: Path, game: dict) -> str:
    return engine.Record.parse((out / game["record"]).read_text()).headers.get("Opening", "")


def test_a_tournament_plays_each_pair_from_one_opening_and_a_resumed_run_keeps_it(tmp_path):
    bots = [str(BOTS / "random"), str(BOTS / "greedy")]
    args = ("--rounds", "2", "--time", "5+0", "--no-sandbox", "--opening-plies", "4")
    out = run("tournament", *bots, *args, "--out", str(tmp_path))
    assert "Openings: 4 ring placements" in out
    path = tmp_path / "tournament.json"
    state = json.loads(path.read_text())
    assert state["plies"] == 4
    games = sorted(state["games"], key=lambda g: g["number"])
    openings = [_opening(tmp_path, g) for g in games]
    assert all(len(o.split()) == 4 for o in openings)
    assert [state["openings"][str(g["number"])] for g in games] == openings
    # Games 1 and 2 are one pair, colours reversed, from one opening; 3 and 4 the next.
    assert (games[0]["white"], games[0]["black"]) == (games[1]["black"], games[1]["white"])
    assert openings[0] == openings[1] and openings[2] == openings[3]
    assert openings[0] != openings[2]

    # Take the last game back, with another opening in the state: --resume plays that one.
    other = [o for o in (openings[0], openings[2]) if o != openings[3]][0]
    state["games"] = [g for g in state["games"] if g["number"] != 4]
    state["openings"]["4"] = other
    path.write_text(json.dumps(state))
    assert Tournament.load(tmp_path, trusted=True).missing() == 1
    again = run("tournament", "--resume", "--no-sandbox", "--out", str(tmp_path))
    assert "Resuming: 3 games already played, 1 to go" in again
    assert Tournament.load(tmp_path, trusted=True).missing() == 0
    state = json.loads(path.read_text())
    (replayed,) = [g for g in state["games"] if g["number"] == 4]
    assert _opening(tmp_path, replayed) == other


def as_version_2(state: dict) -> dict:
    """A round robin's state as the command saved it before formats (version 2)."""
    assert state["format"] == "round-robin" and state["match_games"] == 2
    del state["format"], state["match_games"], state["max_tiebreaks"], state["schedule"]
    return dict(state, version=2)


def test_a_round_robin_saved_before_formats_resumes_as_it_was_numbered(tmp_path):
    bots = [str(BOTS / "random"), str(BOTS / "greedy")]
    args = ("--rounds", "2", "--time", "5+0", "--no-sandbox", "--out", str(tmp_path))
    run("tournament", *bots, *args)
    path = tmp_path / "tournament.json"
    first = json.loads(path.read_text())
    state = as_version_2(json.loads(path.read_text()))
    state["games"] = [g for g in state["games"] if g["number"] != 3]
    path.write_text(json.dumps(state))
    again = run("tournament", *bots, *args, "--resume")
    assert "Resuming: 3 games already played, 1 to go" in again
    (third,) = [g for g in first["games"] if g["number"] == 3]
    assert f"[3] {third['white']} - {third['black']}:" in again  # the same game 3 as before
    state = json.loads(path.read_text())
    assert state["version"] == 3 and state["schedule"] == first["schedule"]
    assert state["openings"] == first["openings"]


def test_a_tournament_with_no_opening_plies_starts_from_the_empty_board(tmp_path):
    bots = [str(BOTS / "random"), str(BOTS / "greedy")]
    out = run(
        "tournament",
        *bots,
        "--time",
        "5+0",
        "--no-sandbox",
        "--opening-plies",
        "0",
        "--out",
        str(tmp_path),
    )
    assert "Openings: none" in out
    state = json.loads((tmp_path / "tournament.json").read_text())
    assert all(_opening(tmp_path, g) == "" for g in state["games"])


def test_a_tournament_saved_before_openings_resumes_from_the_empty_board(tmp_path):
    bots = [str(BOTS / "random"), str(BOTS / "greedy")]
    run(
        "tournament",
        *bots,
        "--rounds",
        "2",
        "--time",
        "5+0",
        "--no-sandbox",
        "--opening-plies",
        "0",
        "--out",
        str(tmp_path),
    )
    path = tmp_path / "tournament.json"
    state = as_version_2(json.loads(path.read_text()))
    del state["plies"], state["openings"]
    state["games"] = [g for g in state["games"] if g["number"] != 4]
    path.write_text(json.dumps(state))
    run("tournament", "--resume", "--no-sandbox", "--out", str(tmp_path))
    state = json.loads(path.read_text())
    assert state["plies"] == 0 and set(state["openings"].values()) == {""}
    (replayed,) = [g for g in state["games"] if g["number"] == 4]
    assert _opening(tmp_path, replayed) == ""


def test_resuming_with_other_opening_plies_is_refused(tmp_path):
    bots = [str(BOTS / "random"), str(BOTS / "greedy")]
    common = ("--time", "5+0", "--no-sandbox", "--out", str(tmp_path))
    run("tournament", *bots, *common, "--opening-plies", "2")
    with pytest.raises(CommandError, match="opening plies"):
        run("tournament", *bots, *common, "--resume", "--opening-plies", "4")


def test_a_tournament_refuses_more_opening_plies_than_rings(tmp_path):
    bots = [str(BOTS / "random"), str(BOTS / "greedy")]
    with pytest.raises(CommandError, match="placements"):
        run("tournament", *bots, "--no-sandbox", "--opening-plies", "11", "--out", str(tmp_path))


def test_a_tournament_saved_with_the_old_numbering_is_refused_clearly(tmp_path):
    bots = [str(BOTS / "random"), str(BOTS / "greedy")]
    run("tournament", *bots, "--time", "5+0", "--no-sandbox", "--out", str(tmp_path))
    path = tmp_path / "tournament.json"
    state = json.loads(path.read_text())
    assert state["version"] == 3
    assert [(g["number"], g["white"], g["black"]) for g in state["games"]] == [
        (1, "random", "greedy"),
        (2, "greedy", "random"),
    ]
    path.write_text(json.dumps(dict(as_version_2(state), version=1)))
    with pytest.raises(CommandError, match="older version of the tournament command"):
        run("tournament", "--resume", "--no-sandbox", "--out", str(tmp_path))


def test_match_and_tournament_build_a_bot_once_then_play_it(tmp_path, sandbox_dir):
    from .test_build import c_bot, needs_cc

    needs_cc()
    bot = c_bot(tmp_path)
    out = run("match", str(bot.folder), str(BOTS / "random"), "--out", str(tmp_path / "m"))
    assert "Build of built: cc -O2 -o bot main.c" in out
    assert "Build of built: done in" in out
    assert "[1/2] built - random:" in out and "broke" not in out
    assert not (bot.folder / "bot").exists()  # built in the sandbox, into the build cache
    assert (sandbox_dir / "builds" / bot.digest / "bot" / "bot").is_file()
    out = run("tournament", str(bot.folder), str(BOTS / "random"), "--out", str(tmp_path / "t"))
    assert "Build of built: done (from the cache" in out
    saved = json.loads((tmp_path / "t" / "tournament.json").read_text())
    assert saved["players"][0]["path"] == str(bot.folder)  # resumes from the source


def test_a_failed_build_stops_the_command_with_its_output(tmp_path):
    from .test_build import make_bot

    bot = make_bot(tmp_path / "b", "echo 'main.c:1: error: nope' >&2; exit 2")
    with pytest.raises(CommandError) as failed:
        run("checkbot", str(bot.folder))
    message = str(failed.value)
    assert "the build of built failed: the build command failed (exit code 2)" in message
    assert "main.c:1: error: nope" in message
