"""The analysis board (:mod:`arena.analysis.services`): requests checked before anything is
queued, answered with the real referee and bots in the sandbox (the built-in search bot, an
opted-in bot, a bot that times out), the asker's own answers only, no standard error, the
throttle, and the deadline and recovery that keep a request from waiting forever."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.utils import timezone

import engine
from arena.analysis import services as analysis
from arena.analysis.models import Analysis
from arena.bots.models import Bot
from arena.bots.services import create_remote_bot
from arena.core.throttles import Throttled
from arena.jobs import claims
from arena.referee.errors import InfrastructureError
from arena.referee.sandbox import Sandbox, SandboxUnavailable
from tests.arena.conftest import BOTS, QUEUE, TEST_BOTS, celery_worker, make_version, wait_for

S = Analysis.Status
#: Every ring placed, then one ring moved: White to move.
HISTORY = ["e5", "f6", "d4", "g7", "c3", "h8", "e7", "f4", "d6", "g5", "e5-e6"]
DIARY = "DIARY-MARKER-5e2b"


@pytest.fixture
def search(system_user: Any) -> Any:
    """The built-in search bot, active."""
    return make_version(system_user, "search", folder=BOTS / "search", trusted=True)


def opted_in(owner: Any, name: str, folder: Any) -> Any:
    version = make_version(owner, name, folder=folder)
    version.bot.analysis = True
    version.bot.save(update_fields=["analysis"])
    return version


def legal(history: list[str]) -> set[str]:
    state = engine.State("yinsh")
    for token in history:
        state.play(token)
    return {str(a) for a in state.legal_actions()}


@pytest.mark.django_db
def test_search_and_an_opted_in_bot_answer_with_their_actions_and_info(
    user: Any, other_user: Any, search: Any, settings: Any
) -> None:
    diary = opted_in(other_user, "diary", TEST_BOTS / "honest" / "diary")
    asked = analysis.ask(user, "yinsh", " ".join(HISTORY), ["search", "diary"])
    assert [a.version for a in asked] == [search, diary]
    assert all(a.status == S.QUEUED for a in asked)
    assert [analysis.run(a.pk) for a in asked] == [S.ANSWERED, S.ANSWERED]
    found = analysis.answers(user, [a.pk for a in asked])
    shown = [analysis.answer_json(a) for a in found]
    assert [s["bot"] for s in shown] == ["search", "diary"]
    for s in shown:
        assert s["done"] and s["action"] in legal(HISTORY) and s["ply"] == len(HISTORY)
    assert "depth" in shown[0]["info"] and "depth" in shown[0]["info_text"]
    # The opted-in bot's info reaches the asker (without the server's folders); its standard
    # error never does.
    assert shown[1]["info"]["note"] == DIARY
    text = json.dumps(shown)
    assert str(settings.BOT_CACHE_DIR) not in text
    assert "starting in" not in text and "stderr" not in text


@pytest.mark.django_db
def test_a_bot_that_times_out_shows_a_timeout(
    user: Any, other_user: Any, search: Any, settings: Any
) -> None:
    settings.ANALYSIS_MOVE_MS = 1000
    opted_in(other_user, "slow", TEST_BOTS / "protocol" / "slow")
    (asked,) = analysis.ask(user, "yinsh", HISTORY, ["slow"])
    assert analysis.run(asked.pk) == S.FAILED
    asked.refresh_from_db()
    assert asked.termination == "time" and asked.action == ""
    assert asked.reason.startswith("slow v1 ran out of time (no answer after")


@pytest.mark.django_db
def test_a_bot_that_answers_an_illegal_action_shows_it(
    user: Any, other_user: Any, search: Any
) -> None:
    opted_in(other_user, "illegal", TEST_BOTS / "protocol" / "illegal_move")
    (asked,) = analysis.ask(user, "yinsh", [], ["illegal"])
    assert analysis.run(asked.pk) == S.FAILED
    asked.refresh_from_db()
    assert asked.termination == "illegal-move"
    assert "illegal v1 played 'a2-a5', which is not legal" in asked.reason


@pytest.mark.django_db
def test_a_bot_that_resigns_answers_that_it_resigns(
    user: Any, other_user: Any, search: Any
) -> None:
    opted_in(other_user, "resigns", TEST_BOTS / "honest" / "resigns")
    (asked,) = analysis.ask(user, "yinsh", HISTORY, ["resigns"])
    assert analysis.run(asked.pk) == S.ANSWERED
    (found,) = analysis.answers(user, [asked.pk])
    shown = analysis.answer_json(found)
    assert shown["action"] == "resign" and shown["reason"] == "resigns in this position"
    assert shown["termination"] == "" and shown["info"] == {"eval": -100}
    assert shown["think_ms"] is not None


@pytest.mark.django_db
def test_bad_requests_queue_nothing(user: Any, other_user: Any, search: Any) -> None:
    make_version(other_user, "private")  # not opted in
    black_only = opted_in(other_user, "blitzer", BOTS / "random")
    black_only.variants = "blitz"
    black_only.save(update_fields=["variants"])
    cases = [
        (dict(variant="chess", history=[], bots=["search"]), "variant", "no variant 'chess'"),
        (dict(variant="yinsh", history=["e5", "e5"], bots=["search"]), "history", "action 2"),
        (dict(variant="yinsh", history=["zz99"], bots=["search"]), "history", "action 1"),
        (dict(variant="yinsh", history=[], bots=[]), "bots", "at least one bot"),
        (dict(variant="yinsh", history=[], bots=["private"]), "bots", "'private' cannot be"),
        (dict(variant="yinsh", history=[], bots=["blitzer"]), "bots", "'blitzer' cannot be"),
        (dict(variant="yinsh", history=[], bots=["nobody"]), "bots", "'nobody' cannot be"),
        (dict(variant="yinsh", history=[], bots=list("abcdefgh")), "bots", "at most 4"),
    ]
    for kwargs, field, message in cases:
        with pytest.raises(analysis.AnalysisError, match=message) as e:
            analysis.ask(user, **kwargs)
        assert e.value.field == field and e.value.status == 400
    with pytest.raises(PermissionDenied):
        analysis.ask(AnonymousUser(), "yinsh", [], ["search"])
    assert not Analysis.objects.exists()


@pytest.mark.django_db
def test_a_finished_game_has_nothing_to_ask(user: Any, search: Any) -> None:
    state = engine.State("blitz")
    history: list[str] = []
    while not state.is_over():
        actions = state.legal_actions()
        action = actions[(len(history) * 7) % len(actions)]
        state.play(str(action))
        history.append(str(action))
    with pytest.raises(analysis.AnalysisError, match="the game is over"):
        analysis.ask(user, "blitz", history, ["search"])
    assert not Analysis.objects.exists()


@pytest.mark.django_db
def test_each_user_reads_only_their_own_answers(user: Any, other_user: Any, search: Any) -> None:
    (mine,) = analysis.ask(user, "yinsh", [], ["search"])
    assert analysis.answers(other_user, [mine.pk]) == []
    assert analysis.answers(user, [mine.pk]) == [mine]
    with pytest.raises(PermissionDenied):
        analysis.answers(AnonymousUser(), [mine.pk])


@pytest.mark.django_db
def test_requests_are_throttled_per_user(
    user: Any, other_user: Any, search: Any, settings: Any
) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "analysis": "2/minute"}
    analysis.ask(user, "yinsh", [], ["search"])
    analysis.ask(user, "yinsh", ["e5"], ["search"])
    with pytest.raises(Throttled, match="too many analysis requests: at most 2 per minute") as e:
        analysis.ask(user, "yinsh", [], ["search"])
    assert e.value.status == 429
    assert Analysis.objects.count() == 2
    analysis.ask(other_user, "yinsh", [], ["search"])  # another user's count is their own


@pytest.mark.django_db
def test_only_search_and_opted_in_bots_are_available(
    user: Any, other_user: Any, search: Any
) -> None:
    make_version(other_user, "private")
    opted_in(other_user, "shared", BOTS / "greedy")
    # A remote bot has nothing the sandbox could run: it never answers here, opted in or not.
    create_remote_bot(other_user, "faraway", variants=["yinsh"])
    Bot.objects.filter(name="faraway").update(analysis=True)
    assert [v.bot.name for v in analysis.available("yinsh")] == ["search", "shared"]


@pytest.mark.django_db
def test_a_request_no_worker_answers_in_time_expires(user: Any, search: Any, settings: Any) -> None:
    (asked,) = analysis.ask(user, "yinsh", [], ["search"])
    Analysis.objects.filter(pk=asked.pk).update(
        created_at=timezone.now() - timedelta(seconds=settings.ANALYSIS_DEADLINE_S + 1)
    )
    (read,) = analysis.answers(user, [asked.pk])
    assert read.status == S.EXPIRED and "the arena is busy" in read.reason
    assert analysis.run(asked.pk) == "not queued"  # a late worker leaves it alone


@pytest.mark.django_db
def test_the_machine_failing_gives_the_request_back_then_aborts_it(
    user: Any, search: Any, monkeypatch: Any, settings: Any
) -> None:
    settings.MATCH_MAX_ATTEMPTS = 2
    (asked,) = analysis.ask(user, "yinsh", [], ["search"])

    def launch(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise SandboxUnavailable("the sandbox's state folder cannot be reached")

    monkeypatch.setattr(Sandbox, "launch", launch)
    with pytest.raises(InfrastructureError):
        analysis.run(asked.pk)
    asked.refresh_from_db()
    assert asked.status == S.QUEUED and asked.attempts == 1
    with pytest.raises(InfrastructureError):
        analysis.run(asked.pk)
    asked.refresh_from_db()
    assert asked.status == S.ABORTED and "the arena could not run the bot" in asked.reason
    assert asked.termination == ""  # never the bot's fault


@pytest.mark.django_db
def test_the_sweeper_requeues_a_request_whose_worker_died(
    user: Any, search: Any, django_capture_on_commit_callbacks: Any
) -> None:
    (asked,) = analysis.ask(user, "yinsh", [], ["search"])
    Analysis.objects.filter(pk=asked.pk).update(
        status=S.RUNNING, attempts=1, heartbeat_at=timezone.now() - timedelta(hours=1)
    )
    with django_capture_on_commit_callbacks() as sent:
        report = claims.sweep()
    assert report["analysis.analysis"].requeued == [asked.pk]
    assert Analysis.objects.get(pk=asked.pk).status == S.QUEUED and len(sent) == 1


@pytest.mark.django_db
def test_an_owner_keeps_the_latest_finished_requests(user: Any, search: Any, settings: Any) -> None:
    settings.ANALYSES_KEPT = 2
    for _ in range(3):
        (asked,) = analysis.ask(user, "yinsh", [], ["search"])
        Analysis.objects.filter(pk=asked.pk).update(status=S.ANSWERED)
    analysis.ask(user, "yinsh", [], ["search"])
    assert Analysis.objects.filter(status=S.ANSWERED).count() == 2
    assert Analysis.objects.filter(status=S.QUEUED).count() == 1


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_answers_for_search_an_opted_in_bot_and_a_bot_that_times_out(
    worker_env: dict[str, str], tmp_path: Path, user: Any, other_user: Any, search: Any
) -> None:
    opted_in(other_user, "diary", TEST_BOTS / "honest" / "diary")
    opted_in(other_user, "slow", TEST_BOTS / "protocol" / "slow")
    env = {**worker_env, "ARENA_ANALYSIS_MOVE_MS": "2000"}
    with celery_worker(env, tmp_path / "worker.log", [QUEUE]) as log:
        asked = analysis.ask(user, "yinsh", HISTORY, ["search", "diary", "slow"])
        ids = [a.pk for a in asked]
        wait_for(
            "the three answers",
            lambda: all(a.done for a in analysis.answers(user, ids)),
            log,
        )
        search_answer, diary_answer, slow_answer = analysis.answers(user, ids)
    assert search_answer.status == S.ANSWERED and search_answer.action in legal(HISTORY), log
    assert "depth" in search_answer.info
    assert diary_answer.status == S.ANSWERED and diary_answer.info["note"] == DIARY
    assert slow_answer.status == S.FAILED and slow_answer.termination == "time"
    assert slow_answer.reason.startswith("slow v1 ran out of time (no answer after 2.")
