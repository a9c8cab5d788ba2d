"""``python -m engine``, driven as a real subprocess: shell, replay, selfplay, perft, bench."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from engine import Outcome, Record, Result, State, ending, replay, write_moves, write_records
from tests.engine.helpers import REAL_GAMES, ROOT
from tests.engine.positions import CASE_1

REAL = sorted(p for p in REAL_GAMES.glob("*.txt") if p.name != "README.md")


def engine(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def shell(*commands: str) -> list[str]:
    """Run the shell on some command lines; return its answers, one per line."""
    done = engine("shell", stdin="".join(c + "\n" for c in commands))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout.splitlines()


STATE = re.compile(
    r"^state next=(\S+) turn=([wb]) wr=(\S*) br=(\S*) wm=(\S*) bm=(\S*)( result=\w+)?$"
)


# ------------------------------------------------------------------------ shell


def test_shell_answers_one_line_per_command_and_quits():
    out = shell("new", "state", "quit", "state")
    assert out == ["ok", "state next=place turn=w wr= br= wm= bm="]


def test_shell_play_is_all_or_nothing():
    out = shell("play e3 a5", "play b5 zz c6", "state", "play b5 c6", "state")
    assert out[0] == "ok"
    assert out[1].startswith("error ") and "'zz'" in out[1]
    assert out[2] == "state next=place turn=w wr=e3 br=a5 wm= bm="
    assert out[3] == "ok"
    assert out[4] == "state next=place turn=w wr=b5,e3 br=a5,c6 wm= bm="


OPENING = "e3 a5 b5 c6 d6 e4 h7 g2 g3 g8"


def test_shell_lists_legal_moves_sorted():
    out = shell(f"play {OPENING}", "moves")
    head, _, tokens = out[1].partition(": ")
    assert head == "moves 86"
    tokens = tokens.split()
    assert tokens == sorted(tokens) and len(tokens) == 86
    s = State("yinsh")
    for token in OPENING.split():
        s.play(token)
    assert set(tokens) == {str(a) for a in s.legal_actions()}


def test_shell_state_line_format():
    out = shell(f"play {' '.join(str(a) for a in replay(CASE_1).history)}", "play i8-f5", "state")
    m = STATE.match(out[2])
    assert m, out[2]
    assert m.group(1) == "remove-row" and m.group(2) == "w"
    assert m.group(3) == "a5,f5,f7,g2,i11"


def test_shell_setpos_sets_a_ring_moving_position():
    out = shell(
        "setpos b wr=e5,k8,k9,k10,j11 br=a2,b1,d1,e1,f2 wm=e6 bm=",
        "state",
        "moves",
        "setpos w wr=e5 br=a2",
        "setpos w wr=e5,k8,k9,k10,j11 br=a2,b1,d1,e1,f2 xx=a3",
        "setpos",
        "state",
    )
    assert out[0] == "ok"
    assert out[1] == "state next=move turn=b wr=e5,j11,k8,k9,k10 br=a2,b1,d1,e1,f2 wm=e6 bm="
    assert out[2].startswith("moves ") and " a2-a3 " in out[2]
    assert out[3].startswith("error ") and "ring on the board" in out[3]
    assert out[4].startswith("error bad field 'xx=a3'")
    assert out[5].startswith("error usage: setpos")
    assert out[6] == out[1]  # errors leave the position alone


def test_shell_perft_undo_json_and_notation():
    out = shell(
        "perft 2",
        "play e3 a5",
        "undo",
        "perft 1",
        "json",
        "notation",
        "notation short",
        "notation medium",
        "undo",
        "undo",
        "perft x",
    )
    assert out[0] == "perft 2 7140"
    assert out[1] == "ok" and out[2] == "ok"
    assert out[3] == "perft 1 84"
    data = json.loads(out[4])
    assert data["rings"] == {"white": ["e3"], "black": []}
    assert State.from_json(data).next.value == "place"
    assert out[5] == out[6] == "notation 1.e3"
    assert out[7] == "error usage: notation [long|short]"
    assert out[8] == "ok"
    assert out[9] == "error nothing to undo"
    assert out[10] == "error usage: perft N"


def test_shell_notation_writes_both_forms():
    tokens = " ".join(str(a) for a in replay(CASE_1).history)
    out = shell(f"play {tokens} i8-f5 xc6-g6 xa5 xh7-h11 xg2", "notation", "notation short")
    assert out[1].endswith(" 23.i8-f5;xc6-g6xa5;xh7-h11xg2")
    assert out[2].endswith(" 23.i8-f5;xa5;xg2")


def test_shell_keeps_running_after_bad_input():
    out = shell(
        "fly away", "new chess", "new yangsh blitz", "play", "undo", "", "new yangsh", "moves"
    )
    assert out[0] == "error unknown command 'fly'"
    assert out[1].startswith("error unknown variant 'chess'")
    assert out[2] == "error usage: new [VARIANT]"
    assert out[3] == "error usage: play TOK [TOK ...]"
    assert out[4] == "error nothing to undo"
    assert out[5] == "ok"  # the blank line is skipped
    assert out[6].startswith("moves 60: ")


def test_shell_ends_at_end_of_input_without_quit():
    assert shell("new blitz", "state") == ["ok", "state next=place turn=w wr= br= wm= bm="]


# ------------------------------------------------------------------------ replay


@pytest.mark.parametrize("path", REAL, ids=[p.name for p in REAL])
def test_replay_accepts_the_real_games(path):
    done = engine("replay", str(path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("variant yinsh, ")
    assert STATE.match(lines[1])
    assert re.fullmatch(r"result (white|black) \((1-0|0-1)\) by (rows|resignation)", lines[3])


def test_replay_prints_the_short_form():
    path = REAL_GAMES / "bga_862307561.long.txt"
    done = engine("replay", "--short", str(path))
    assert (
        done.stdout.splitlines()[-1] + "\n" == (REAL_GAMES / "bga_862307561.short.txt").read_text()
    )
    assert "result black (0-1) by rows" in done.stdout


def test_replay_reads_stdin_and_a_variant_for_bare_moves():
    done = engine("replay", "-", "--variant", "yangsh", stdin="1.a2 2.b2\n")
    assert done.returncode == 0
    assert done.stdout.startswith("variant yangsh, 2 actions")
    assert "result * (unfinished)" in done.stdout


def test_replay_refuses_a_broken_file_and_names_the_token(tmp_path):
    path = tmp_path / "broken.txt"
    path.write_text(
        '[Variant "yinsh"]\n\n1.e3 2.a5 3.b5 4.c6 5.d6 6.e4 7.h7 8.g2 9.g3 10.g8 11.h7-i9\n'
    )
    done = engine("replay", str(path))
    assert done.returncode != 0
    assert done.stdout == ""
    assert "move 11, '11.h7-i9'" in done.stderr and "position: next=move turn=w" in done.stderr


def test_replay_reads_a_file_of_many_games_one_line_each(tmp_path):
    real = [Record.parse(p.read_text()) for p in REAL if p.name.endswith(".long.txt")]
    crashed = Record(real[0].variant, [], Outcome(Result.WHITE, ending("crash")), {"Round": "2"})
    path = tmp_path / "all-games.txt"
    path.write_text(write_records([real[0], crashed, *real[1:]]))
    done = engine("replay", str(path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == f"{len(real) + 1} games"
    assert lines[1] == "game 2: variant yinsh, 0 actions, result white (1-0) by crash"
    for number, line in enumerate(lines[:-1], 1):
        assert re.fullmatch(rf"game {number}: variant yinsh, \d+ actions, result .+", line)
    short = engine("replay", "--short", str(path)).stdout.splitlines()
    assert short[1] == write_moves(real[0].actions, long=False)


def test_replay_of_many_games_names_the_bad_game_and_its_line(tmp_path):
    path = tmp_path / "games.txt"
    good = Record.parse((REAL_GAMES / "bga_862307561.long.txt").read_text()).to_text()
    path.write_text(good + "\n" + good + '\n[Variant "yinsh"]\n\n1.e3 2.e3\n')
    done = engine("replay", str(path))
    line = good.count("\n") * 2 + 5
    assert done.returncode == 1 and done.stdout == ""
    assert f"games.txt: game 3, line {line}: move 2, '2.e3'" in done.stderr


def test_replay_of_an_unreadable_file_is_an_error_not_a_traceback(tmp_path):
    missing = engine("replay", str(tmp_path / "missing.txt"))
    assert missing.returncode == 1
    assert "missing.txt: cannot read" in missing.stderr and "Traceback" not in missing.stderr
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe\x00")
    done = engine("replay", str(binary))
    assert done.returncode == 1 and "cannot read" in done.stderr


# ------------------------------------------------------------------------ selfplay, perft, bench


@pytest.mark.parametrize("variant", ["yinsh", "blitz", "yangsh", "yangsh7"])
def test_selfplay_writes_records_that_replay(tmp_path, variant):
    done = engine(
        "selfplay", "--variant", variant, "--games", "2", "--seed", "3", "--out", str(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    files = sorted(tmp_path.iterdir())
    assert [f.name for f in files] == [f"{variant}-3-0001.txt", f"{variant}-3-0002.txt"]
    for f in files:
        record = Record.parse(f.read_text())
        assert record.variant.name == variant and record.outcome is not None
        assert record.headers["Event"] == "selfplay seed 3"
        again = engine("replay", str(f))
        assert again.returncode == 0
        assert f"by {record.outcome.termination.value}" in again.stdout


def test_selfplay_short_form_and_same_seed_same_games(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    engine("selfplay", "--games", "2", "--seed", "9", "--out", str(a), "--short")
    engine("selfplay", "--games", "2", "--seed", "9", "--out", str(b))
    for name in ("yinsh-9-0001.txt", "yinsh-9-0002.txt"):
        assert Record.parse((a / name).read_text()) == Record.parse((b / name).read_text())


def test_perft_command():
    assert engine("perft", "2").stdout == "perft 2 7140\n"
    done = engine("perft", "2", "--moves", OPENING, "--divide")
    lines = done.stdout.splitlines()
    assert lines[-1] == "perft 2 6258"
    firsts = [line.split()[0] for line in lines[:-1]]
    assert firsts == sorted(firsts) and len(firsts) == 86
    assert sum(int(line.split()[1]) for line in lines[:-1]) == 6258
    assert engine("perft", "1", "--variant", "yangsh").stdout == "perft 1 60\n"
    bad = engine("perft", "1", "--moves", "e3 e3")
    assert bad.returncode != 0 and "e3" in bad.stderr


def test_bench_prints_one_line_per_variant():
    done = engine("bench", "--seconds", "0.2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["yinsh", "blitz", "yangsh", "yangsh7"]
    for line in lines:
        assert re.fullmatch(r"(yinsh|blitz|yangsh|yangsh7): \d+ games/s, \d+ actions/s", line)
    one = engine("bench", "--seconds", "0.1", "--variant", "blitz").stdout.splitlines()
    assert len(one) == 1 and one[0].startswith("blitz: ")
