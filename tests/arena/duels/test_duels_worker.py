"""Tests and challenges played by a real Celery worker, to a verdict and to a score."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from arena.bots.models import BotVersion
from arena.duels import services as duels
from arena.duels.models import Duel, DuelPair
from arena.games.models import Match
from tests.arena.conftest import BOTS, make_version, wait_for


def over(duel: Duel) -> Callable[[], bool]:
    def check() -> bool:
        duel.refresh_from_db()
        return duel.status != Duel.Status.RUNNING

    return check


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_short_sprt_test_and_a_challenge_run_through_a_real_worker(
    worker: Callable[[], str], user: Any, other_user: Any, settings: Any
) -> None:
    greedy = make_version(user, "e2e-greedy", folder=BOTS / "greedy", trusted=True)
    weak = make_version(
        user, "e2e-greedy", folder=BOTS / "random", trusted=True, status=BotVersion.Status.RETIRED
    )
    rival = make_version(other_user, "e2e-random", folder=BOTS / "random", trusted=True)

    # greedy v1 against the random player (v2 of the same bot, retired): wide bounds, so
    # that a much stronger candidate is accepted after a few pairs.
    test = duels.start_test(
        user, greedy, weak, variant="blitz", time_control="5+0.1", elo0=0, elo1=200, max_games=80
    )
    wait_for("the test's verdict", over(test), worker)
    assert test.status == Duel.Status.FINISHED and test.verdict == Duel.Verdict.H1, (
        test.counts,
        test.llr,
        list(test.matches.values_list("status", "reason")),
    )
    assert test.llr >= test.bounds[1] and test.pairs >= 2
    # Every counted pair is two finished games from one opening with the colours reversed;
    # nothing is left in play.
    for pair in DuelPair.objects.filter(duel=test, status=DuelPair.Status.COUNTED):
        a, b = test.matches.filter(round=pair.number).order_by("pk")
        assert a.status == b.status == Match.Status.FINISHED
        assert (a.white, a.black, b.white, b.black) == (greedy, weak, weak, greedy)
        assert a.opening == b.opening != ""
    assert test.played == 2 * test.pairs == test.wins + test.draws + test.losses
    assert not test.matches.filter(
        status__in=[Match.Status.PENDING, Match.Status.QUEUED, Match.Status.RUNNING]
    ).exists()

    # A challenge of someone else's bot: four games, then its score.
    challenge = duels.start_challenge(
        user, greedy, rival, variant="blitz", time_control="5+0.1", games=4
    )
    wait_for("the challenge's games", over(challenge), worker)
    assert challenge.status == Duel.Status.FINISHED and challenge.played == 4
    assert challenge.pairs == 2 and challenge.points >= 2, challenge.counts
    assert challenge.matches.filter(status=Match.Status.FINISHED).count() >= 4
