"""The starter kits of bots/starters/: each one builds offline in the sandbox, reads the
protocol's JSON correctly (escapes, unknown fields, any key order), and plays whole games
against the random bot through the full sandbox.

Each kit is built as the arena builds an upload (:mod:`arena.referee.build`: its ``build``
command in the sandbox, in a writable copy of the folder, network off), once per test module;
the built bot then plays at protection level FULL like any upload.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.referee.bots import BotSpec
from arena.referee.build import Builder
from arena.referee.runtimes import RUNTIMES, Runtime
from arena.referee.sandbox import Sandbox
from arena.referee.sandbox.settings import BOT_PATH
from tests.conftest import skip_unless_required

from .games import builtin, check_record, play


def require_toolchain(runtime: Runtime) -> None:
    """Skip when the runtime's tools are not on the bots' PATH (fail where the full sandbox is
    required, as in CI: ./dev installs them there)."""
    missing = [c for c in runtime.commands if shutil.which(c, path=BOT_PATH) is None]
    if missing:
        skip_unless_required(
            f"{runtime.name} is not installed ({', '.join(missing)} not on {BOT_PATH}); "
            f"as root, ./dev installs it (docs/runtimes.md)"
        )


@pytest.fixture(scope="module", params=RUNTIMES, ids=lambda r: r.key)
def runtime(request: pytest.FixtureRequest) -> Runtime:
    require_toolchain(request.param)
    return request.param  # type: ignore[no-any-return]  # pytest's params are untyped


@pytest.fixture(scope="module")
def build_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("builds")


@pytest.fixture
def kit(runtime: Runtime, build_cache: Path, full_sandbox: Callable[..., Sandbox]) -> BotSpec:
    """The runtime's starter kit, built in the full sandbox (once per module: the cache)."""
    source = BotSpec.load(runtime.kit)
    built = Builder(full_sandbox(), build_cache).build(source)
    assert not built.spec.needs_build and built.spec.digest == source.digest
    return built.spec


def test_the_kit_plays_random_in_both_colours_through_the_full_sandbox(
    kit: BotSpec, full_sandbox: Callable[..., Sandbox]
) -> None:
    assert not kit.trusted
    box = full_sandbox(memory_mb=512)
    random = builtin("random")
    for white, black, side in ((kit, random, "white"), (random, kit, "black")):
        result = play(box, white, black, seed=7, time="30+0.5")
        assert result.transcript["protection"] == "full"
        assert result.outcome.termination.by_rules, result.reason
        assert result.fault is None
        check_record(result)
        player = result.transcript["players"][side]
        assert player["ready"]["name"] == kit.name
        assert player["exit"] == "exit code 0", player
        assert "killed_after_grace" not in player
        assert player.get("violation") is None
        assert kit.name in player["stderr_tail"]  # it logs to standard error


def test_the_kit_replays_the_same_game_from_the_same_seed(
    kit: BotSpec, full_sandbox: Callable[..., Sandbox]
) -> None:
    box = full_sandbox(memory_mb=512)
    games = [play(box, kit, builtin("random"), seed=31, time="30+0.5") for _ in range(2)]
    assert games[0].record.actions == games[1].record.actions
    other = play(box, kit, builtin("random"), seed=32, time="30+0.5")
    assert other.record.actions != games[0].record.actions


# Lines a correct JSON reader must take in its stride: fields in any order and with spaces,
# nested objects and arrays it does not know, every kind of escape in strings, numbers with
# exponents, and a message type from a later protocol version (to be ignored, not answered).
HELLO = (
    '{ "seed" : 42, "type" : "hello", "protocol": 1, "variant": "yinsh", "color": "black", '
    '"time": {"initial_ms": 60000, "increment_ms": 1000}, '
    '"later": {"nested": [1, -2.5e+3, 0.5E-2, true, false, null, '
    '{"s": "a \\"quoted\\" ] } , string \\\\ with \\/ slashes"}, [], {}], '
    '"note": "caf\\u00e9 \\ud83d\\ude00 \\b\\f\\n\\r\\t \\u005c \\u0022"} }'
)
FUTURE = '{"type": "later-version", "actions": ["xx"], "payload": {"a": [{"b": "}"}]}}'
REQUEST = (
    '{"type":"request","history":["a\\u0031","e5"],"position":{"variant":"yinsh",'
    '"rings":{"white":["e5"],"black":[]},"markers":{"white":[],"black":[]},"result":null,'
    '"pool":51},"actions":["\\u0061\\u0032","b\\u0033"],"clock":{"you_ms":1000,'
    '"opponent_ms":2000}}'
)
REQUEST_REORDERED = '{ "actions" : [ "c4" ] , "clock": {"you_ms": 5}, "type" : "request" }'
END = '{"type":"end","result":"draw","reason":"a \\"quoted\\" reason, caf\\u00e9"}'


def test_the_kit_reads_escapes_unknown_fields_and_any_key_order(kit: BotSpec) -> None:
    """The kit, as a plain process on the host, given the lines above: it answers exactly the
    hello and the two requests, with actions decoded from their escapes, and exits 0."""
    session = "\n".join([HELLO, FUTURE, REQUEST, REQUEST_REORDERED, END]) + "\n"
    run = subprocess.run(
        kit.command,
        cwd=kit.folder,
        env={"PATH": BOT_PATH, "HOME": str(kit.folder)},
        input=session.encode(),
        capture_output=True,
        timeout=60,
        check=False,
    )
    stderr = run.stderr.decode(errors="replace")
    assert run.returncode == 0, stderr
    answers = [json.loads(line) for line in run.stdout.decode().splitlines()]
    assert len(answers) == 3, answers
    assert answers[0]["type"] == "ready" and answers[0]["name"] == kit.name
    assert answers[1] == {"type": "action", "action": answers[1]["action"]}
    assert answers[1]["action"] in ("a2", "b3")
    assert answers[2] == {"type": "action", "action": "c4"}
    assert kit.name in stderr
