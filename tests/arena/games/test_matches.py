"""Match transitions: claims, results, counts, the sweeper, and a whole match in-process."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.db import IntegrityError, connections, transaction
from django.utils import timezone

import engine
from arena.bots.unpack import StoredFileError
from arena.games import runner, services
from arena.games.models import Match, MatchRecord
from arena.jobs import claims, limits
from arena.jobs.policy import InfrastructureError
from arena.ratings.models import PairStats, RatingState
from arena.referee import GameResult
from arena.referee.outcomes import Failure
from arena.referee.sandbox import Sandbox, SandboxUnavailable, SlotsExhausted
from arena.referee.sandbox.cgroups import CgroupError
from tests.arena.conftest import TEST_BOTS, make_version

S = Match.Status


def queued_match(white: Any, black: Any, **fields: Any) -> Match:
    values = {
        "variant": "yinsh",
        "kind": Match.Kind.LADDER,
        "status": S.QUEUED,
        "white": white,
        "black": black,
        "time_control": "5+0.1",
        "queued_at": timezone.now(),
        "seed": 7,
    }
    values.update(fields)
    return Match.objects.create(**values)


def fake_result(variant: str = "yinsh", result: str = "white", *, aborted: bool = False) -> Any:
    """A GameResult as the referee returns it (a short game ended by a forfeit)."""
    state = engine.State(variant)
    for token in ("e3", "a5"):
        state.play(token)
    if aborted:
        outcome = engine.Outcome(engine.Result.DRAW, Failure.ABORTED)
        record = engine.Record.from_state(state, None, White="w v1", Black="b v1")
    else:
        outcome = engine.Outcome(engine.Result(result), Failure.TIME)
        record = engine.Record.from_state(state, outcome, White="w v1", Black="b v1")
    return GameResult(
        outcome=outcome,
        reason="black ran out of time" if not aborted else "aborted",
        fault=None if aborted else ("black" if result == "white" else "white"),
        record=record,
        transcript={"moves": [{"action": "e3"}, {"action": "a5"}], "seed": 7},
        duration_s=0.5,
    )


@pytest.fixture
def pair(user: Any) -> tuple[Any, Any]:
    return make_version(user, "white-bot"), make_version(user, "black-bot")


# ----------------------------------------------------------------------------- claims


@pytest.mark.django_db
def test_a_claim_takes_a_queued_match_once(pair: tuple[Any, Any]) -> None:
    m = queued_match(*pair)
    assert claims.claim(Match, m.pk, "w1") == 1
    assert claims.claim(Match, m.pk, "w2") is None
    m.refresh_from_db()
    assert m.status == S.RUNNING and m.worker == "w1" and m.attempts == 1


@pytest.mark.django_db
def test_pending_and_cancelled_matches_cannot_be_claimed(pair: tuple[Any, Any]) -> None:
    for st in (S.PENDING, S.CANCELLED, S.FINISHED):
        fields = {"result": "draw"} if st == S.FINISHED else {}
        m = queued_match(*pair, status=st, **fields)
        assert claims.claim(Match, m.pk) is None


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_claimers_get_the_match_exactly_once(pair: tuple[Any, Any]) -> None:
    m = queued_match(*pair)
    barrier = threading.Barrier(2)
    results: list[int | None] = []

    def claimer(name: str) -> None:
        try:
            barrier.wait()
            results.append(claims.claim(Match, m.pk, name))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=claimer, args=(f"w{i}",)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results, key=str) == [1, None]
    assert Match.objects.get(pk=m.pk).attempts == 1


# ----------------------------------------------------------------------------- results


@pytest.mark.django_db
def test_finishing_writes_result_record_and_counts_in_one_go(pair: tuple[Any, Any]) -> None:
    m = queued_match(*pair)
    attempt = claims.claim(Match, m.pk)
    assert services.finish(m.pk, attempt, fake_result(result="white"))
    m.refresh_from_db()
    assert (m.status, m.result, m.termination, m.fault) == (S.FINISHED, "white", "time", "black")
    assert m.plies == 2
    stats = PairStats.objects.get(variant="yinsh", white=pair[0], black=pair[1])
    assert (stats.wins, stats.draws, stats.losses) == (1, 0, 0)
    assert RatingState.objects.get(variant="yinsh").results == 1
    data = MatchRecord.objects.get(match=m)
    assert engine.Record.parse(data.record).outcome.result.value == "white"


@pytest.mark.django_db
def test_a_second_finish_is_refused_and_counts_nothing(pair: tuple[Any, Any]) -> None:
    m = queued_match(*pair)
    attempt = claims.claim(Match, m.pk)
    assert services.finish(m.pk, attempt, fake_result(result="white"))
    assert not services.finish(m.pk, attempt, fake_result(result="black"))
    stats = PairStats.objects.get(variant="yinsh", white=pair[0], black=pair[1])
    assert (stats.wins, stats.losses) == (1, 0)
    assert RatingState.objects.get(variant="yinsh").results == 1
    assert Match.objects.get(pk=m.pk).result == "white"


@pytest.mark.django_db
def test_a_finish_from_an_old_claim_is_refused(pair: tuple[Any, Any]) -> None:
    m = queued_match(*pair)
    old = claims.claim(Match, m.pk)
    Match.objects.filter(pk=m.pk).update(status=S.QUEUED)  # the sweeper re-queued it
    new = claims.claim(Match, m.pk)
    assert new == old + 1
    assert not services.finish(m.pk, old, fake_result())
    assert services.finish(m.pk, new, fake_result())
    assert PairStats.objects.get(white=pair[0]).wins == 1


@pytest.mark.django_db
def test_the_database_refuses_a_second_record_for_a_match(pair: tuple[Any, Any]) -> None:
    m = queued_match(*pair)
    services.finish(m.pk, claims.claim(Match, m.pk), fake_result())
    with pytest.raises(IntegrityError), transaction.atomic():
        MatchRecord.objects.create(match=m, record="x", record_short="x", transcript={})


@pytest.mark.django_db
def test_the_database_refuses_a_finished_match_without_a_result(pair: tuple[Any, Any]) -> None:
    m = queued_match(*pair)
    with pytest.raises(IntegrityError), transaction.atomic():
        Match.objects.filter(pk=m.pk).update(status=S.FINISHED)
    with pytest.raises(IntegrityError), transaction.atomic():
        Match.objects.filter(pk=m.pk).update(result="white")


@pytest.mark.django_db(transaction=True)
def test_concurrent_finishers_count_one_result(pair: tuple[Any, Any]) -> None:
    m = queued_match(*pair)
    attempt = claims.claim(Match, m.pk)
    barrier = threading.Barrier(3)
    outcomes: list[bool] = []

    def finisher() -> None:
        try:
            barrier.wait()
            outcomes.append(services.finish(m.pk, attempt, fake_result()))
        except Exception:  # a database that refused the loser counts as refused
            outcomes.append(False)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=finisher) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == [False, False, True]
    assert PairStats.objects.get(white=pair[0]).wins == 1
    assert RatingState.objects.get(variant="yinsh").results == 1


@pytest.mark.django_db
def test_an_aborted_game_is_stored_but_not_counted(pair: tuple[Any, Any]) -> None:
    m = queued_match(*pair)
    services.finish(m.pk, claims.claim(Match, m.pk), fake_result(aborted=True))
    m.refresh_from_db()
    assert m.status == S.ABORTED and m.result == ""
    assert not PairStats.objects.exists()


@pytest.mark.django_db
def test_a_version_against_itself_is_not_counted(user: Any) -> None:
    v = make_version(user, "solo")
    m = queued_match(v, v)
    services.finish(m.pk, claims.claim(Match, m.pk), fake_result())
    assert Match.objects.get(pk=m.pk).status == S.FINISHED
    assert not PairStats.objects.exists()


@pytest.mark.django_db
def test_an_unrated_match_is_not_counted(pair: tuple[Any, Any]) -> None:
    m = queued_match(*pair, rated=False)
    services.finish(m.pk, claims.claim(Match, m.pk), fake_result())
    assert not PairStats.objects.exists()


@pytest.mark.django_db
def test_release_requeues_then_aborts_after_the_last_attempt(
    pair: tuple[Any, Any], settings: Any
) -> None:
    settings.MATCH_MAX_ATTEMPTS = 2
    m = queued_match(*pair)
    assert claims.release(Match, m.pk, claims.claim(Match, m.pk), "sandbox broke")
    assert Match.objects.get(pk=m.pk).status == S.QUEUED
    assert not claims.release(Match, m.pk, claims.claim(Match, m.pk), "sandbox broke again")
    m.refresh_from_db()
    assert m.status == S.ABORTED and "gave up after 2 attempts" in m.reason


# ----------------------------------------------------------------------------- the sweeper


@pytest.mark.django_db
def test_the_sweeper_requeues_a_match_whose_worker_died(
    pair: tuple[Any, Any], django_capture_on_commit_callbacks: Any
) -> None:
    m = queued_match(*pair)
    claims.claim(Match, m.pk)
    fresh = queued_match(*pair)
    claims.claim(Match, fresh.pk)
    Match.objects.filter(pk=m.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))
    with django_capture_on_commit_callbacks() as sent:
        report = claims.sweep()
    assert report["games.match"].requeued == [m.pk]
    assert Match.objects.get(pk=m.pk).status == S.QUEUED
    assert Match.objects.get(pk=fresh.pk).status == S.RUNNING
    assert len(sent) == 1  # its task is sent again


@pytest.mark.django_db
def test_the_sweeper_aborts_a_match_after_too_many_attempts(
    pair: tuple[Any, Any], settings: Any
) -> None:
    settings.MATCH_MAX_ATTEMPTS = 1
    m = queued_match(*pair)
    claims.claim(Match, m.pk)
    Match.objects.filter(pk=m.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))
    report = claims.sweep()
    assert report["games.match"].given_up == [m.pk]
    m.refresh_from_db()
    assert m.status == S.ABORTED and "heartbeat lost" in m.reason
    assert not PairStats.objects.exists()


@pytest.mark.django_db
def test_the_sweeper_resends_a_queued_match_nobody_claimed(
    pair: tuple[Any, Any], django_capture_on_commit_callbacks: Any
) -> None:
    old = queued_match(*pair, queued_at=timezone.now() - timedelta(hours=2))
    queued_match(*pair)
    with django_capture_on_commit_callbacks() as sent:
        report = claims.sweep()
    assert report["games.match"].resent == [old.pk]
    assert len(sent) == 1
    # Resent once: the next sweep leaves it alone.
    assert claims.sweep()["games.match"].resent == []


@pytest.mark.django_db
def test_queued_work_whose_message_the_broker_lost_is_sent_again_soon(
    pair: tuple[Any, Any], settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """The broker holds fewer messages than there are queued matches (a Redis that restarted
    without its data): those waiting longer than BROKER_RESEND_AFTER are sent again, long
    before MATCH_RESEND_AFTER; once the broker holds them, nothing more is sent."""
    from arena.celery import app as celery_app

    settings.BROKER_RESEND_AFTER_S = 30
    settings.MATCH_RESEND_AFTER_S = 900
    with celery_app.connection_for_write() as conn:
        conn.default_channel.queue_purge(celery_app.conf.task_default_queue)
    assert claims.waiting_messages() == 0
    lost = queued_match(*pair, queued_at=timezone.now() - timedelta(seconds=45))
    recent = queued_match(*pair, queued_at=timezone.now() - timedelta(seconds=5))
    with django_capture_on_commit_callbacks(execute=True) as sent:
        assert claims.sweep()["games.match"].resent == [lost.pk]
    assert len(sent) == 1
    assert claims.waiting_messages() == 1
    # Both messages in the broker now (the recent one's was never lost): none is resent.
    with django_capture_on_commit_callbacks(execute=True):
        claims.dispatch(recent)
    assert claims.waiting_messages() == 2
    Match.objects.filter(pk__in=[lost.pk, recent.pk]).update(
        queued_at=timezone.now() - timedelta(seconds=45)
    )
    assert claims.sweep()["games.match"].resent == []
    with celery_app.connection_for_write() as conn:
        conn.default_channel.queue_purge(celery_app.conf.task_default_queue)


@pytest.mark.django_db
def test_a_restarted_worker_takes_back_only_the_matches_of_its_previous_life(
    pair: tuple[Any, Any], django_capture_on_commit_callbacks: Any
) -> None:
    started = timezone.now()
    mine, other, new = (queued_match(*pair) for _ in range(3))
    claims.claim(Match, mine.pk, "w1@host")
    claims.claim(Match, other.pk, "w2@host")
    Match.objects.filter(pk__in=[mine.pk, other.pk]).update(
        heartbeat_at=started - timedelta(seconds=1)  # fresh: the sweeper would wait
    )
    claims.claim(Match, new.pk, "w1@host")  # claimed by its new life, after it started
    Match.objects.filter(pk=new.pk).update(heartbeat_at=started + timedelta(seconds=1))
    with django_capture_on_commit_callbacks() as sent:
        assert claims.recover_worker("w1@host", started) == [("games.match", mine.pk)]
    assert len(sent) == 1
    assert Match.objects.get(pk=mine.pk).status == S.QUEUED
    assert Match.objects.get(pk=other.pk).status == S.RUNNING
    assert Match.objects.get(pk=new.pk).status == S.RUNNING
    assert claims.sweep()["games.match"].requeued == []


@pytest.mark.django_db
def test_a_late_result_after_the_sweeper_requeued_is_discarded(pair: tuple[Any, Any]) -> None:
    m = queued_match(*pair)
    attempt = claims.claim(Match, m.pk)
    Match.objects.filter(pk=m.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))
    claims.sweep()
    assert not claims.beat(Match, m.pk, attempt)  # the slow worker learns it lost the match
    assert not services.finish(m.pk, attempt, fake_result())
    assert not PairStats.objects.exists()


# ----------------------------------------------------------------------------- a whole match


@pytest.mark.django_db
def test_play_runs_a_real_game_and_stores_the_referees_record(pair: tuple[Any, Any]) -> None:
    m = queued_match(*pair, variant="blitz")
    assert services.play(m.pk, worker_name="test") == "finished"
    m.refresh_from_db()
    assert m.status == S.FINISHED and m.result in ("white", "black", "draw")
    data = MatchRecord.objects.get(match=m)
    record = engine.Record.parse(data.record)
    assert record.headers["White"] == "white-bot v1"
    assert record.headers["Event"].endswith("ladder")
    assert record.to_text(long=True) == data.record
    assert record.to_text(long=False) == data.record_short
    assert data.transcript["seed"] == 7
    assert services.play(m.pk) == "not queued"


@pytest.mark.django_db
def test_a_resigned_game_is_a_decisive_result_on_every_page_that_shows_it(user: Any) -> None:
    from django.test import Client

    from arena.games import reliability

    resigns = make_version(user, "resigns", folder=TEST_BOTS / "honest" / "resigns")
    other = make_version(user, "plays-on")
    m = queued_match(resigns, other)
    assert services.play(m.pk, worker_name="test") == "finished"
    m.refresh_from_db()
    assert (m.result, m.termination, m.fault) == ("black", "resignation", "")
    assert m.reason == "white resigned at ply 11" and m.detail == ""
    # Rated as any win, and no failure of the bot that resigned.
    stats = PairStats.objects.get(variant="yinsh", white=resigns, black=other)
    assert (stats.wins, stats.draws, stats.losses) == (0, 0, 1)
    assert RatingState.objects.get(variant="yinsh").results == 1
    (row,) = reliability.version_failures(resigns, private=True)
    assert row.games == 1 and sum(row.failures.values()) == 0
    data = MatchRecord.objects.get(match=m)
    for text in (data.record, data.record_short):
        assert engine.Record.parse(text).outcome == engine.Outcome(
            engine.Result.BLACK, engine.Termination.RESIGNATION
        )
    client = Client()
    page = client.get(f"/matches/{m.pk}/").content.decode()
    assert "<td>resignation</td>" in page and "white resigned at ply 11" in page
    assert "fault" not in page.split("<th>Termination</th>", 1)[1].split("</tr>", 1)[0]
    listed = client.get("/matches/?termination=resignation").content.decode()
    assert f'href="/matches/{m.pk}/"' in listed and "<td>resignation</td>" in listed
    record = client.get(f"/matches/{m.pk}/record.txt").content.decode()
    assert '[Result "0-1"]' in record and '[Termination "resignation"]' in record
    replay = client.get(f"/matches/{m.pk}/replay.json").json()
    assert (replay["result"], replay["score"], replay["termination"]) == (
        "black",
        "0-1",
        "resignation",
    )
    assert len(replay["frames"]) == 10
    live = client.get(f"/matches/{m.pk}/live.json").json()
    assert live["over"] and live["termination"] == "resignation" and live["score"] == "0-1"
    client.force_login(user)
    transcript = client.get(f"/matches/{m.pk}/transcript.json").json()
    assert transcript["moves"][-1]["action"] == "resign"
    assert transcript["termination"] == "resignation" and transcript["fault"] is None


@pytest.mark.django_db
def test_a_match_starts_from_its_opening_and_its_record_keeps_it(pair: tuple[Any, Any]) -> None:
    m = queued_match(*pair, variant="blitz", opening="e5 f6 g7 d4")
    assert services.play(m.pk, worker_name="test") == "finished"
    data = MatchRecord.objects.get(match=m)
    record = engine.Record.parse(data.record)
    assert [str(a) for a in record.actions[:4]] == ["e5", "f6", "g7", "d4"]
    assert record.headers["Opening"] == "e5 f6 g7 d4"
    assert data.transcript["opening"] == ["e5", "f6", "g7", "d4"]


@pytest.mark.django_db
def test_a_rerun_from_a_matchs_seed_and_opening_reproduces_the_game(pair: tuple[Any, Any]) -> None:
    # The random bot draws its actions from the game's seed: deterministic, like many bots.
    first = queued_match(*pair, seed=1234, opening="e5 f6 g7 d4")
    again = queued_match(*pair, seed=1234, opening="e5 f6 g7 d4")
    other = queued_match(*pair, seed=1234, opening="a2 b3 c4 d5")
    for m in (first, again, other):
        assert services.play(m.pk, worker_name="test") == "finished"

    def actions(m: Match) -> list[str]:
        record = engine.Record.parse(MatchRecord.objects.get(match=m).record)
        return [str(a) for a in record.actions]

    assert actions(first) == actions(again)
    assert actions(first) != actions(other)


@pytest.mark.django_db
def test_the_match_page_and_the_api_show_the_opening_and_the_seed(pair: tuple[Any, Any]) -> None:
    from django.test import Client
    from rest_framework.test import APIClient

    m = queued_match(*pair, seed=99, opening="e5 f6 g7 d4")
    page = Client().get(f"/matches/{m.pk}/").content.decode()
    assert "<code>e5 f6 g7 d4</code>" in page and "seed 99" in page
    body = APIClient().get(f"/api/matches/{m.pk}/").json()
    assert body["opening"] == ["e5", "f6", "g7", "d4"] and body["seed"] == 99
    bare = queued_match(*pair)
    assert "the empty board" in Client().get(f"/matches/{bare.pk}/").content.decode()
    assert APIClient().get(f"/api/matches/{bare.pk}/").json()["opening"] == []


def test_budgets_grow_with_the_time_control() -> None:
    small = limits.budget_seconds("1+0")
    big = limits.budget_seconds("60+1")
    assert small < big
    soft, hard = limits.time_limits("60+1")
    assert soft >= big and hard > soft


# ----------------------------------------------------------------------------- the machine fails


def _raise_on_launch(monkeypatch: Any, error: BaseException) -> None:
    """Every bot launch fails with ``error``, as a broken host would make it fail."""

    def launch(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise error

    monkeypatch.setattr(Sandbox, "launch", launch)


INFRASTRUCTURE_FAILURES = [
    SandboxUnavailable("bubblewrap is gone from /usr/bin/bwrap"),
    SlotsExhausted("all 64 bot slots are in use"),
    CgroupError("cannot write memory.limit_in_bytes"),
    StoredFileError("the stored upload is missing"),
    OSError(28, "No space left on device"),
]


@pytest.mark.django_db
@pytest.mark.parametrize("error", INFRASTRUCTURE_FAILURES, ids=lambda e: type(e).__name__)
def test_a_launch_that_the_machine_fails_releases_the_match_for_a_retry(
    pair: tuple[Any, Any], monkeypatch: Any, error: BaseException
) -> None:
    m = queued_match(*pair)
    _raise_on_launch(monkeypatch, error)
    with pytest.raises(InfrastructureError):
        services.play(m.pk, worker_name="test")
    m.refresh_from_db()
    assert m.status == S.QUEUED and m.attempts == 1 and m.result == ""
    assert m.reason.startswith("infrastructure failure")
    assert type(error).__name__ in m.reason or "No space left" in m.reason
    assert "/usr/bin" not in m.reason  # the site shows reasons: no server paths
    assert not MatchRecord.objects.exists() and not PairStats.objects.exists()


@pytest.mark.django_db
def test_a_match_the_machine_keeps_failing_is_aborted_and_not_counted(
    pair: tuple[Any, Any], monkeypatch: Any, settings: Any
) -> None:
    settings.MATCH_MAX_ATTEMPTS = 2
    m = queued_match(*pair)
    _raise_on_launch(monkeypatch, SlotsExhausted("all bot slots are in use"))
    for _ in range(2):
        with pytest.raises(InfrastructureError):
            services.play(m.pk)
    m.refresh_from_db()
    assert m.status == S.ABORTED and m.fault == "" and m.result == ""
    assert "gave up after 2 attempts" in m.reason and "SlotsExhausted" in m.reason
    assert not PairStats.objects.exists()


@pytest.mark.django_db
def test_a_match_over_its_time_budget_is_released_not_blamed(
    pair: tuple[Any, Any], monkeypatch: Any
) -> None:
    """The soft time limit means the machine was too slow (the clocks bound the bots): the
    match is played again, like any other failure of the machine."""
    m = queued_match(*pair)
    _raise_on_launch(monkeypatch, SoftTimeLimitExceeded())
    with pytest.raises(InfrastructureError):
        services.play(m.pk)
    m.refresh_from_db()
    assert m.status == S.QUEUED and "time budget" in m.reason and m.fault == ""


@pytest.mark.django_db
def test_an_unexpected_error_releases_the_match_instead_of_stranding_it(
    pair: tuple[Any, Any], monkeypatch: Any
) -> None:
    m = queued_match(*pair)
    _raise_on_launch(monkeypatch, KeyError("a defect of ours"))
    with pytest.raises(InfrastructureError):
        services.play(m.pk)
    m.refresh_from_db()
    assert m.status == S.QUEUED and "internal error (KeyError)" in m.reason


@pytest.mark.django_db
def test_a_tie_break_game_is_named_by_its_round_and_number(pair: tuple[Any, Any]) -> None:
    assert queued_match(*pair, round=3, tiebreak=2).round_label == "3.2"
    assert queued_match(*pair, round=3).round_label == "3"
    assert queued_match(*pair, round=0).round_label == "0"  # a duel's first pair
    assert queued_match(*pair).round_label == ""
    config = runner.game_config(
        variant="yinsh",
        white=runner.load_spec(pair[0]),
        black=runner.load_spec(pair[1]),
        white_label="w",
        black_label="b",
        time_control="5+0.1",
        seed=1,
        event="cup",
        round_="3.2",
    )
    assert ("Round", "3.2") in config.headers
    no_round = runner.game_config(
        variant="yinsh",
        white=runner.load_spec(pair[0]),
        black=runner.load_spec(pair[1]),
        white_label="w",
        black_label="b",
        time_control="5+0.1",
        seed=1,
        event="ladder",
    )
    assert "Round" not in dict(no_round.headers)
