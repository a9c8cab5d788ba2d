"""Trials (:mod:`arena.admission.trials`): an upload plays one game in the sandbox, with the real
referee and bots, and its owner reads it; nothing is rated, no version is made; bad requests
store nothing; the machine's failures are never the bot's."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.test import override_settings
from django.utils import timezone

import engine
from arena.admission import trials
from arena.admission.models import Trial
from arena.bots import store
from arena.bots.models import Bot, BotVersion
from arena.bots.unpack import UploadError
from arena.games.models import Match
from arena.jobs import claims
from arena.ratings.models import PairStats
from arena.referee.errors import InfrastructureError
from arena.referee.sandbox import Sandbox, SandboxUnavailable
from tests.arena.conftest import (
    BOTS,
    TEST_BOTS,
    make_version,
    packed,
    upload,
    zipped,
    zipped_folder,
)

T = Trial.Status
DIARY = "DIARY-MARKER-5e2b"


def try_bot(user: Any, folder: Path, **kwargs: Any) -> Trial:
    return trials.create(user, upload(packed(folder), f"{folder.name}.tar.gz"), **kwargs)


def nothing_published() -> bool:
    return not BotVersion.objects.exclude(bot__trusted=True).exists() and not Match.objects.exists()


@pytest.mark.django_db
def test_a_trial_plays_one_game_against_random_and_keeps_the_whole_game_for_its_owner(
    user: Any, anchor: Any, settings: Any
) -> None:
    trial = try_bot(user, TEST_BOTS / "honest" / "diary", colour="black")
    assert trial.status == T.QUEUED and trial.opponent == anchor
    assert store.exists(trial.sha256)
    assert trials.run(trial.pk) == T.PLAYED
    trial.refresh_from_db()
    assert trial.status == T.PLAYED and trial.finished_at is not None
    record = engine.Record.parse(trial.record)
    assert record.variant.name == "yinsh" and len(record.actions) > 0
    assert trial.result in ("white", "black", "draw") and trial.score in ("1", "0", "½")
    assert any(
        line.startswith("the game (YINSH, as black, against random v1)") for line in trial.report
    )
    # The bot's own log is kept: its stderr and its info; the opponent's is not; no server path.
    assert DIARY in trial.stderr_tail
    text = json.dumps(trial.transcript)
    assert DIARY in text
    assert "stderr_tail" not in trial.transcript["players"]["white"]
    assert str(settings.BOT_CACHE_DIR) not in text
    # Nothing rated, nothing listed.
    assert nothing_published() and not PairStats.objects.exists()


@pytest.mark.django_db
def test_a_trial_against_another_public_bot_in_another_variant(
    user: Any, other_user: Any, anchor: Any
) -> None:
    greedy = make_version(other_user, "greedy", folder=BOTS / "greedy")
    trial = try_bot(user, BOTS / "random", variant="blitz", opponent=greedy)
    assert trials.run(trial.pk) == T.PLAYED
    trial.refresh_from_db()
    assert engine.Record.parse(trial.record).variant.name == "blitz"
    assert trial.opponent_label == "greedy v1"


@pytest.mark.django_db
def test_a_crash_is_a_played_game_with_its_reason_and_stderr(user: Any, anchor: Any) -> None:
    trial = try_bot(user, TEST_BOTS / "protocol" / "exits_midgame")
    assert trials.run(trial.pk) == T.PLAYED
    trial.refresh_from_db()
    assert trial.fault == "white" and trial.result == "black" and trial.score == "0"
    assert "(trial) exited" in trial.reason and "exit code 3" in trial.reason
    assert "giving up after three actions" in trial.stderr_tail


@pytest.mark.django_db
def test_an_upload_that_cannot_be_unpacked_could_not_play(user: Any, anchor: Any) -> None:
    with pytest.raises(UploadError, match="not a zip archive"):
        trials.create(user, upload(b"not an archive at all", "bot.zip"))
    trial = trials.create(user, upload(zipped({"notes.txt": "no bot here"}), "bot.zip"))
    assert trials.run(trial.pk) == T.FAILED
    trial.refresh_from_db()
    assert trial.reason.startswith("the upload cannot be used") and "bot.toml" in trial.reason
    assert not trial.record


@pytest.mark.django_db
def test_a_bot_that_does_not_play_the_variant_could_not_play(user: Any, anchor: Any) -> None:
    trial = try_bot(user, TEST_BOTS / "honest" / "yinsh_and_blitz", variant="yangsh")
    assert trials.run(trial.pk) == T.FAILED
    trial.refresh_from_db()
    assert "does not play Yangsh" in trial.reason


@pytest.mark.django_db
def test_a_failed_build_could_not_play_and_keeps_its_output(
    user: Any, anchor: Any, tmp_path: Path
) -> None:
    from tests.referee.test_build import make_bot

    folder = make_bot(tmp_path / "b", "echo 'main.c:3: error: expected ;' >&2; exit 1").folder
    trial = trials.create(user, upload(zipped_folder(folder), "b.zip"))
    assert trials.run(trial.pk) == T.FAILED
    trial.refresh_from_db()
    assert trial.reason.startswith("the build failed")
    assert "expected ;" in trial.stderr_tail


@pytest.mark.django_db
def test_bad_requests_store_nothing(user: Any, other_user: Any, anchor: Any) -> None:
    data = upload(packed(BOTS / "random"), "r.tar.gz")
    others = make_version(other_user, "theirs")
    retired = make_version(other_user, "old", status=BotVersion.Status.RETIRED)
    blitz_only = make_version(other_user, "blitzer", variants=["blitz"])
    refused: list[tuple[dict[str, Any], str]] = [
        ({"variant": "chess"}, "there is no variant 'chess'"),
        ({"colour": "green"}, "white or black"),
        ({"opponent": retired}, "cannot be the opponent"),
        ({"opponent": blitz_only}, "plays YINSH"),
    ]
    for kwargs, message in refused:
        with pytest.raises(trials.TrialError, match=message):
            trials.create(user, data, **kwargs)
    with pytest.raises(PermissionDenied):
        trials.create(user, data, bot=others.bot)
    with pytest.raises(PermissionDenied):
        trials.create(AnonymousUser(), data)
    with override_settings(BOT_UPLOAD_MAX_BYTES=10), pytest.raises(UploadError):
        trials.create(user, upload(b"x" * 100, "x.zip"))
    assert not Trial.objects.exists()


@pytest.mark.django_db
def test_no_opponent_ready_is_a_clear_refusal(user: Any, system_user: Any) -> None:
    with pytest.raises(trials.TrialError, match="no opponent ready") as e:
        trials.create(user, upload(packed(BOTS / "random"), "r.tar.gz"))
    assert e.value.status == 503 and not Trial.objects.exists()


@pytest.mark.django_db
def test_trials_are_throttled(user: Any, anchor: Any, settings: Any) -> None:
    from arena.core.throttles import Throttled

    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "trial": "1/hour"}
    try_bot(user, BOTS / "random")
    with pytest.raises(Throttled, match="too many trials"):
        try_bot(user, BOTS / "random")
    assert Trial.objects.count() == 1


@pytest.mark.django_db
def test_an_owner_keeps_the_latest_finished_trials(user: Any, anchor: Any, settings: Any) -> None:
    settings.TRIALS_KEPT = 2
    made = [try_bot(user, BOTS / "random") for _ in range(3)]
    Trial.objects.filter(pk__in=[t.pk for t in made]).update(status=T.PLAYED)
    latest = try_bot(user, BOTS / "random")
    assert set(Trial.objects.values_list("pk", flat=True)) == {made[1].pk, made[2].pk, latest.pk}


@pytest.mark.django_db
def test_the_machine_failing_gives_the_trial_back_then_aborts_it(
    user: Any, anchor: Any, monkeypatch: Any, settings: Any
) -> None:
    settings.MATCH_MAX_ATTEMPTS = 2
    trial = try_bot(user, BOTS / "random")

    def launch(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise SandboxUnavailable("the sandbox's state folder cannot be reached")

    monkeypatch.setattr(Sandbox, "launch", launch)
    with pytest.raises(InfrastructureError):
        trials.run(trial.pk)
    trial.refresh_from_db()
    assert trial.status == T.QUEUED and trial.attempts == 1 and not trial.reason
    with pytest.raises(InfrastructureError):
        trials.run(trial.pk)
    trial.refresh_from_db()
    assert trial.status == T.ABORTED and "could not play it" in trial.reason
    assert trials.run(trial.pk) == "not queued"


@pytest.mark.django_db
def test_the_sweeper_requeues_a_trial_whose_worker_died(
    user: Any, anchor: Any, django_capture_on_commit_callbacks: Any
) -> None:
    trial = try_bot(user, BOTS / "random")
    Trial.objects.filter(pk=trial.pk).update(
        status=T.RUNNING, attempts=1, heartbeat_at=timezone.now() - timedelta(hours=1)
    )
    with django_capture_on_commit_callbacks() as sent:
        report = claims.sweep()
    assert report["admission.trial"].requeued == [trial.pk]
    assert Trial.objects.get(pk=trial.pk).status == T.QUEUED and len(sent) == 1


@pytest.mark.django_db
def test_a_trial_is_published_as_a_new_bot_or_a_new_version(
    user: Any, other_user: Any, anchor: Any
) -> None:
    trial = try_bot(user, BOTS / "random")
    with pytest.raises(trials.TrialError, match="it is waiting for a worker") as e:
        trials.publish(user, trial, name="early")
    assert e.value.status == 409
    trials.run(trial.pk)
    trial.refresh_from_db()
    with pytest.raises(PermissionDenied):
        trials.publish(other_user, trial, name="stolen")
    version = trials.publish(user, trial, name="tried")
    assert version.bot.name == "tried" and version.bot.owner == user
    assert version.sha256 == trial.sha256 and version.status == BotVersion.Status.PENDING
    again = try_bot(user, BOTS / "greedy", bot=Bot.objects.get(name="tried"))
    trials.run(again.pk)
    again.refresh_from_db()
    v2 = trials.publish(user, again)
    assert v2.bot.name == "tried" and v2.number == 2


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_uploadbot_trial_is_played_by_a_real_worker_and_prints_the_game(
    worker: Any, user: Any
) -> None:
    import io

    from django.core.management import call_command

    from arena.bots import services as bot_services
    from tests.arena.conftest import DEADLINE_S

    make_version(bot_services.system_user(), "random", trusted=True)
    out = io.StringIO()
    call_command(
        "uploadbot",
        str(TEST_BOTS / "honest" / "diary"),
        owner=user.username,
        trial=True,
        colour="black",
        wait=DEADLINE_S,
        stdout=out,
    )
    text = out.getvalue()
    trial = Trial.objects.get()
    assert trial.status == T.PLAYED, worker()
    assert text.startswith(f"trial #{trial.pk} queued: YINSH, as black, against random v1")
    assert "the game (YINSH, as black, against random v1)" in text
    assert '[Variant "yinsh"]' in text and DIARY in text
    assert not Bot.objects.filter(owner=user).exists()  # nothing published
