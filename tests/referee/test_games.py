"""Real games between real bot processes, sandboxed at the host's level and unsandboxed."""

import pytest

import engine

from .games import VARIANTS, builtin, check_record, play


@pytest.mark.parametrize("variant", VARIANTS)
def test_random_plays_random_in_the_sandbox(sandboxed, variant):
    bot = builtin("random")
    result = play(sandboxed(), bot, bot, variant=variant, seed=11)
    assert result.outcome.termination.by_rules, result.reason
    assert result.fault is None
    check_record(result)
    for side in ("white", "black"):
        player = result.transcript["players"][side]
        assert player["ready"]["name"] == "random"
        assert player["exit"] == "exit code 0", player
        assert "killed_after_grace" not in player


@pytest.mark.parametrize("variant", VARIANTS)
def test_random_plays_random_without_a_sandbox(unsandboxed, variant):
    bot = builtin("random")
    result = play(unsandboxed(), bot, bot, variant=variant, seed=12)
    assert result.outcome.termination.by_rules, result.reason
    check_record(result)
    assert result.transcript["protection"] == "none"


def test_the_same_seed_replays_the_same_game(unsandboxed):
    bot = builtin("random")
    box = unsandboxed()
    first = play(box, bot, bot, seed=5)
    second = play(box, bot, bot, seed=5)
    assert first.record.actions == second.record.actions


@pytest.mark.parametrize("variant", VARIANTS)
def test_greedy_and_search_play_every_variant(sandboxed, variant):
    box = sandboxed()
    result = play(box, builtin("greedy"), builtin("search"), variant=variant, time="5+0.05")
    assert result.outcome.termination.by_rules, result.reason
    check_record(result)
    infos = [m.get("info") for m in result.transcript["moves"] if m["color"] == "black"]
    assert any(i and "depth" in i for i in infos)
    assert engine.Record.parse(result.record_text()).variant.name == variant
