"""The referee's endings (arena/referee/outcomes.py) beside the engine's rules endings."""

import engine
from arena.referee.outcomes import Failure

from .fakes import Exit
from .test_match import Game


def test_the_stored_tokens_are_unchanged():
    """Records, transcripts and the site's tables hold these strings: they must never change."""
    assert {f.name: f.value for f in Failure} == {
        "TIME": "time",
        "CRASH": "crash",
        "ILLEGAL_MOVE": "illegal-move",
        "PROTOCOL": "protocol-error",
        "SANDBOX": "sandbox-violation",
        "NO_START": "no-start",
        "ABORTED": "aborted",
    }


def test_the_engine_holds_the_rules_endings_only_and_the_referee_the_others():
    rules = {t.value for t in engine.Termination}
    assert rules == {"rows", "pool-exhausted", "no-moves", "resignation"}
    assert not rules & {f.value for f in Failure}
    assert not any(f.by_rules for f in Failure)


def test_a_forfeit_is_written_and_read_back_as_the_same_outcome():
    game = Game(black=lambda m: Exit(3, b"boom\n"))
    result = game.play()
    assert result.outcome.termination is Failure.CRASH
    text = result.record_text()
    assert '[Termination "crash"]' in text
    parsed = engine.Record.parse(text)
    assert parsed.outcome == result.outcome
    assert parsed.outcome is not None
    assert parsed.outcome.termination == Failure.CRASH == engine.Forfeit("crash")
    assert Failure(parsed.outcome.termination.value) is Failure.CRASH
