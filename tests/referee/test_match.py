"""The game loop, driven by scripted bots on a fake clock: every failure, clocks, transcript."""

import json
import threading

import pytest

import engine
from arena.referee import GameConfig, Referee, TimeControl, protocol
from arena.referee.bots import BotSpec
from arena.referee.outcomes import Failure as F

from .fakes import Endless, Exit, FakeBot, FakeClock, Hang, Think, Violation, first_legal

# Found by random play (see the tests using them): a move that completes the mover's own row,
# and a move that completes a row of the opponent's colour.
OWN_ROW_OPENING = [
    "g4",
    "g9",
    "b2",
    "e7",
    "i7",
    "i4",
    "g10",
    "f4",
    "i6",
    "g3",
    "g4-e2",
    "g9-i11",
    "e2-e3",
    "f4-f5",
    "b2-j10",
    "e7-f8",
    "i6-d6",
    "g3-g5",
    "e3-e4",
    "f8-i8",
    "d6-j6",
    "f5-e5",
    "j10-j9",
    "i4-i5",
    "i7-j8",
    "i11-h10",
    "e4-g6",
]
OWN_ROW_MOVE = "h10-h5"
OPPONENT_ROW_OPENING = [
    "b4",
    "c2",
    "c1",
    "g4",
    "d6",
    "f7",
    "e9",
    "k10",
    "e4",
    "b1",
    "e9-b6",
    "f7-f4",
    "d6-e6",
    "g4-j7",
    "e4-c4",
    "k10-h7",
    "e6-f6",
    "h7-h8",
    "f6-c6",
    "h8-i8",
    "c6-h11",
    "f4-g5",
    "b4-b2",
    "c2-d2",
    "c4-a4",
    "g5-k9",
    "b6-a5",
    "j7-j9",
    "h11-g11",
    "k9-j8",
    "a5-b5",
    "i8-i9",
    "b2-e5",
    "d2-e2",
    "a4-a3",
    "e2-g2",
    "e5-f5",
    "g2-a2",
    "b5-b7",
    "j8-g8",
    "c1-c3",
    "i9-h9",
    "c3-b3",
    "j9-j10",
    "g11-g9",
    "g8-g3",
    "f5-g6",
    "j10-g7",
    "g9-g10",
    "h9-h10",
    "g6-j6",
]
OPPONENT_ROW_MOVE = "g7-i7"


def spec(name: str) -> BotSpec:
    return BotSpec(
        path=__import__("pathlib").Path("/nowhere") / name,
        name=name,
        command=("python3", "main.py"),
        digest="0" * 64,
        version="1.0",
    )


WHITE, BLACK = spec("alpha"), spec("beta")


def config(time="10+0.1", **kwargs) -> GameConfig:
    return GameConfig(
        kwargs.pop("variant", "yinsh"), WHITE, BLACK, TimeControl.parse(time), **kwargs
    )


class Game:
    """Two fake bots on one fake clock, and a referee to run them."""

    def __init__(self, white=first_legal, black=first_legal, **referee):
        self.clock = FakeClock()
        self.white = FakeBot(self.clock, white)
        self.black = FakeBot(self.clock, black)
        referee.setdefault("startup_timeout_s", 5.0)
        self.referee = Referee(sandbox=object(), **referee)

    def play(self, cfg=None, **kwargs):
        return self.referee.run(
            cfg or config(), self.white, self.black, clock=self.clock, protection="test", **kwargs
        )


def after(n: int, then):
    """A brain that plays its first legal action n times, then answers ``then`` to requests."""
    count = {"n": 0}

    def brain(message):
        if isinstance(message, protocol.Request):
            count["n"] += 1
            if count["n"] > n:
                return then(message) if callable(then) else then
        return first_legal(message)

    return brain


def ready_then(reply):
    return after(0, reply)


# --------------------------------------------------------------------------- normal games


def test_a_game_runs_to_its_end_by_the_rules():
    result = Game().play()
    assert result.outcome.termination.by_rules
    assert result.fault is None
    assert engine.Record.parse(result.record_text()) == result.record
    assert result.record.headers["White"] == "alpha 1.0"
    assert result.record.headers["TimeControl"] == "10+0.1"
    assert set(result.record.headers) >= {"White", "Black", "Date", "TimeControl"}


def test_every_request_carries_actions_history_position_and_clock():
    game = Game()
    game.play()
    requests = game.white.requests() + game.black.requests()
    for r in requests:
        s = engine.State("yinsh")
        for token in r.history:
            s.play(token)
        assert r.position == s.to_json()
        assert list(r.actions) == [str(a) for a in s.legal_actions()]


def test_the_transcript_keeps_what_is_needed_to_rerun_and_judge_the_game():
    game = Game(
        white=after(0, lambda m: {"type": "action", "action": m.actions[-1], "info": {"depth": 3}})
    )
    result = game.play(config(seed=42, headers=(("Event", "test"),)))
    t = json.loads(json.dumps(result.transcript))  # JSON-able
    assert t["variant"] == "yinsh" and t["seed"] == 42 and t["time_control"] == "10+0.1"
    assert t["protocol"] == 1 and t["referee"] and t["protection"] == "test"
    assert t["started_at"] and t["termination"] == result.outcome.termination.value
    assert t["reason"] == result.reason and t["result"] == result.outcome.result.value
    assert t["headers"] == {"Event": "test"}
    for color, bot in (("white", WHITE), ("black", BLACK)):
        p = t["players"][color]
        assert p["name"] == bot.name and p["digest"] == bot.digest
        assert p["command"] == list(bot.command)
        assert p["ready"]["name"] == "fake" and p["ready"]["version"] == "1"
        assert p["exit"] == "exit code 0" and p["sent_end"]
        assert "stderr_tail" in p
    assert [m["action"] for m in t["moves"]] == [str(a) for a in result.record.actions]
    white_moves = [m for m in t["moves"] if m["color"] == "white"]
    assert all(m["info"] == {"depth": 3} for m in white_moves)
    assert all("ms" in m and "clock_ms" in m for m in t["moves"])


def test_both_bots_get_hello_then_end_with_the_result():
    game = Game()
    result = game.play(config(seed=9))
    for bot, color in ((game.white, "white"), (game.black, "black")):
        hello = bot.received[0]
        assert hello == protocol.Hello("yinsh", color, 10000, 100, seed=9)
        assert bot.received[-1] == protocol.End(result.outcome.result.value, result.reason)
        assert bot.input_closed


def test_on_action_is_called_after_each_action():
    seen = []
    result = Game().play(on_action=lambda s, a, ms: seen.append((len(s.history), str(a), ms)))
    assert [a for _, a, _ in seen] == [str(a) for a in result.record.actions]
    assert [n for n, _, _ in seen] == list(range(1, len(seen) + 1))


def test_each_action_is_told_to_a_watcher_with_both_clocks_and_its_info_as_text():
    seen = []
    game = Game(
        white=ready_then(lambda m: Think(150, {"type": "action", "action": m.actions[0]})),
        black=ready_then(
            lambda m: Think(50, {"type": "action", "action": m.actions[0], "info": {"s": 1}})
        ),
        move_overhead_ms=50,
    )
    result = game.play(config(time="10+1", opening=("e5", "f6")), on_played=seen.append)
    actions = [str(a) for a in result.record.actions]
    assert [p.action for p in seen] == actions[2:]  # the bots' actions, not the opening's
    assert [p.ply for p in seen] == list(range(3, len(actions) + 1))
    first_white = next(p for p in seen if p.color == "white")
    assert first_white.think_ms == 150
    # 100 ms charged, the increment added when the turn passed: what the referee keeps.
    assert first_white.clocks_ms == (10900, 10000)
    assert first_white.turn == "black"
    assert seen[-1].turn == ""
    assert seen[-1].clocks_ms == (
        result.transcript["players"]["white"]["clock_ms"],
        result.transcript["players"]["black"]["clock_ms"],
    )
    # The info is its owner's: the live feed shows it to them alone (arena.games.live).
    assert {p.info for p in seen if p.color == "black"} == {"s: 1"}
    assert {p.info for p in seen if p.color == "white"} == {""}
    assert not any(hasattr(p, "stderr") for p in seen)


def test_an_opening_is_played_before_the_bots_and_they_see_it():
    game = Game()
    result = game.play(config(opening=("e5", "f6")))
    assert [str(a) for a in result.record.actions[:2]] == ["e5", "f6"]
    assert game.white.requests()[0].history == ("e5", "f6")
    assert result.transcript["moves"][0] == {"color": "white", "action": "e5", "opening": True}


def test_the_record_names_its_opening_and_replays_from_the_start():
    result = Game().play(config(opening=("e5", "f6")))
    assert result.record.headers["Opening"] == "e5 f6"
    again = engine.Record.parse(result.record_text())
    assert again.headers["Opening"] == "e5 f6"
    assert [str(a) for a in again.actions[:2]] == ["e5", "f6"]


def test_the_record_names_the_seed_given_to_the_bots():
    result = Game().play(config(seed=4321, opening=("e5", "f6")))
    again = engine.Record.parse(result.record_text())
    assert again.headers["Seed"] == "4321"
    assert Game().play(config()).record.headers["Seed"] == "0"


def test_a_game_without_an_opening_has_no_opening_header():
    assert "Opening" not in Game().play(config()).record.headers


def test_an_illegal_opening_is_a_configuration_error():
    with pytest.raises(ValueError, match="opening action 2"):
        Game().play(config(opening=("e5", "e5")))


def test_an_unknown_variant_is_a_configuration_error():
    with pytest.raises(ValueError, match="unknown variant"):
        Game().play(config(variant="chess"))


def test_other_spellings_of_a_legal_action_are_accepted():
    game = Game(white=ready_then(lambda m: {"type": "action", "action": m.actions[0].upper()}))
    result = game.play()
    assert result.fault is None


def test_bots_are_paused_while_the_opponent_thinks():
    game = Game()  # a FakeBot fails the test if written to while paused
    game.play()
    assert game.white.pauses > 10 and game.black.pauses > 10


def test_no_pausing_when_switched_off():
    game = Game(pause_between_turns=False)
    game.play()
    assert game.white.pauses == game.black.pauses == 0


# --------------------------------------------------------------------------- clocks


def test_think_time_beyond_the_allowance_is_charged():
    game = Game(
        white=ready_then(lambda m: Think(250, {"type": "action", "action": m.actions[0]})),
        move_overhead_ms=50,
    )
    game.play(config(time="10+0"))
    clocks = [r.you_ms for r in game.white.requests()]
    assert clocks[:3] == [10000, 9800, 9600]  # 250 ms each, 50 ms of it allowed


def test_think_time_within_the_allowance_is_free():
    game = Game(
        white=ready_then(lambda m: Think(40, {"type": "action", "action": m.actions[0]})),
        move_overhead_ms=50,
    )
    game.play(config(time="10+0"))
    assert {r.you_ms for r in game.white.requests()} == {10000}


def test_a_side_may_have_an_allowance_of_its_own():
    # A remote bot's latency allowance: its side only, named in the transcript.
    think = ready_then(lambda m: Think(250, {"type": "action", "action": m.actions[0]}))
    game = Game(white=think, black=think, move_overhead_ms=50)
    result = game.play(config(time="10+0"), overhead_ms={engine.Color.WHITE: 300})
    assert {r.you_ms for r in game.white.requests()} == {10000}  # 250 ms within 300
    assert [r.you_ms for r in game.black.requests()][:3] == [10000, 9800, 9600]
    players = result.transcript["players"]
    assert players["white"]["move_overhead_ms"] == 300
    assert "move_overhead_ms" not in players["black"]
    assert result.transcript["time"]["move_overhead_ms"] == 50


def test_the_increment_is_added_once_per_turn():
    game = Game(
        white=ready_then(lambda m: Think(150, {"type": "action", "action": m.actions[0]})),
        move_overhead_ms=50,
    )
    game.play(config(time="10+1"))
    clocks = [r.you_ms for r in game.white.requests()]
    assert clocks[:3] == [10000, 10900, 11800]  # -100 charged, +1000 per turn
    opp = [r.opponent_ms for r in game.black.requests()]
    assert opp[:2] == [10900, 11800]  # the opponent sees the clock with the increment


def test_a_turn_of_several_actions_earns_one_increment():
    opening = tuple(OWN_ROW_OPENING)
    state = engine.State("yinsh")
    for token in opening:
        state.play(token)
    mover = state.turn.label

    def brain(message):
        if isinstance(message, protocol.Request) and len(message.history) == len(opening):
            return {"type": "action", "action": OWN_ROW_MOVE}
        if isinstance(message, protocol.Request):
            return Think(100, {"type": "action", "action": message.actions[0]})
        return first_legal(message)

    game = Game(white=brain, black=brain, move_overhead_ms=0)
    game.play(config(time="10+1", opening=opening))
    bot = game.white if mover == "white" else game.black
    reqs = bot.requests()
    assert len(reqs[0].history) == len(opening)
    # The move (free here), then the row removal and the ring removal in the same turn:
    assert reqs[1].actions[0].startswith("x") and "-" in reqs[1].actions[0]
    assert reqs[2].actions[0].startswith("x") and "-" not in reqs[2].actions[0]
    assert [r.you_ms for r in reqs[:4]] == [10000, 10000, 9900, 10800]


def test_rows_made_for_the_opponent_are_removed_at_the_start_of_its_turn():
    opening = tuple(OPPONENT_ROW_OPENING)
    state = engine.State("yinsh")
    for token in opening:
        state.play(token)
    mover = state.turn

    def brain(message):
        if isinstance(message, protocol.Request) and len(message.history) == len(opening):
            return {"type": "action", "action": OPPONENT_ROW_MOVE}
        return first_legal(message)

    game = Game(white=brain, black=brain)
    result = game.play(config(opening=opening))
    other = game.black if mover is engine.Color.WHITE else game.white
    first = next(r for r in other.requests() if len(r.history) == len(opening) + 1)
    assert all(a.startswith("x") and "-" in a for a in first.actions)
    assert first.position["next"] == "remove-row"
    assert result.fault is None


def test_a_forced_pass_is_played_without_asking(monkeypatch):
    original = engine.State.legal_actions

    def legal(self):
        # Make white's ring moves at ply 20 impossible (positions like it are rare in play).
        if len(self.history) == 20 and self.turn is engine.Color.WHITE:
            return [engine.PASS]
        return original(self)

    monkeypatch.setattr(engine.State, "legal_actions", legal)
    game = Game(move_overhead_ms=0)
    result = game.referee.run(config(time="10+1"), game.white, game.black, clock=game.clock)
    moves = result.transcript["moves"]
    assert moves[20] == {"color": "white", "action": "pass", "forced": True}
    assert all(len(r.history) != 20 for r in game.white.requests())
    assert any(len(r.history) == 21 for r in game.black.requests())


def test_running_out_of_time_loses():
    game = Game(white=after(2, Think(20_000, {"type": "action", "action": "e5"})))
    result = game.play(config(time="10+0"))
    assert result.outcome == engine.Outcome(engine.Result.BLACK, F.TIME)
    assert result.fault == "white"
    assert result.reason == (
        "white ran out of time (no answer after 10.05 s with 10000 ms on its clock "
        "+ 50 ms allowance, at ply 5)"
    )


def test_an_answer_after_the_deadline_loses_even_if_it_comes():
    # Hang answers after the clock plus the allowance exactly: still too late.
    game = Game(white=ready_then(Hang()))
    result = game.play(config(time="1+0"))
    assert result.outcome.termination is F.TIME


# --------------------------------------------------------------------------- resignation

RESIGN = {"type": "resign"}


def test_a_bot_that_resigns_loses_by_resignation_and_no_one_is_at_fault():
    game = Game(white=after(2, Think(300, {"type": "resign", "info": {"eval": -9}})))
    result = game.play(config(time="10+0"))
    assert result.outcome == engine.Outcome(engine.Result.BLACK, engine.Termination.RESIGNATION)
    assert result.fault is None
    assert result.reason == result.public_reason == "white resigned at ply 5"
    assert len(result.record.actions) == 4
    t = result.transcript
    assert (t["result"], t["termination"], t["fault"]) == ("black", "resignation", None)
    # The answer is kept as an action would be: its time, the clock after it, its info.
    assert t["moves"][-1] == {
        "color": "white",
        "action": "resign",
        "ms": 300.0,
        "clock_ms": 10000 - 250,
        "info": {"eval": -9},
    }
    assert t["players"]["white"]["clock_ms"] == 9750


def test_both_bots_are_told_the_end_of_a_resigned_game_and_exit_in_peace():
    game = Game(black=after(3, RESIGN))
    result = game.play()
    assert result.reason == "black resigned at ply 8"
    for bot in (game.white, game.black):
        assert bot.received[-1] == protocol.End("white", "black resigned at ply 8")
        assert bot.input_closed and not bot.killed
    for colour in ("white", "black"):
        player = result.transcript["players"][colour]
        assert player["sent_end"] and player["exit"] == "exit code 0"
        assert "killed" not in player


def test_the_record_of_a_resigned_game_reads_back_with_its_outcome():
    result = Game(white=after(6, RESIGN)).play()
    for long in (True, False):
        parsed = engine.Record.parse(result.record_text(long=long))
        assert parsed == result.record
        assert parsed.outcome == engine.Outcome(engine.Result.BLACK, engine.Termination.RESIGNATION)
    text = result.record_text()
    assert '[Result "0-1"]' in text and '[Termination "resignation"]' in text


def test_a_bot_may_resign_in_the_middle_of_its_turn():
    opening = tuple(OWN_ROW_OPENING)
    state = engine.State("yinsh")
    for token in opening:
        state.play(token)
    mover = state.turn

    def brain(message):
        if isinstance(message, protocol.Request) and len(message.history) == len(opening):
            return {"type": "action", "action": OWN_ROW_MOVE}
        if isinstance(message, protocol.Request):
            return RESIGN  # asked to take its row off: it gives up instead
        return first_legal(message)

    result = Game(white=brain, black=brain).play(config(opening=opening))
    assert result.outcome == engine.Outcome(
        engine.Result(mover.other.label), engine.Termination.RESIGNATION
    )
    assert result.reason == f"{mover.label} resigned at ply {len(opening) + 2}"
    # The record ends in the middle of a turn, and still reads back.
    assert engine.Record.parse(result.record_text()) == result.record
    assert engine.Record.parse(result.record_text(long=False)) == result.record


def test_a_resignation_that_comes_after_the_clock_ran_out_loses_on_time():
    game = Game(white=after(2, Think(20_000, RESIGN)))
    result = game.play(config(time="10+0"))
    assert result.outcome == engine.Outcome(engine.Result.BLACK, F.TIME)
    assert result.fault == "white"


def test_a_resignation_is_not_an_answer_to_hello():
    result = Game(white=lambda m: RESIGN if isinstance(m, protocol.Hello) else None).play()
    assert result.outcome == engine.Outcome(engine.Result.BLACK, F.PROTOCOL)
    assert "expected a ready message, got a resign message" in result.reason


def test_a_resignation_is_not_told_to_a_watcher_as_an_action():
    seen = []
    result = Game(black=after(1, RESIGN)).play(on_played=seen.append)
    assert [p.action for p in seen] == [str(a) for a in result.record.actions]
    assert seen[-1].turn == "black"


# --------------------------------------------------------------------------- failures


def test_no_ready_in_time_is_no_start():
    game = Game(white=lambda m: None, startup_timeout_s=2.0)
    result = game.play()
    assert result.outcome == engine.Outcome(engine.Result.BLACK, F.NO_START)
    assert result.reason == "white sent no ready within 2 s"
    assert result.fault == "white"
    assert result.record.actions == []
    assert engine.Record.parse(result.record_text()).outcome == result.outcome


def test_both_failing_to_start_is_a_draw():
    game = Game(white=lambda m: None, black=lambda m: None)
    result = game.play()
    assert result.outcome == engine.Outcome(engine.Result.DRAW, F.NO_START)
    assert result.fault is None
    assert "both bots failed to start" in result.reason


def test_a_bot_that_could_not_be_launched_is_no_start():
    game = Game()
    result = game.referee.run(
        config(),
        None,
        game.black,
        clock=game.clock,
        launch_failures={engine.Color.WHITE: "could not start: no such file"},
    )
    assert result.outcome == engine.Outcome(engine.Result.BLACK, F.NO_START)
    assert result.reason == "white could not start: no such file"


def test_exiting_before_ready_is_a_crash():
    game = Game(black=lambda m: Exit(1, b"Traceback...\nImportError: no module named foo\n"))
    result = game.play()
    assert result.outcome == engine.Outcome(engine.Result.WHITE, F.CRASH)
    assert result.reason == (
        "black exited during start-up (exit code 1); stderr: ImportError: no module named foo"
    )


def test_a_bad_ready_is_a_protocol_error():
    game = Game(white=lambda m: {"type": "ready"})
    result = game.play()
    assert result.outcome.termination is F.PROTOCOL
    assert 'lacks "name"' in result.reason and "during start-up" in result.reason


@pytest.mark.parametrize(
    ("reply", "termination", "fragment"),
    [
        (b"not json at all", F.PROTOCOL, "is not JSON"),
        (b"\xff\xfe", F.PROTOCOL, "not valid UTF-8"),
        (
            {"type": "ready", "name": "x"},
            F.PROTOCOL,
            "expected an action message, got a ready",
        ),
        ({"type": "resign", "info": []}, F.PROTOCOL, '"info" of the resign message must be'),
        ({"type": "draw"}, F.PROTOCOL, "unknown message type 'draw'"),
        ({"type": "action"}, F.PROTOCOL, 'lacks "action"'),
        (
            {"type": "action", "action": 12},
            F.PROTOCOL,
            '"action" of the action message is a num',
        ),
        (Endless(), F.PROTOCOL, "without a newline"),
        (
            {"type": "action", "action": "pass"},
            F.ILLEGAL_MOVE,
            "played 'pass', which is not legal",
        ),
        ({"type": "action", "action": "z99"}, F.ILLEGAL_MOVE, "played 'z99'"),
        ({"type": "action", "action": "a2-a5"}, F.ILLEGAL_MOVE, "must place"),
        (Exit(3, b"boom\n"), F.CRASH, "exited at ply 8 (exit code 3); stderr: boom"),
        (Exit(-11), F.CRASH, "killed by signal 11 (SIGSEGV)"),
        (
            Violation("memory", "memory limit of 512 MiB exceeded"),
            F.SANDBOX,
            "stopped by the sandbox: memory limit of 512 MiB exceeded (memory)",
        ),
    ],
)
def test_each_failure_maps_to_its_termination(reply, termination, fragment):
    game = Game(black=after(3, reply))
    result = game.play()
    assert result.outcome.termination is termination
    assert result.outcome.result is engine.Result.WHITE
    assert result.fault == "black"
    assert fragment in result.reason, result.reason
    assert result.reason.startswith("black ")
    assert len(result.record.actions) == 7
    parsed = engine.Record.parse(result.record_text())
    assert parsed.outcome == result.outcome


def test_output_written_without_a_request_is_a_protocol_error():
    game = Game()
    game.white.extra_output = b'{"type": "action", "action": "e5"}\n'
    result = game.play()
    assert result.outcome.termination is F.PROTOCOL
    assert "without being asked" in result.reason


def test_a_violation_is_reported_rather_than_the_crash_it_caused():
    game = Game(white=after(1, Exit(-9)))
    game.white.the_violation = Violation("processes", "process limit of 32 exceeded")
    result = game.play()
    assert result.outcome.termination is F.SANDBOX
    assert "process limit of 32 exceeded" in result.reason


def test_a_bot_that_ignores_end_is_killed_after_the_grace_and_keeps_its_result():
    game = Game()
    game.black.ignores_end = True
    result = game.play()
    assert result.outcome.termination.by_rules
    black = result.transcript["players"]["black"]
    assert black["killed_after_grace"] is True
    assert game.black.killed
    assert "killed_after_grace" not in result.transcript["players"]["white"]


def test_oversized_info_is_dropped_and_counted():
    big = {"pv": ["e5"] * 2000}
    game = Game(white=ready_then(lambda m: {"type": "action", "action": m.actions[0], "info": big}))
    result = game.play()
    white = [m for m in result.transcript["moves"] if m["color"] == "white"]
    assert all("info" not in m and m["info_dropped"] > 2048 for m in white)
    assert result.transcript["players"]["white"]["info_dropped"] == len(white)


def test_a_cancelled_game_is_aborted_and_both_bots_are_killed():
    cancel = threading.Event()
    game = Game()
    result = game.play(
        cancel=cancel, on_action=lambda s, a, ms: len(s.history) == 5 and cancel.set()
    )
    assert result.outcome.termination is F.ABORTED
    assert result.aborted and result.fault is None
    assert result.record.outcome is None
    assert result.transcript["result"] is None
    assert game.white.killed and game.black.killed
    assert len(result.record.actions) == 5


def test_the_stderr_tail_is_in_the_transcript():
    game = Game(black=after(2, Exit(1, b"line one\nline two\n")))
    result = game.play()
    assert result.transcript["players"]["black"]["stderr_tail"] == "line one\nline two\n"


def test_time_controls_read_and_write_like_cutechess():
    assert TimeControl.parse("60+1") == TimeControl(60000, 1000)
    assert TimeControl.parse("10+0.1") == TimeControl(10000, 100)
    assert TimeControl.parse("0.5") == TimeControl(500, 0)
    assert str(TimeControl(60000, 1000)) == "60+1"
    assert str(TimeControl(10000, 100)) == "10+0.1"
    for bad in ("", "abc", "-1", "0", "10+", "10+-1", "1:00", "inf"):
        with pytest.raises(ValueError, match="time control"):
            TimeControl.parse(bad)


def test_the_end_message_never_quotes_a_bots_stderr_to_either_bot():
    """The reason keeps the crashing bot's last words for its owner; the other bot (whose owner
    reads what it logs) is told what happened, not what its opponent wrote."""
    game = Game(black=after(3, Exit(3, b"MY-SECRET-PLAN\n")))
    result = game.play()
    assert result.reason == "black exited at ply 8 (exit code 3); stderr: MY-SECRET-PLAN"
    assert result.public_reason == "black exited at ply 8"
    assert game.white.received[-1] == protocol.End("white", "black exited at ply 8")
    assert all("MY-SECRET-PLAN" not in repr(m) for m in game.white.received)
    t = result.transcript
    assert (t["reason"], t["public_reason"]) == (result.reason, result.public_reason)


@pytest.mark.parametrize(
    ("reply", "public"),
    [
        (Exit(3, b"boom\n"), "black exited at ply 8"),
        (Exit(-11), "black exited at ply 8"),
        ({"type": "surrender"}, "black broke the protocol at ply 8"),
        (b"not json at all", "black broke the protocol at ply 8"),
        (
            Violation("memory", "memory limit of 512 MiB exceeded"),
            "black was stopped by the sandbox at ply 8",
        ),
        ({"type": "action", "action": "z99"}, None),  # an illegal move is public as it is
        (Endless(), None),  # so is a line over the limit (its size, not its text)
    ],
)
def test_the_public_reason_says_what_happened_without_the_bots_details(reply, public):
    result = Game(black=after(3, reply)).play()
    assert result.public_reason == (public if public is not None else result.reason)
    assert result.public_reason.startswith("black ")
    for detail in ("exit code", "signal", "memory", "surrender", "JSON", "boom"):
        assert detail not in result.public_reason
