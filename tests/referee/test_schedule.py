"""The one round-robin scheduler (arena/referee/schedule.py), for the site and the local command."""

from collections import Counter, defaultdict

import pytest

from arena.referee.schedule import Pairing, ScheduleError, circle_rounds, round_robin

SIZES = range(2, 12)


@pytest.mark.parametrize("players", SIZES)
@pytest.mark.parametrize("games_per_pair", [1, 2, 3, 4])
def test_every_pair_meets_games_per_pair_times_numbered_in_order(players, games_per_pair):
    schedule = round_robin(players, games_per_pair)
    assert [p.number for p in schedule] == list(range(1, len(schedule) + 1))
    assert [p.round for p in schedule] == sorted(p.round for p in schedule)
    pairs = Counter(frozenset((p.white, p.black)) for p in schedule)
    assert len(pairs) == players * (players - 1) // 2
    assert set(pairs.values()) == {games_per_pair}
    assert all(p.white != p.black for p in schedule)


@pytest.mark.parametrize("players", SIZES)
def test_in_a_round_every_player_plays_at_most_once_and_one_sits_out_if_odd(players):
    schedule = round_robin(players, 2)
    by_round: dict[int, list[Pairing]] = defaultdict(list)
    for p in schedule:
        by_round[p.round].append(p)
    rounds_per_cycle = players - 1 if players % 2 == 0 else players
    assert sorted(by_round) == list(range(1, 2 * rounds_per_cycle + 1))
    for games in by_round.values():
        seated = [x for p in games for x in (p.white, p.black)]
        assert len(seated) == len(set(seated)), "a player plays twice in one round"
        assert len(seated) == players - players % 2


@pytest.mark.parametrize("players", SIZES)
def test_colours_are_balanced_in_a_cycle_and_reversed_in_the_next(players):
    schedule = round_robin(players, 2)
    half = len(schedule) // 2
    first, second = schedule[:half], schedule[half:]
    assert [(p.black, p.white) for p in first] == [(p.white, p.black) for p in second]
    for player in range(players):
        whites = sum(p.white == player for p in first)
        blacks = sum(p.black == player for p in first)
        assert abs(whites - blacks) <= 1
    # Over the two cycles every pair has met once with each colour.
    assert len({(p.white, p.black) for p in schedule}) == len(schedule)


def test_one_cycle_is_the_circle_method():
    assert [[(p.white, p.black) for p in round_robin(4) if p.round == r] for r in (1, 2, 3)] == (
        circle_rounds(4)
    )


@pytest.mark.parametrize(
    ("players", "games_per_pair", "message"),
    [(1, 1, "at least two players"), (0, 1, "at least two"), (4, 0, "at least one game")],
)
def test_impossible_schedules_are_refused(players, games_per_pair, message):
    with pytest.raises(ScheduleError, match=message):
        round_robin(players, games_per_pair)


def test_a_schedule_error_is_a_value_error_not_an_infrastructure_error():
    from arena.referee.errors import InfrastructureError

    assert issubclass(ScheduleError, ValueError)
    assert not issubclass(ScheduleError, InfrastructureError)


@pytest.mark.parametrize("players", [2, 3, 4, 5])
@pytest.mark.parametrize("games_per_pair", [1, 2, 3, 4, 5])
def test_the_colour_reversed_games_of_a_pair_share_a_leg_and_an_odd_last_game_has_its_own(
    players, games_per_pair
):
    from arena.referee.schedule import leg_seeds

    schedule = round_robin(players, games_per_pair)
    legs = defaultdict(list)
    for p in schedule:
        legs[p.leg].append((p.white, p.black))
    for games in legs.values():
        if len(games) == 2:
            (w1, b1), (w2, b2) = games
            assert (w1, b1) == (b2, w2)  # the same two players, the colours reversed
        else:
            assert len(games) == 1
    singles = [leg for leg, games in legs.items() if len(games) == 1]
    pairs_of_players = players * (players - 1) // 2
    assert len(singles) == (pairs_of_players if games_per_pair % 2 else 0)
    drawn = iter(range(10**6))
    seeds = leg_seeds(schedule, lambda: next(drawn))
    assert len(set(seeds)) == len(legs)
    by_leg = dict(zip((p.leg for p in schedule), seeds, strict=True))
    assert seeds == [by_leg[p.leg] for p in schedule]
