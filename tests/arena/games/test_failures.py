"""Failure statistics of bot versions: the counts and rates, the public reasons, think times,
the owner's warning, the failing-version notice (once) and the ladder's pause."""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.core import mail
from django.core.exceptions import PermissionDenied
from django.test import Client
from django.utils import timezone

from arena.bots import services as bots
from arena.bots.models import Bot, BotVersion
from arena.games import ladder, reliability
from arena.games import services as games
from arena.games.models import FailureAlert, Match, MatchRecord
from arena.jobs import claims
from arena.notifications import services as notifications
from arena.notifications.models import Delivery, Notification
from tests.arena.conftest import make_version, verified_address
from tests.arena.games.test_matches import fake_result

SECRET = "Traceback: File /srv/arena/secret/bot.py, line 3: KeyError: 'hunter2'"


def played(
    white: Any,
    black: Any,
    *,
    variant: str = "yangsh",
    fault: str = "",
    termination: str = "rows",
    reason: str = "white made three rows",
    detail: str = "",
    moves: list[dict[str, Any]] | None = None,
    status: str = Match.Status.FINISHED,
) -> Match:
    """A finished match with its record (and the moves' think times)."""
    result = {"white": "black", "black": "white"}.get(fault, "white")
    m = Match.objects.create(
        variant=variant,
        kind=Match.Kind.LADDER,
        status=status,
        white=white,
        black=black,
        time_control="5+0.1",
        result=result if status == Match.Status.FINISHED else "",
        termination=termination,
        fault=fault,
        reason=reason,
        detail=detail,
        finished_at=timezone.now() if status != Match.Status.RUNNING else None,
    )
    MatchRecord.objects.create(
        match=m, record="", record_short="", transcript={"moves": moves or []}
    )
    return m


def crash(white: Any, black: Any, side: str = "white", **kw: Any) -> Match:
    label = "white" if side == "white" else "black"
    return played(
        white,
        black,
        fault=side,
        termination="crash",
        # As services.finish stores it: the public words, and the full reason for the owner.
        reason=f"{label} exited at ply 7",
        detail=f"{label} exited at ply 7 (exit code 1); stderr: {SECRET}",
        **kw,
    )


@pytest.fixture
def pair(user: Any, other_user: Any) -> tuple[Any, Any]:
    return make_version(user, "crasher"), make_version(other_user, "steady")


# ----------------------------------------------------------------------------- reasons


@pytest.mark.parametrize(
    ("termination", "reason", "group"),
    [
        ("crash", "a v1 exited during start-up (killed by signal 11 (SIGSEGV)); stderr: x", None),
        ("crash", "a v1 exited at ply 31 (exit code 2); stderr: /home/me/bot.py", None),
        ("crash", "a v1 closed its output at ply 4; stderr: boom", "closed its output"),
        ("no-start", "a v1 sent no ready within 10 s; stderr: /x", "sent no ready in time"),
        ("time", "a ran out of time (answered only after 5.2 s with ...)", None),
        (
            "illegal-move",
            "a v1 played 'zz9', which is not legal here (ply 3, a v1 must place a ring)",
            "played an illegal action (it had to place a ring)",
        ),
        (
            "protocol-error",
            "a v1 broke the protocol at ply 8: the line is not JSON (Expecting value): 'pw=1'",
            "wrote a line that is not JSON",
        ),
        (
            "protocol-error",
            "a v1 broke the protocol at ply 2: wrote '/etc/passwd' to standard output without "
            "being asked",
            "wrote to its output without being asked",
        ),
        (
            "sandbox-violation",
            "a v1 was stopped by the sandbox: process limit of 256 processes and threads "
            "exceeded (processes)",
            "stopped by the sandbox: process limit",
        ),
    ],
)
def test_reasons_are_grouped_into_public_words(
    termination: str, reason: str, group: str | None
) -> None:
    text = reliability.reason_group(termination, reason)
    if group is not None:
        assert text == group
    for secret in ("/", "stderr", "pw=1", "zz9", "ply"):
        assert secret not in text, text


def test_exits_are_grouped_by_phase_and_exit_status() -> None:
    a = reliability.reason_group("crash", "x exited at ply 3 (exit code 1); stderr: a")
    b = reliability.reason_group("crash", "y exited at ply 90 (exit code 1); stderr: b")
    c = reliability.reason_group("crash", "y exited during start-up (exit code 1)")
    assert a == b == "exited during the game (exit code 1)"
    assert c == "exited during start-up (exit code 1)"


# ----------------------------------------------------------------------------- statistics


@pytest.mark.django_db
def test_counts_rates_and_reasons_per_variant(pair: tuple[Any, Any]) -> None:
    mine, other = pair
    crashes = [crash(mine, other) for _ in range(3)]
    crashes.append(crash(other, mine, side="black"))
    played(mine, other, fault="white", termination="time", reason="white ran out of time (no a")
    played(mine, other, fault="black", termination="crash", reason="the other one crashed")
    for _ in range(4):
        played(other, mine)
    played(mine, other, variant="blitz")
    played(mine, other, status=Match.Status.ABORTED, termination="aborted", reason="gave up")

    rows = {r.variant: r for r in reliability.version_failures(mine, private=True)}
    assert list(rows) == ["blitz", "yangsh"]  # the engine's order
    yangsh = rows["yangsh"]
    assert yangsh.games == 10  # the aborted game counts for nothing
    assert yangsh.failures == {"crash": 4, "time": 1}  # the opponent's crash is not its own
    assert yangsh.rate == pytest.approx(0.5)
    assert yangsh.failing
    top = yangsh.reasons[0]
    assert (top.kind, top.text, top.count) == ("crash", "exited during the game (exit code 1)", 4)
    assert top.matches == sorted((m.pk for m in crashes), reverse=True)[: reliability.EXAMPLES]
    assert yangsh.reasons[1].text == "ran out of time (no answer)"
    assert rows["blitz"].games == 1 and rows["blitz"].failed == 0
    assert not rows["blitz"].failing
    # The opponent's own statistics see its single failure.
    theirs = {r.variant: r for r in reliability.version_failures(other)}
    assert theirs["yangsh"].failures == {"crash": 1}
    # Others see the same counts, the reasons in the public words only (no exit code).
    public = {r.variant: r for r in reliability.version_failures(mine)}["yangsh"]
    assert public.failures == yangsh.failures
    assert [(g.text, g.count, g.example) for g in public.reasons[:1]] == [("crashed", 4, "")]


@pytest.mark.django_db
def test_think_time_percentiles_count_only_the_versions_own_answers(
    pair: tuple[Any, Any],
) -> None:
    mine, other = pair
    moves = []
    for i in range(1, 101):
        moves.append({"color": "white", "action": "x", "ms": float(i)})
        moves.append({"color": "black", "action": "y", "ms": 5000.0})
    moves.append({"color": "white", "action": "pass", "forced": True})
    played(mine, other, moves=moves)
    (row,) = reliability.version_failures(mine)
    t = row.think
    assert t is not None
    assert (t.moves, t.games, t.p50, t.p90, t.p99, t.max) == (100, 1, 50.0, 90.0, 99.0, 100.0)
    (row,) = reliability.version_failures(other)
    assert row.think is not None and row.think.max == 5000.0


@pytest.mark.django_db
def test_a_version_is_failing_from_the_threshold_over_enough_games(
    pair: tuple[Any, Any], settings: Any
) -> None:
    settings.FAILING_RATE = 0.2
    settings.FAILING_MIN_GAMES = 10
    mine, other = pair
    crash(mine, other)
    for _ in range(8):
        played(mine, other)
    (row,) = reliability.version_failures(mine)
    assert (row.games, row.failed, row.failing) == (9, 1, False)  # too few games
    played(mine, other)
    (row,) = reliability.version_failures(mine)
    assert (row.games, row.failed, row.failing) == (10, 1, False)  # 10% < 20%
    crash(mine, other)
    (row,) = reliability.version_failures(mine)
    assert (row.games, row.failed, row.failing) == (11, 2, False)  # 18%
    crash(mine, other)
    (row,) = reliability.version_failures(mine)
    assert (row.games, row.failed, row.failing) == (12, 3, True)  # 25%


# ----------------------------------------------------------------------------- the watch


@pytest.mark.django_db
def test_the_owner_is_told_once_when_a_version_starts_failing(
    pair: tuple[Any, Any], settings: Any, user: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.FAILING_MIN_GAMES = 4
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    verified_address(user, "alice@example.org")
    mine, other = pair
    for _ in range(3):
        crash(mine, other)
    assert reliability.watch("yangsh", mine.pk, other.pk, "white") == []  # 3 games: too few
    crash(mine, other)
    assert reliability.watch("yangsh", mine.pk, other.pk, "white") == [mine.pk]
    assert reliability.watch("yangsh", mine.pk, other.pk, "white") == []  # once
    alert = FailureAlert.objects.get(version=mine, variant="yangsh")
    assert (alert.games, alert.failures, alert.failing) == (4, 4, True)
    (n,) = Notification.objects.filter(user=user)
    assert n.event == "version_failing"
    assert n.url.endswith("/bots/crasher/#v1")
    assert n.data["variant"] == "yangsh" and n.data["failures"] == 4
    assert notifications.fan_out(n.pk) == 1  # the scheduler's task
    (d,) = n.deliveries.all()
    assert d.channel == Delivery.Channel.EMAIL and d.status == Delivery.Status.PENDING


@pytest.mark.django_db
def test_finishing_a_match_runs_the_watch(pair: tuple[Any, Any], settings: Any, user: Any) -> None:
    settings.FAILING_MIN_GAMES = 2
    mine, other = pair
    crash(mine, other, variant="yinsh")
    m = Match.objects.create(
        variant="yinsh",
        kind=Match.Kind.LADDER,
        status=Match.Status.QUEUED,
        white=other,
        black=mine,
        time_control="5+0.1",
    )
    # fake_result("white") is a game black lost on time.
    assert games.finish(m.pk, claims.claim(Match, m.pk), fake_result("yinsh", "white"))
    alert = FailureAlert.objects.get(version=mine, variant="yinsh")
    assert (alert.games, alert.failures) == (2, 2)
    assert alert.notified_at is not None
    assert not FailureAlert.objects.filter(version=other).exists()


@pytest.mark.django_db
def test_a_flagged_version_that_does_better_is_no_longer_failing(
    pair: tuple[Any, Any], settings: Any
) -> None:
    settings.FAILING_MIN_GAMES = 2
    mine, other = pair
    crash(mine, other)
    crash(mine, other)
    reliability.watch("yangsh", mine.pk, other.pk, "white")
    for _ in range(10):
        played(mine, other)
    reliability.watch("yangsh", mine.pk, other.pk, "")  # a game without a fault
    alert = FailureAlert.objects.get(version=mine)
    assert (alert.games, alert.failures, alert.failing) == (12, 2, False)


@pytest.mark.django_db
def test_the_pause_setting_keeps_a_failing_version_off_that_variants_ladder(
    user: Any, other_user: Any, settings: Any
) -> None:
    settings.FAILING_MIN_GAMES = 2
    bad = make_version(user, "crasher")
    good = [make_version(other_user, f"good-{i}") for i in range(2)]
    crash(bad, good[0])
    crash(bad, good[1])
    reliability.watch("yangsh", bad.pk, good[1].pk, "white")

    def players(variant: str) -> set[int]:
        Match.objects.filter(kind=Match.Kind.LADDER, status=Match.Status.QUEUED).delete()
        made = ladder.schedule_variant(variant, rng=random.Random(1), depth=12)
        return {m.white_id for m in made} | {m.black_id for m in made}

    settings.PAUSE_FAILING_VERSIONS = False
    assert bad.pk in players("yangsh")
    settings.PAUSE_FAILING_VERSIONS = True
    assert players("yangsh") == {g.pk for g in good}
    assert bad.pk in players("yinsh")  # it fails in Yangsh only
    (row,) = reliability.version_failures(bad)
    assert row.paused


# ----------------------------------------------------------------------------- the page


@pytest.mark.django_db
def test_the_bot_page_shows_rates_to_all_and_details_and_warning_to_the_owner(
    pair: tuple[Any, Any], user: Any, other_user: Any, settings: Any, django_user_model: Any
) -> None:
    settings.FAILING_MIN_GAMES = 4
    mine, other = pair
    crashed = [crash(mine, other) for _ in range(4)]

    visitor = Client().get("/bots/crasher/").content.decode()
    assert "Failures and think times" in visitor
    assert "crashed: 4\u00d7" in visitor and "exit code" not in visitor
    assert f"/matches/{crashed[-1].pk}/" in visitor
    assert "hunter2" not in visitor and "/srv/arena" not in visitor
    assert "Failing often" not in visitor

    stranger = Client()
    stranger.force_login(other_user)
    page = stranger.get("/bots/crasher/").content.decode()
    assert "hunter2" not in page and "Failing often" not in page

    owner = Client()
    owner.force_login(user)
    page = owner.get("/bots/crasher/").content.decode()
    assert "Failing often" in page
    assert "v1 lost 4 of its 4 Yangsh games" in page
    assert "hunter2" in page  # the full reason, to its owner only
    assert "exited during the game (exit code 1): 4\u00d7" in page

    operator = Client()
    operator.force_login(django_user_model.objects.create_user("olga", is_staff=True))
    page = operator.get("/bots/crasher/").content.decode()  # as the logs' rule says
    assert "exited during the game (exit code 1): 4\u00d7" in page and "hunter2" in page
    assert "paused from the ladder" not in page


@pytest.mark.django_db
def test_the_page_says_when_a_version_is_paused_from_the_ladder(
    pair: tuple[Any, Any], settings: Any
) -> None:
    settings.FAILING_MIN_GAMES = 2
    settings.PAUSE_FAILING_VERSIONS = True
    mine, other = pair
    crash(mine, other)
    crash(mine, other)
    reliability.watch("yangsh", mine.pk, other.pk, "white")
    page = Client().get("/bots/crasher/").content.decode()
    assert "v1 is paused from the ladder in Yangsh" in page
    assert "lost 2 of its 2 latest games there" in page


@pytest.mark.django_db
def test_the_api_gives_failure_statistics_with_examples_for_the_owner_only(
    pair: tuple[Any, Any], user: Any
) -> None:
    mine, other = pair
    crash(mine, other)
    played(mine, other)
    body = Client().get(f"/api/versions/{mine.pk}/").json()
    (row,) = body["failures"]
    assert row["variant"] == "yangsh" and row["games"] == 2
    assert row["failures"] == {
        "crash": 1,
        "time": 0,
        "illegal-move": 0,
        "protocol-error": 0,
        "sandbox-violation": 0,
    }
    assert row["rate"] == 0.5
    (reason,) = row["reasons"]
    assert reason["text"] == "crashed"
    assert reason["example"] is None
    owner = Client()
    owner.force_login(user)
    (row,) = owner.get(f"/api/versions/{mine.pk}/").json()["failures"]
    assert row["reasons"][0]["text"] == "exited during the game (exit code 1)"
    assert "hunter2" in row["reasons"][0]["example"]
    assert "failures" not in Client().get("/api/versions/").json()["results"][0]
    assert mail.outbox == []


# ----------------------------------------------------------------------------- fair by default


def ladder_players(variant: str = "yangsh") -> set[int]:
    """The versions a fresh round of the ladder pairs in ``variant``."""
    Match.objects.filter(kind=Match.Kind.LADDER, status=Match.Status.QUEUED).delete()
    made = ladder.schedule_variant(variant, rng=random.Random(1), depth=12)
    return {m.white_id for m in made} | {m.black_id for m in made}


@pytest.fixture
def paused(user: Any, other_user: Any, settings: Any) -> tuple[Any, list[Any]]:
    """alice's crasher, flagged after two crashes in Yangsh (the pause left at its default),
    and two good bots of bob's."""
    settings.FAILING_MIN_GAMES = 2
    bad = make_version(user, "crasher")
    good = [make_version(other_user, f"good-{i}") for i in range(2)]
    crash(bad, good[0])
    crash(bad, good[1])
    assert reliability.watch("yangsh", bad.pk, good[1].pk, "white") == [bad.pk]
    return bad, good


@pytest.mark.django_db
def test_a_failing_version_is_paused_from_the_ladder_by_default(
    paused: tuple[Any, list[Any]],
) -> None:
    bad, good = paused
    assert ladder_players("yangsh") == {g.pk for g in good}
    (row,) = reliability.version_failures(bad)
    assert row.failing and row.paused


@pytest.mark.django_db
def test_the_verdict_counts_the_latest_games_only(pair: tuple[Any, Any], settings: Any) -> None:
    settings.FAILING_MIN_GAMES = 10
    settings.FAILING_RATE = 0.2
    mine, other = pair
    for _ in range(20):
        crash(mine, other)
    assert reliability.watch("yangsh", mine.pk, other.pk, "white") == [mine.pk]
    window = reliability.recent_window()
    for _ in range(window - 1):
        played(mine, other)
    # The latest window holds one crash still (2%); over all games it is 20 of 69 (29%).
    reliability.watch("yangsh", mine.pk, other.pk, "")
    alert = FailureAlert.objects.get(version=mine)
    assert (alert.games, alert.failures, alert.failing) == (window, 1, False)
    (row,) = reliability.version_failures(mine)
    assert (row.games, row.failed) == (20 + window - 1, 20)  # the table: every game
    assert (row.recent_games, row.recent_failed, row.failing, row.paused) == (
        window,
        1,
        False,
        False,
    )
    assert mine.pk in ladder_players("yangsh")


@pytest.mark.django_db
def test_resuming_puts_a_version_back_and_it_is_paused_again_after_more_failures(
    paused: tuple[Any, list[Any]], user: Any
) -> None:
    bad, good = paused
    assert reliability.resume(user, bad) == ["yangsh"]
    assert bad.pk in ladder_players("yangsh")
    (row,) = reliability.version_failures(bad)
    assert (row.recent_games, row.failing, row.paused) == (0, False, False)
    # Its old crashes are behind it: one new crash is too few games to pause it again...
    crash(bad, good[0])
    assert reliability.watch("yangsh", bad.pk, good[0].pk, "white") == []
    assert FailureAlert.objects.get(version=bad).games == 1
    assert bad.pk in ladder_players("yangsh")
    # ...a second one pauses it, and its owner is told again.
    crash(bad, good[1])
    assert reliability.watch("yangsh", bad.pk, good[1].pk, "white") == [bad.pk]
    assert bad.pk not in ladder_players("yangsh")
    assert Notification.objects.filter(user=user, event="version_failing").count() == 2


@pytest.mark.django_db
def test_only_the_owner_resumes_and_only_a_paused_version(
    paused: tuple[Any, list[Any]], user: Any, other_user: Any
) -> None:
    bad, _ = paused
    with pytest.raises(PermissionDenied):
        reliability.resume(other_user, bad)
    with pytest.raises(reliability.ResumeError, match="fine v1 is not paused"):
        reliability.resume(user, make_version(user, "fine"))
    assert FailureAlert.objects.get(version=bad).failing  # nothing changed
    reliability.resume(user, bad)
    with pytest.raises(reliability.ResumeError, match="is not paused from the ladder"):
        reliability.resume(user, bad)


@pytest.mark.django_db
def test_the_notice_says_the_commonest_reason_and_that_the_version_is_paused(
    paused: tuple[Any, list[Any]], user: Any
) -> None:
    (n,) = Notification.objects.filter(user=user, event="version_failing")
    assert n.subject == "crasher v1 fails often in Yangsh and is paused"
    assert "The commonest reason: exited during the game (exit code 1) (2\u00d7)." in n.text
    assert "It is paused from the ladder in this variant" in n.text
    assert "resume it on its page" in n.text
    assert "hunter2" not in n.text  # never the bot's own words
    assert n.data["paused"] is True
    assert n.data["reason"] == "exited during the game (exit code 1)"


@pytest.mark.django_db
def test_the_owner_resumes_a_paused_version_from_its_page(
    paused: tuple[Any, list[Any]], user: Any, other_user: Any
) -> None:
    bad, _ = paused
    owner = Client()
    owner.force_login(user)
    page = owner.get("/bots/crasher/").content.decode()
    assert "v1 is paused from the ladder in Yangsh" in page
    assert "Resume v1 on the ladder" in page
    stranger = Client()
    stranger.force_login(other_user)
    assert "Resume v1" not in stranger.get("/bots/crasher/").content.decode()
    assert stranger.post("/bots/crasher/v1/resume/").status_code == 403
    assert reliability.paused_variants(bad.pk) == {"yangsh"}
    r = owner.post("/bots/crasher/v1/resume/", follow=True)
    assert "crasher v1 plays on the ladder again (Yangsh)." in r.content.decode()
    assert reliability.paused_variants(bad.pk) == set()
    page = owner.get("/bots/crasher/").content.decode()
    assert "paused from the ladder" not in page and "Resume v1" not in page
    # Again: nothing to resume, said so.
    r = owner.post("/bots/crasher/v1/resume/", follow=True)
    assert "crasher v1 is not paused from the ladder" in r.content.decode()


@pytest.mark.django_db
def test_the_api_shows_the_pause_and_resumes_for_the_owner_only(
    paused: tuple[Any, list[Any]], user: Any, other_user: Any
) -> None:
    bad, _ = paused
    body = Client().get(f"/api/versions/{bad.pk}/").json()
    assert body["paused"] == ["yangsh"]
    (row,) = body["failures"]
    assert (row["paused"], row["failing"], row["recent_games"], row["recent_failures"]) == (
        True,
        True,
        2,
        2,
    )
    url = f"/api/versions/{bad.pk}/resume/"
    owner, stranger = Client(), Client()
    owner.force_login(user)
    stranger.force_login(other_user)
    assert Client().post(url).status_code == 401
    assert stranger.post(url).status_code == 403
    assert reliability.paused_variants(bad.pk) == {"yangsh"}
    r = owner.post(url)
    assert r.status_code == 200, r.content
    assert r.json()["paused"] == [] and r.json()["failures"][0]["paused"] is False
    r = owner.post(url)
    assert r.status_code == 409
    assert r.json()["detail"] == "crasher v1 is not paused from the ladder"


@pytest.mark.django_db
def test_a_withdrawn_bot_shows_no_warning_and_no_pause(
    paused: tuple[Any, list[Any]], user: Any
) -> None:
    bad, _ = paused
    owner = Client()
    owner.force_login(user)
    assert "Failing often" in owner.get("/bots/crasher/").content.decode()
    assert bots.delete_bot(user, Bot.objects.get(name="crasher")) == "withdrawn"
    page = owner.get("/bots/crasher/").content.decode()
    assert "Failing often" not in page and "paused from the ladder" not in page
    assert "Failures and think times" in page  # its record stays
    (row,) = reliability.version_failures(BotVersion.objects.get(pk=bad.pk))
    assert row.failing and not row.paused
