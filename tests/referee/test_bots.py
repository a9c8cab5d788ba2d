"""Bot folders (BotSpec), the SDK, and the strength of the built-in bots."""

import importlib.util
import io
import itertools
import json
import sys

import pytest

import engine
from arena.referee.bots import BotError, BotSpec
from arena.referee.conformance import plan

from .games import BOTS, ROOT

sys.path.insert(0, str(ROOT / "bots" / "sdk"))
import yinshbot


def make_bot(folder, toml='name = "b"\ncommand = "python3 main.py"\n', files=None):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.toml").write_text(toml)
    for name, text in (files or {"main.py": "print()\n"}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def test_a_folder_with_a_manifest_is_a_bot(tmp_path):
    folder = make_bot(
        tmp_path / "x",
        'name = "mybot"\ncommand = "python3 main.py --fast \'a b\'"\n'
        'version = "2.1"\nauthor = "me"\n',
    )
    spec = BotSpec.load(folder)
    assert spec.name == "mybot" and spec.version == "2.1" and spec.author == "me"
    assert spec.command == ("python3", "main.py", "--fast", "a b")
    assert spec.path == folder and not spec.trusted
    assert spec.label == "mybot 2.1"


def test_the_digest_depends_on_names_and_bytes_only(tmp_path):
    a = make_bot(tmp_path / "a", files={"main.py": "x", "lib/util.py": "y"})
    b = make_bot(tmp_path / "b", files={"lib/util.py": "y", "main.py": "x"})
    assert BotSpec.load(a).digest == BotSpec.load(b).digest
    (b / "__pycache__").mkdir()
    (b / "__pycache__" / "main.cpython-311.pyc").write_bytes(b"\0")
    assert BotSpec.load(a).digest == BotSpec.load(b).digest
    (b / "lib" / "util.py").write_text("z")
    assert BotSpec.load(a).digest != BotSpec.load(b).digest


def test_symlinks_are_hashed_not_followed(tmp_path):
    folder = make_bot(tmp_path / "s")
    (folder / "secret").symlink_to("/etc/shadow")
    BotSpec.load(folder)  # reading /etc/shadow would be a leak, not an error


def test_an_executable_file_is_a_bot(tmp_path):
    f = tmp_path / "solo"
    f.write_text("#!/bin/sh\n")
    f.chmod(0o755)
    spec = BotSpec.load(f)
    assert spec.name == "solo" and spec.command == ("./solo",)


def test_build_and_variants_are_read_from_the_manifest(tmp_path):
    spec = BotSpec.load(make_bot(tmp_path / "x"))
    assert spec.build == "" and spec.variants == tuple(engine.VARIANTS)
    assert spec.plays("yangsh7")
    folder = make_bot(
        tmp_path / "y",
        'name = "c"\ncommand = "./bot"\nbuild = "cc -O2 -o bot main.c"\n'
        'variants = ["blitz", "yinsh", "yinsh"]\n',
    )
    spec = BotSpec.load(folder)
    assert spec.build == "cc -O2 -o bot main.c"
    assert spec.variants == ("yinsh", "blitz")  # the engine's order, once each
    assert not spec.plays("yangsh")
    assert spec.to_json()["variants"] == ["yinsh", "blitz"]
    spec.require("blitz")
    with pytest.raises(BotError, match=r'c does not play yangsh: .* \["yinsh", "blitz"\]'):
        spec.require("yangsh")


@pytest.mark.parametrize("each_colour", [False, True])
@pytest.mark.parametrize("games", [0, 1, 2, 3, 7, 9])
def test_a_check_covers_every_variant_with_colours_alternating(games, each_colour):
    names = list(engine.VARIANTS)
    for n in range(1, len(names) + 1):
        variants = names[:n]
        games_plan = plan(variants, games, each_colour=each_colour)
        least = 2 * n if each_colour else n
        assert len(games_plan) == max(games, least)
        assert {v for v, _ in games_plan} == set(variants)
        if each_colour:
            assert {(v, c) for v in variants for c in ("white", "black")} == set(games_plan)
        colours = [c for _, c in games_plan]
        assert abs(colours.count("white") - colours.count("black")) <= 1
        for v in variants:  # within each variant too, the colours alternate
            mine = [c for w, c in games_plan if w == v]
            assert all(a != b for a, b in itertools.pairwise(mine))


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('command = "x"', "name is missing"),
        ('name = "a"', "command is missing"),
        ('name = ""\ncommand = "x"', "name is empty"),
        ('name = "a"\ncommand = ""', "command is empty"),
        ('name = "a"\ncommand = "\'unclosed"', "cannot be split"),
        ('name = "a"\ncommand = 3', "command must be a string"),
        ("name = [", "not valid TOML"),
        ('name = "a"\ncommand = "python3 m\\u0000.py"', "control character"),
        ('name = "a"\ncommand = ["python3", "a\\nb"]', "control character"),
        ('name = "a"\ncommand = "x"\nversion = "1\\u0000"', "version must be printable"),
        ('name = "a"\ncommand = "x"\nauthor = "\\u001b[31m"', "author must be printable"),
        ('name = "a"\ncommand = "x"\ndescription = "\\u0000"', "description must be"),
        ('name = "a"\ncommand = "x"\nbuild = 3', "build must be a string"),
        ('name = "a"\ncommand = "x"\nbuild = " "', "build is empty"),
        ('name = "a"\ncommand = "x"\nbuild = "make\\u0000"', "build holds a control"),
        ('name = "a"\ncommand = "x"\nvariants = "yinsh"', "variants must be a list"),
        ('name = "a"\ncommand = "x"\nvariants = []', "variants is empty"),
        ('name = "a"\ncommand = "x"\nvariants = ["chess"]', "unknown variant 'chess'"),
    ],
)
def test_bad_manifests_are_refused_clearly(tmp_path, toml, message):
    with pytest.raises(BotError, match=message):
        BotSpec.load(make_bot(tmp_path / "m", toml))


def test_what_is_not_a_bot_is_refused_clearly(tmp_path):
    with pytest.raises(BotError, match="no such bot"):
        BotSpec.load(tmp_path / "missing")
    with pytest.raises(BotError, match=r"no bot\.toml"):
        BotSpec.load(tmp_path)
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    with pytest.raises(BotError, match="must be executable"):
        BotSpec.load(plain)


@pytest.mark.parametrize("name", ["random", "greedy", "search"])
def test_the_builtin_bots_load(name):
    spec = BotSpec.load(BOTS / name)
    assert spec.name == name and spec.command == ("python3", "main.py")


# ----------------------------------------------------------------------------- the SDK


def session(*messages):
    return io.BytesIO("".join(json.dumps(m) + "\n" for m in messages).encode())


HELLO = {
    "type": "hello",
    "protocol": 1,
    "variant": "yinsh",
    "color": "white",
    "time": {"initial_ms": 1000, "increment_ms": 10},
    "seed": 4,
}


def request(history):
    s = engine.State("yinsh")
    for t in history:
        s.play(t)
    return {
        "type": "request",
        "actions": [str(a) for a in s.legal_actions()],
        "history": history,
        "position": s.to_json(),
        "clock": {"you_ms": 900, "opponent_ms": 800},
    }


def test_the_sdk_answers_hello_requests_and_end():
    seen = []

    def choose(req):
        seen.append(req)
        assert req.state().to_json() == req.position
        return req.actions[-1], {"note": "last"}

    out = io.StringIO()
    code = yinshbot.run(
        choose,
        name="t",
        version="0",
        stdin=session(
            HELLO, request([]), request(["e5"]), {"type": "end", "result": "draw", "reason": "r"}
        ),
        stdout=out,
    )
    assert code == 0
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    assert lines[0] == {"type": "ready", "name": "t", "version": "0"}
    assert lines[1]["type"] == "action" and lines[1]["info"] == {"note": "last"}
    assert seen[1].history == ["e5"] and seen[1].clock.you_ms == 900
    assert seen[0].color == "white" and seen[0].seed == 4 and seen[0].increment_ms == 10


def test_choose_may_resign_with_or_without_info():
    answers = iter([yinshbot.RESIGN, (yinshbot.RESIGN, {"eval": -50})])
    out = io.StringIO()
    end = {"type": "end", "result": "black", "reason": "white resigned at ply 1"}
    ended = []
    code = yinshbot.run(
        lambda req: next(answers),
        name="t",
        version="0",
        on_end=lambda result, reason: ended.append((result, reason)),
        stdin=session(HELLO, request([]), request([]), end),
        stdout=out,
    )
    assert code == 0 and ended == [("black", "white resigned at ply 1")]
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    assert lines[1:] == [{"type": "resign"}, {"type": "resign", "info": {"eval": -50}}]
    assert repr(yinshbot.RESIGN) == "yinshbot.RESIGN"


def test_an_error_in_choose_prints_a_traceback_and_fails(capsys):
    def choose(req):
        raise ZeroDivisionError("oops")

    out = io.StringIO()
    code = yinshbot.run(choose, name="t", version="", stdin=session(HELLO, request([])), stdout=out)
    assert code == 1
    assert "ZeroDivisionError: oops" in capsys.readouterr().err


# ----------------------------------------------------------------------------- strength


def load_main(name):
    spec = importlib.util.spec_from_file_location(f"bot_{name}_main", BOTS / name / "main.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def play_in_process(variant, white, black, seed):
    """A game between two choose functions, without processes or clocks."""
    s = engine.State(variant)
    hello = {"variant": variant, "seed": seed}
    history = []
    caches = {}
    while not s.is_over():
        actions = [str(a) for a in s.legal_actions()]
        if actions == ["pass"]:
            s.play("pass")
            history.append("pass")
            continue
        req = yinshbot.Request(
            actions,
            list(history),
            s.to_json(),
            yinshbot.Clock(10**6, 10**6),
            s.turn.label,
            hello["variant"],
            seed,
            0,
        )
        req._cache = caches.setdefault(s.turn, yinshbot._StateCache(variant))
        answer = (white if s.turn is engine.Color.WHITE else black)(req)
        token = answer[0] if isinstance(answer, tuple) else answer
        s.play(token)
        history.append(token)
    return s.outcome


@pytest.mark.slow
def test_search_beats_greedy_clearly_at_a_fixed_depth():
    greedy = load_main("greedy")
    search = load_main("search")
    score = 0.0
    games = 8
    for g in range(games):
        greedy.reset()
        bot = search.Bot(depth=2)
        if g % 2 == 0:
            outcome = play_in_process("yinsh", bot.choose, greedy.choose, seed=g)
            score += {"white": 1, "draw": 0.5, "black": 0}[outcome.result.value]
        else:
            outcome = play_in_process("yinsh", greedy.choose, bot.choose, seed=g)
            score += {"black": 1, "draw": 0.5, "white": 0}[outcome.result.value]
    assert score >= 6.5, f"search scored only {score}/{games} against greedy"


def test_greedy_beats_random_in_every_variant():
    greedy = load_main("greedy")
    rnd = load_main("random")
    for variant in ("yinsh", "blitz", "yangsh", "yangsh7"):
        greedy.reset()
        rnd.reset()
        outcome = play_in_process(variant, greedy.choose, rnd.choose, seed=1)
        assert outcome.result is engine.Result.WHITE, variant
