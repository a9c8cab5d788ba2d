"""Tests and challenges: pairs from one opening with reversed colours, each counted once,
stopping at a verdict or a budget, cancelling, quotas and the rated-challenge agreement."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from arena.bots.models import Bot, BotVersion
from arena.core import throttles
from arena.duels import services as duels
from arena.duels.models import Duel, DuelPair
from arena.duels.signals import duel_finished
from arena.games import services as games
from arena.games.models import Match
from arena.jobs import claims
from arena.ratings.models import PairStats
from arena.referee import openings
from tests.arena.conftest import make_version, verified_address
from tests.arena.games.test_matches import fake_result

pytestmark = pytest.mark.django_db

S = Match.Status


@pytest.fixture
def mine(user: Any) -> tuple[BotVersion, BotVersion]:
    """alice's bot ``mybot``: v1 retired, v2 active."""
    old = make_version(user, "mybot", status=BotVersion.Status.RETIRED)
    new = make_version(user, "mybot")
    return new, old


@pytest.fixture
def theirs(other_user: Any) -> BotVersion:
    return make_version(other_user, "rival")


def play(match: Match, candidate_points: float, *, aborted: bool = False) -> None:
    """Play a queued match to the end with the candidate scoring these points in it."""
    duel = Duel.objects.get(pk=match.duel_id)
    candidate_white = match.white_id == duel.candidate_id
    if candidate_points == 0.5:
        result = "draw"
    elif (candidate_points == 1.0) == candidate_white:
        result = "white"
    else:
        result = "black"
    attempt = claims.claim(Match, match.pk)
    assert attempt is not None
    assert games.finish(match.pk, attempt, fake_result(match.variant, result, aborted=aborted))


def open_matches(duel: Duel) -> list[Match]:
    return list(duel.matches.filter(status__in=[S.QUEUED, S.RUNNING]).order_by("round", "pk"))


def play_pair(duel: Duel, first: float, second: float) -> None:
    """Play the first open pair: the candidate scores ``first`` as white, ``second`` as
    black."""
    m1, m2 = open_matches(duel)[:2]
    assert m1.round == m2.round
    play(m1, first)
    play(m2, second)


def start(user: Any, mine: tuple[BotVersion, BotVersion], **kw: Any) -> Duel:
    return duels.start_test(user, mine[0], mine[1], variant="yinsh", **kw)


# ----------------------------------------------------------------------------- pairing


def test_a_test_keeps_pairs_in_play_from_one_opening_with_colours_reversed(user, mine, settings):
    settings.DUEL_PARALLEL_PAIRS = 2
    duel = start(user, mine)
    assert duel.status == Duel.Status.RUNNING and duel.is_sprt and not duel.rated
    matches = list(duel.matches.order_by("round", "pk"))
    assert len(matches) == 4 and all(m.status == S.QUEUED for m in matches)
    assert all(m.kind == Match.Kind.TEST and not m.rated for m in matches)
    for number in (0, 1):
        a, b = [m for m in matches if m.round == number]
        assert (a.white, a.black) == (mine[0], mine[1])
        assert (b.white, b.black) == (mine[1], mine[0])
        expected = " ".join(openings.opening("yinsh", duel.seed + number))
        assert a.opening == b.opening == expected != ""
    assert matches[0].opening != matches[2].opening


def test_a_pair_counts_once_both_its_games_finished(user, mine):
    duel = start(user, mine)
    m1, m2 = open_matches(duel)[:2]
    play(m1, 1.0)
    duel.refresh_from_db()
    assert duel.pairs == 0 and duel.played == 0
    play(m2, 0.5)
    duel.refresh_from_db()
    assert duel.counts == (0, 0, 0, 1, 0)
    assert (duel.wins, duel.draws, duel.losses) == (1, 1, 0)
    assert duel.llr > 0
    assert DuelPair.objects.get(duel=duel, number=0).points == 1.5
    # The finished pair was replaced: two pairs are in play again.
    assert duels.pairs_in_play(duel) == 2 and duel.pairs_made == 3


def test_a_result_is_counted_once_however_often_its_closing_is_announced(user, mine):
    duel = start(user, mine)
    m1, m2 = open_matches(duel)[:2]
    play(m1, 1.0)
    play(m2, 1.0)
    duels.match_closed(m2.pk)
    duels.match_closed(m1.pk)
    duel.refresh_from_db()
    assert duel.counts == (0, 0, 0, 0, 1) and duel.played == 2


def test_a_pair_with_an_aborted_game_is_replaced_and_not_counted(user, mine):
    duel = start(user, mine)
    m1, m2 = open_matches(duel)[:2]
    play(m1, 1.0, aborted=True)
    m2.refresh_from_db()
    assert m2.status == S.CANCELLED
    duel.refresh_from_db()
    assert duel.pairs == 0 and duel.played == 0
    assert DuelPair.objects.get(duel=duel, number=0).status == DuelPair.Status.VOID
    assert duels.pairs_in_play(duel) == 2 and duel.pairs_made == 3
    # The new pair has a new opening.
    new = duel.matches.filter(round=2).first()
    assert new.opening == " ".join(openings.opening("yinsh", duel.seed + 2))


def test_a_test_stops_when_the_ratio_crosses_a_bound(user, mine):
    seen: list[int] = []

    def heard(sender: object, *, duel_id: int, **kw: object) -> None:
        seen.append(duel_id)

    duel_finished.connect(heard)
    try:
        duel = start(user, mine, elo0=0, elo1=200)
        for _ in range(20):
            duel.refresh_from_db()
            if duel.status != Duel.Status.RUNNING:
                break
            play_pair(duel, 1.0, 1.0)
    finally:
        duel_finished.disconnect(heard)
    assert duel.status == Duel.Status.FINISHED and duel.verdict == Duel.Verdict.H1
    assert duel.llr >= duel.bounds[1] and duel.pairs < 20
    assert seen == [duel.pk]
    # Games waiting when it stopped were cancelled; nothing is left to play.
    assert not duel.matches.filter(status__in=[S.PENDING, S.QUEUED, S.RUNNING]).exists()
    assert duel.matches.filter(status=S.CANCELLED).count() == 2


def test_a_weaker_candidate_is_stopped_with_h0(user, mine):
    duel = start(user, mine, elo0=0, elo1=200)
    for _ in range(20):
        duel.refresh_from_db()
        if duel.status != Duel.Status.RUNNING:
            break
        play_pair(duel, 0.0, 0.5)
    assert duel.verdict == Duel.Verdict.H0 and duel.llr <= duel.bounds[0]


def test_a_fixed_number_of_games_is_played_and_no_more(user, mine, settings):
    settings.DUEL_PARALLEL_PAIRS = 3
    duel = start(user, mine, games=4)
    assert duel.matches.count() == 4  # two pairs, though three may be in play
    play_pair(duel, 1.0, 0.0)
    play_pair(duel, 0.5, 0.5)
    duel.refresh_from_db()
    assert duel.status == Duel.Status.FINISHED and duel.verdict == ""
    assert duel.counts == (0, 0, 2, 0, 0) and duel.matches.count() == 4


def test_a_test_stops_without_verdict_when_its_budget_is_spent(user, mine):
    duel = start(user, mine, max_games=4)
    play_pair(duel, 1.0, 0.0)
    play_pair(duel, 0.0, 1.0)
    duel.refresh_from_db()
    assert duel.status == Duel.Status.FINISHED and duel.verdict == "" and duel.played == 4


def test_only_its_creator_cancels_a_test_and_waiting_games_are_cancelled(user, other_user, mine):
    duel = start(user, mine)
    play_pair(duel, 1.0, 1.0)
    with pytest.raises(PermissionDenied):
        duels.cancel(other_user, duel)
    assert duels.cancel(user, duel)
    duel.refresh_from_db()
    assert duel.status == Duel.Status.CANCELLED and duel.pairs == 1
    assert not duel.matches.filter(status__in=[S.PENDING, S.QUEUED, S.RUNNING]).exists()
    assert not duels.cancel(user, duel)  # already over


def test_a_game_finishing_after_a_cancel_is_not_counted(user, mine):
    duel = start(user, mine)
    m1 = open_matches(duel)[0]
    attempt = claims.claim(Match, m1.pk)
    duels.cancel(user, duel)
    assert not games.finish(m1.pk, attempt, fake_result())
    duel.refresh_from_db()
    assert duel.played == 0


def test_tests_are_unrated(user, mine):
    duel = start(user, mine, games=2)
    play_pair(duel, 1.0, 1.0)
    assert not PairStats.objects.exists()


# ----------------------------------------------------------------------------- validation


def test_a_retired_version_can_be_tested_against(user, mine, theirs):
    assert start(user, mine).opponent.status == BotVersion.Status.RETIRED
    assert duels.start_test(user, mine[1], theirs, variant="yinsh").candidate == mine[1]


@pytest.mark.parametrize("status", [BotVersion.Status.PENDING, BotVersion.Status.REJECTED])
def test_unchecked_versions_cannot_play(user, mine, status):
    bad = make_version(user, "mybot", status=status)
    with pytest.raises(duels.DuelError, match="only checked versions"):
        duels.start_test(user, mine[0], bad, variant="yinsh")
    with pytest.raises(duels.DuelError, match="only checked versions"):
        duels.start_test(user, bad, mine[0], variant="yinsh")
    assert not Duel.objects.exists() and not Match.objects.exists()


def test_only_ones_own_version_can_be_tested(user, other_user, mine, theirs):
    with pytest.raises(PermissionDenied, match="not yours"):
        duels.start_test(other_user, mine[0], theirs, variant="yinsh")
    with pytest.raises(PermissionDenied, match="not yours"):
        duels.start_test(user, theirs, mine[0], variant="yinsh")


def test_a_withdrawn_bot_cannot_be_tested_against(user, mine, theirs):
    Bot.objects.filter(pk=theirs.bot_id).update(status=Bot.Status.WITHDRAWN)
    theirs.refresh_from_db()
    with pytest.raises(duels.DuelError, match="withdrawn"):
        duels.start_test(user, mine[0], theirs, variant="yinsh")


def test_both_versions_must_play_the_variant(user, mine, other_user):
    blitz_only = make_version(other_user, "quick", variants=["blitz"])
    with pytest.raises(duels.DuelError, match="does not play YINSH"):
        duels.start_test(user, mine[0], blitz_only, variant="yinsh")


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"games": 3}, "must be even"),
        ({"games": 0}, "must be even"),
        ({"games": 4000}, "from 2 to 2000"),
        ({"max_games": 5000}, "from 2 to 2000"),
        ({"elo0": 5, "elo1": 0}, "elo0 must be below elo1"),
        ({"alpha": 0.7}, "alpha"),
        ({"elo1": 5000}, "between -1000 and 1000"),
        ({"time_control": "fast"}, "time control"),
        ({"variant": "chess"}, "unknown variant"),
    ],
)
def test_bad_settings_are_refused_clearly(user, mine, kw, message):
    kw.setdefault("variant", "yinsh")
    with pytest.raises(duels.DuelError, match=message):
        duels.start_test(user, mine[0], mine[1], **kw)
    assert not Duel.objects.exists()


def test_a_version_cannot_play_itself(user, mine):
    with pytest.raises(duels.DuelError, match="cannot play itself"):
        duels.start_test(user, mine[0], mine[0], variant="yinsh")


# ----------------------------------------------------------------------------- challenges


def test_a_challenge_plays_its_games_unrated_by_default(user, mine, theirs):
    duel = duels.start_challenge(user, mine[0], theirs, variant="yinsh", games=2)
    assert duel.kind == Duel.Kind.CHALLENGE and not duel.rated and not duel.is_sprt
    assert all(m.kind == Match.Kind.CHALLENGE for m in duel.matches.all())
    play_pair(duel, 1.0, 0.5)
    duel.refresh_from_db()
    assert duel.status == Duel.Status.FINISHED and duel.points == 1.5
    assert not PairStats.objects.exists()


def test_a_rated_challenge_needs_both_owners_and_counts_like_the_ladder(user, mine, theirs):
    with pytest.raises(duels.DuelError, match="does not accept rated challenges"):
        duels.start_challenge(user, mine[0], theirs, variant="yinsh", games=2, rated=True)
    Bot.objects.filter(pk=theirs.bot_id).update(rated_challenges=True)
    theirs.refresh_from_db()
    duel = duels.start_challenge(user, mine[0], theirs, variant="yinsh", games=2, rated=True)
    assert duel.rated and all(m.rated for m in duel.matches.all())
    play_pair(duel, 1.0, 1.0)
    assert PairStats.objects.get(white=mine[0], black=theirs).wins == 1
    assert PairStats.objects.get(white=theirs, black=mine[0]).losses == 1
    # Allowed but not asked for: unrated.
    plain = duels.start_challenge(user, mine[0], theirs, variant="yinsh", games=2)
    assert not plain.rated


def test_a_rated_challenge_with_a_retired_version_is_refused(user, other_user, mine, theirs):
    Bot.objects.filter(pk=theirs.bot_id).update(rated_challenges=True)
    theirs.bot.refresh_from_db()
    old_rival = make_version(other_user, "rival", status=BotVersion.Status.RETIRED)
    for candidate, opponent in ((mine[0], old_rival), (mine[1], theirs)):
        with pytest.raises(duels.DuelError, match=r"retired.*rating is frozen"):
            duels.start_challenge(user, candidate, opponent, variant="yinsh", games=2, rated=True)
    assert not duels.start_challenge(user, mine[1], old_rival, variant="yinsh", games=2).rated


def test_challenges_have_a_daily_quota(user, mine, theirs, settings):
    settings.CHALLENGES_PER_DAY = 2
    for _ in range(2):
        duels.start_challenge(user, mine[0], theirs, variant="yinsh", games=2)
    assert duels.challenges_left(user) == 0
    # The first of them turns a day old in 5 hours: then one more may start.
    first = Duel.objects.order_by("created_at").first()
    Duel.objects.filter(pk=first.pk).update(created_at=timezone.now() - timedelta(hours=19))
    with pytest.raises(throttles.Throttled, match="at most 2 per day; try again in 5 hours") as e:
        duels.start_challenge(user, mine[0], theirs, variant="yinsh", games=2)
    assert 5 * 3600 - 60 < e.value.wait <= 5 * 3600
    assert e.value.headers() == {"Retry-After": str(e.value.wait)} and e.value.status == 429
    assert Duel.objects.count() == 2
    # A day later the quota is back.
    Duel.objects.update(created_at=timezone.now() - timedelta(days=1, minutes=1))
    assert duels.challenges_left(user) == 2


def test_with_no_challenges_a_day_the_refusal_says_they_are_off(user, mine, theirs, settings):
    # Not "try again in 1 second": no wait brings one.
    settings.CHALLENGES_PER_DAY = 0
    with pytest.raises(PermissionDenied, match="challenges are turned off on this arena"):
        duels.start_challenge(user, mine[0], theirs, variant="yinsh", games=2)
    assert Duel.objects.count() == 0


def test_a_challenge_is_someone_elses_bot_with_ones_own_version(
    user, other_user, mine, theirs, settings
):
    with pytest.raises(duels.DuelError, match="your own bot"):
        duels.start_challenge(user, mine[0], mine[1], variant="yinsh", games=2)
    with pytest.raises(PermissionDenied, match="not yours"):
        duels.start_challenge(other_user, mine[0], theirs, variant="yinsh", games=2)
    with pytest.raises(duels.DuelError, match="from 2 to 100"):
        duels.start_challenge(user, mine[0], theirs, variant="yinsh", games=102)


def test_withdrawing_a_bot_cancels_its_running_tests(user, other_user, mine, theirs):
    from arena.bots import services as bots

    duel = duels.start_test(user, mine[0], theirs, variant="yinsh")
    play_pair(duel, 1.0, 1.0)  # theirs has played: deleting withdraws it
    other = duels.start_test(user, mine[0], mine[1], variant="yinsh")
    assert bots.delete_bot(other_user, theirs.bot) == "withdrawn"
    duel.refresh_from_db()
    other.refresh_from_db()
    assert duel.status == Duel.Status.CANCELLED and duel.pairs == 1
    assert not duel.matches.filter(status__in=[S.PENDING, S.QUEUED, S.RUNNING]).exists()
    assert other.status == Duel.Status.RUNNING


# ----------------------------------------------------------------------------- notifications


def test_a_finished_test_tells_its_creator_with_the_verdict(user, mine):
    from arena.notifications.models import Event, Notification

    verified_address(user, "alice@example.org")
    duel = start(user, mine, elo0=0, elo1=200)
    for _ in range(20):
        duel.refresh_from_db()
        if duel.status != Duel.Status.RUNNING:
            break
        play_pair(duel, 1.0, 1.0)
    (n,) = Notification.objects.filter(event=Event.TEST_FINISHED)
    assert n.user == user and n.url.endswith(f"/tests/{duel.pk}/")
    assert n.subject == "Test #1, mybot v2 against mybot v1, finished"
    assert n.text.startswith("H1 accepted") and "LLR" in n.text and "[0, 200]" in n.text
    assert n.data["verdict"] == "H1" and n.data["pentanomial"][4] == duel.pairs
    assert n.data["number"] == 1


def test_a_finished_challenge_tells_both_owners_and_a_cancelled_one_nobody(
    user, other_user, mine, theirs
):
    from arena.notifications.models import Notification

    verified_address(user, "alice@example.org")
    verified_address(other_user, "bob@example.org")
    duel = duels.start_challenge(user, mine[0], theirs, variant="yinsh", games=2)
    play_pair(duel, 1.0, 0.5)
    sent = Notification.objects.filter(event="test_finished")
    assert sorted(n.user.username for n in sent) == ["alice", "bob"]
    assert "scored 1.5 of 2 games (+1 =1 -0)" in sent[0].text
    cancelled = duels.start_challenge(user, mine[0], theirs, variant="yinsh", games=2)
    assert duels.cancel(user, cancelled)
    assert sent.count() == 2


# ----------------------------------------------------------------------------- numbering


def test_tests_and_challenges_are_numbered_apart_from_one(user, mine, theirs):
    first_test = start(user, mine, games=2)
    challenge = duels.start_challenge(user, mine[0], theirs, variant="yinsh", games=2)
    second_test = start(user, mine, games=2)
    assert (first_test.number, second_test.number) == (1, 2)
    assert challenge.number == 1 and challenge.pk == first_test.pk + 1
    assert (first_test.title, challenge.title) == ("Test #1", "Challenge #1")


def test_a_number_taken_meanwhile_is_not_given_twice(user, mine, monkeypatch):
    first = start(user, mine, games=2)
    numbers = iter([first.number, first.number + 1])  # a racing start took the first
    monkeypatch.setattr(duels, "next_number", lambda kind: next(numbers))
    second = start(user, mine, games=2)
    assert second.number == 2 and Duel.objects.count() == 2
