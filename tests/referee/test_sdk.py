"""The SDK's start-up: what a ``yinshbot`` bot imports before it says ``ready``, and why it may.

The CPU time itself is a benchmark (``./dev bench startup``, docs/benchmarks.md); these tests
check what is imported, which does not depend on how busy the machine is.
"""

import json
import os
import subprocess
import sys
import tomllib

import pytest

from arena.referee.library import bot_library
from arena.referee.protocol import Hello, encode
from arena.referee.sandbox import ProtectionLevel

from .games import BOTS, ROOT

sys.path.insert(0, str(ROOT / "bots" / "sdk"))
import yinshbot
from yinshbot import _plain_manifest

#: Modules that cost a bot's start-up several milliseconds each and that answering ``hello``
#: does not need.
HEAVY = {
    "engine",
    "yinshbot.heuristics",
    "dataclasses",
    "inspect",
    "typing",
    "pathlib",
    "tomllib",
    "traceback",
    "argparse",
}
HELLO = encode(Hello("yinsh", "white", 60_000, 100, seed=3))


def bot_env():
    env = dict(bot_library(ProtectionLevel.NONE)["env"])
    return {"PATH": os.environ["PATH"], "LANG": "C.UTF-8", **env}


def run_bot(argv, cwd, messages):
    """Run a bot without site (so that only the bot's own imports are seen) on ``messages``."""
    done = subprocess.run(
        [sys.executable, "-S", *argv],
        cwd=cwd,
        env=bot_env(),
        input=b"".join(messages),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    return done


def bare_modules():
    done = run_bot(["-c", "import sys; print(' '.join(sys.modules))"], ROOT, [])
    return set(done.stdout.decode().split())


SPY = """\
import sys
import yinshbot

at_ready = []


def choose(request):
    before = sorted(sys.modules)
    request.state()
    return request.actions[0], {"ready": at_ready, "request": before, "state": sorted(sys.modules)}


yinshbot.main(choose, name="spy", on_start=lambda hello: at_ready.extend(sorted(sys.modules)))
"""


def test_the_sdk_imports_the_engine_on_the_first_position_not_before(tmp_path):
    (tmp_path / "main.py").write_text(SPY)
    first = json.dumps({"type": "request", "actions": ["e5"], "history": [], "clock": {}})
    done = run_bot(["main.py"], tmp_path, [HELLO, first.encode() + b"\n"])
    ready, answer = [json.loads(line) for line in done.stdout.splitlines()]
    assert ready == {"type": "ready", "name": "spy", "version": ""}
    loaded = {moment: set(names) - bare_modules() for moment, names in answer["info"].items()}
    assert "yinshbot" in loaded["ready"] and "json" in loaded["ready"]
    assert not loaded["ready"] & HEAVY
    assert not loaded["request"] & HEAVY  # a bot that never asks for the position
    assert "engine" in loaded["state"]


@pytest.mark.parametrize("name", ["random", "greedy", "search"])
def test_the_example_bots_import_nothing_heavy_to_answer_hello(name):
    done = run_bot(["-X", "importtime", "main.py"], BOTS / name, [HELLO])
    assert json.loads(done.stdout)["type"] == "ready"
    imported = {
        line.rpartition("|")[2].strip()
        for line in done.stderr.decode().splitlines()
        if line.startswith("import time:")
    }
    assert "yinshbot" in imported and "json" in imported  # the report is what it seems
    assert not imported & (HEAVY - {"yinshbot.heuristics"})


MANIFESTS = [
    'name = "mybot"\nversion = "1.0"\ncommand = "python3 main.py"\n',
    "# a comment = with an equals sign\nname = 'lit'  # trailing\nversion='2'\n",
    'command = "x"\nvariants = [\n  "yinsh",\n  "blitz",\n]\nname = "a"\nversion = "b"\n',
    'name = "a"\n[table]\nversion = "not top level"\n',
    'name = "a"\nversion = "1"\n[table]\nname = "other"\n',
    'name = "a"\nversion = 1.5\n',
    'name = "a\\u0041"\nversion = "1"\n',
    'name = "a"\nversion = "1"\ndescription = """\nname = "hidden"\n"""\n',
    '"name" = "quoted"\nversion = "1"\n',
    'name.first = "dotted"\nversion = "1"\n',
    'name = "a"\nversion = "1" # fine\nauthor = "x = y"\n',
    'name = "a" "b"\nversion = "1"\n',
    'name = ""\nversion = ""\n',
]


@pytest.mark.parametrize("text", MANIFESTS)
def test_the_manifest_is_read_as_tomllib_reads_it(tmp_path, text):
    plain = _plain_manifest(text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        assert plain is None  # left to tomllib, which refuses it
        data = None
    if plain is not None:
        assert plain == {"name": data["name"], "version": data["version"]}
    (tmp_path / "bot.toml").write_text(text)
    expected = (
        ("", "") if data is None else (str(data.get("name", "")), str(data.get("version", "")))
    )
    assert yinshbot.read_manifest(tmp_path) == expected


def test_plain_manifests_are_read_without_tomllib():
    assert _plain_manifest(MANIFESTS[0]) == {"name": "mybot", "version": "1.0"}
    assert _plain_manifest(MANIFESTS[1]) == {"name": "lit", "version": "2"}
    for name in ("random", "greedy", "search"):
        assert _plain_manifest((BOTS / name / "bot.toml").read_text())["name"] == name


def test_the_value_classes_behave_as_frozen_dataclasses_did():
    clock = yinshbot.Clock(900, 800)
    assert clock == yinshbot.Clock(you_ms=900, opponent_ms=800) != yinshbot.Clock(900, 1)
    assert repr(clock) == "Clock(you_ms=900, opponent_ms=800)"
    assert hash(clock) == hash(yinshbot.Clock(900, 800))
    with pytest.raises(AttributeError):
        clock.you_ms = 1
    hello = yinshbot.Hello("yinsh", "white", 1000, 10, 4)
    assert repr(hello) == (
        "Hello(variant='yinsh', color='white', initial_ms=1000, increment_ms=10, seed=4)"
    )
    with pytest.raises(TypeError):
        yinshbot.Hello("yinsh", "white", 1000, 10)  # every field is required


def test_a_request_compares_by_its_fields_and_not_its_cache():
    def make(**kw):
        return yinshbot.Request(["e5"], [], {}, yinshbot.Clock(1, 2), "white", "yinsh", **kw)

    a, b = make(seed=1), make(seed=1, _cache=yinshbot._StateCache("yinsh"))
    assert a == b and a != make(seed=2)
    assert "_cache" not in repr(b) and repr(a).startswith("Request(actions=['e5'], history=[]")
    a.actions = ["a2"]  # requests are mutable, and so not hashable
    with pytest.raises(TypeError):
        hash(a)
    assert list(make().state().history) == []
