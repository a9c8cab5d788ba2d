"""The ladder scheduler's preferences and the ratings fitted from the results."""

from __future__ import annotations

import random
from typing import Any

import pytest

from arena.bots.models import Bot, BotVersion, playing
from arena.games import ladder, recount, services
from arena.games.models import Match
from arena.jobs import claims
from arena.ratings import services as ratings
from arena.ratings.models import PairStats, Rating, RatingPoint, RatingState
from arena.referee.openings import opening
from tests.arena.conftest import make_version
from tests.arena.games.test_matches import fake_result

S = Match.Status


def rate(version: Any, variant: str, elo: float, games: int, rank: int = 1) -> None:
    Rating.objects.create(
        variant=variant, version=version, elo=elo, error=50, games=games, points=0, rank=rank
    )


def play_out(match: Match, result: str) -> None:
    services.finish(match.pk, claims.claim(Match, match.pk), fake_result(match.variant, result))


# ----------------------------------------------------------------------------- the ladder


@pytest.mark.django_db
def test_the_ladder_keeps_a_bounded_number_of_matches_in_flight(
    user: Any, anchor: Any, settings: Any
) -> None:
    settings.LADDER_VARIANTS = ["yinsh", "blitz"]
    settings.LADDER_QUEUE_DEPTH = 3
    make_version(user, "a")
    make_version(user, "b")
    created = ladder.schedule_ladder(random.Random(1))
    # Pairs are never split: two pairs per variant, one more than the depth.
    assert len(created) == 8
    assert {m.variant for m in created} == {"yinsh", "blitz"}
    assert all(m.status == S.QUEUED and m.kind == Match.Kind.LADDER for m in created)
    assert ladder.schedule_ladder(random.Random(2)) == []  # full: nothing more
    play_out(created[0], "white")
    assert ladder.schedule_ladder(random.Random(3)) == []  # 3 in flight: still full
    play_out(created[1], "white")
    assert len(ladder.schedule_ladder(random.Random(4))) == 2  # under the depth: one pair


@pytest.mark.django_db
def test_the_ladder_needs_two_active_versions(user: Any, settings: Any) -> None:
    settings.LADDER_VARIANTS = ["yinsh"]
    make_version(user, "only")
    make_version(user, "rejected", status="rejected")
    make_version(user, "pending", status="pending")
    assert ladder.schedule_ladder() == []


@pytest.mark.django_db
def test_the_ladder_pairs_a_version_only_in_the_variants_it_declares(
    user: Any, settings: Any
) -> None:
    settings.LADDER_VARIANTS = ["yinsh", "blitz", "yangsh", "yangsh7"]
    settings.LADDER_QUEUE_DEPTH = 4
    every = make_version(user, "every")
    classic = make_version(user, "classic", variants=["yinsh", "blitz"])
    pawns = make_version(user, "pawns", variants=["yangsh"])
    made = ladder.schedule_ladder(random.Random(1))
    pairs = {(m.variant, frozenset((m.white_id, m.black_id))) for m in made}
    assert pairs == {
        ("yinsh", frozenset((every.pk, classic.pk))),
        ("blitz", frozenset((every.pk, classic.pk))),
        ("yangsh", frozenset((every.pk, pawns.pk))),
    }  # and nobody but ``every`` plays yangsh7: no game there
    assert len(made) == 12


@pytest.mark.django_db
def test_the_versions_playing_a_variant_are_found_by_its_whole_name(user: Any) -> None:
    lists = [["yangsh"], ["yangsh7"], ["yinsh", "yangsh"], ["blitz", "yangsh", "yangsh7"]]
    lists += [["yinsh", "yangsh7"], ["yinsh", "blitz", "yangsh7"], ["blitz"]]
    made = {make_version(user, f"b{i}", variants=names).pk: names for i, names in enumerate(lists)}
    for variant in ("yinsh", "blitz", "yangsh", "yangsh7"):
        found = set(BotVersion.objects.filter(playing(variant)).values_list("pk", flat=True))
        assert found == {pk for pk, names in made.items() if variant in names}


@pytest.mark.django_db
def test_the_ladder_prefers_the_version_with_the_fewest_games(user: Any, other_user: Any) -> None:
    veteran_a = make_version(user, "veteran-a")
    veteran_b = make_version(other_user, "veteran-b")
    newcomer = make_version(other_user, "newcomer")
    rate(veteran_a, "yinsh", 1000, 500)
    rate(veteran_b, "yinsh", 1010, 500)
    for seed in range(5):
        Match.objects.all().delete()
        pair = ladder.schedule_variant("yinsh", rng=random.Random(seed), depth=1)
        assert all(newcomer.pk in (m.white_id, m.black_id) for m in pair)


@pytest.mark.django_db
def test_the_ladder_pairs_close_ratings(user: Any, settings: Any) -> None:
    settings.LADDER_ANY_RATING_SHARE = 0  # every pairing by rating (and load)
    a = make_version(user, "a")
    near = make_version(user, "near")
    far = make_version(user, "far")
    rate(a, "yinsh", 1500, 10)
    rate(near, "yinsh", 1550, 20)
    rate(far, "yinsh", 2400, 20)
    for seed in range(5):
        Match.objects.all().delete()
        pair = ladder.schedule_variant("yinsh", rng=random.Random(seed), depth=1)
        assert all({m.white_id, m.black_id} == {a.pk, near.pk} for m in pair)


@pytest.mark.django_db
def test_the_ladder_schedules_colour_reversed_pairs_from_one_opening(
    user: Any, other_user: Any, settings: Any
) -> None:
    settings.OPENING_PLIES = 4
    a = make_version(user, "a")
    b = make_version(other_user, "b")
    openings = set()
    for seed in range(4):
        first, second = ladder.schedule_variant("yinsh", rng=random.Random(seed), depth=1)
        assert (first.white_id, first.black_id) == (second.black_id, second.white_id)
        assert {first.white_id, first.black_id} == {a.pk, b.pk}
        assert first.seed == second.seed
        assert first.opening == second.opening
        assert tuple(first.opening.split()) == opening("yinsh", first.seed, 4)
        openings.add(first.opening)
        play_out(first, "white")
        play_out(second, "black")
    assert len(openings) == 4  # a new opening for every pair


@pytest.mark.django_db
def test_the_ladder_starts_from_the_empty_board_with_no_opening_plies(
    user: Any, settings: Any
) -> None:
    settings.OPENING_PLIES = 0
    make_version(user, "a")
    make_version(user, "b")
    pair = ladder.schedule_variant("yinsh", rng=random.Random(0), depth=1)
    assert [m.opening for m in pair] == ["", ""]


@pytest.mark.django_db
def test_the_ladder_keeps_the_colours_of_a_pairing_even(user: Any) -> None:
    a = make_version(user, "a")
    b = make_version(user, "b")
    for seed in range(4):
        for m in ladder.schedule_variant("yinsh", rng=random.Random(seed), depth=1):
            play_out(m, "draw")
    assert PairStats.objects.get(white=a, black=b).games == 4
    assert PairStats.objects.get(white=b, black=a).games == 4
    # A game of a pair that was cancelled: the next pairing starts with the colour owed.
    first, second = ladder.schedule_variant("yinsh", rng=random.Random(9), depth=1)
    play_out(first, "draw")
    Match.objects.filter(pk=second.pk).update(status=S.CANCELLED)
    (owed, _) = ladder.schedule_variant("yinsh", rng=random.Random(10), depth=1)
    assert (owed.white_id, owed.black_id) == (second.white_id, second.black_id)


@pytest.mark.django_db
def test_the_ladder_pairs_bots_of_different_owners_first(user: Any, other_user: Any) -> None:
    """One owner's two near-identical bots meet only when nobody else is there."""
    twin_a = make_version(user, "twin-a")
    twin_b = make_version(user, "twin-b")
    rate(twin_a, "yinsh", 1500, 10)
    rate(twin_b, "yinsh", 1500, 10)  # the perfect match by rating and load...
    stranger = make_version(other_user, "stranger")
    rate(stranger, "yinsh", 2200, 400)  # ...but another owner's bot, far and busy, is chosen
    made = []
    for seed in range(6):
        Match.objects.all().delete()
        made += ladder.schedule_variant("yinsh", rng=random.Random(seed), depth=5)
    assert made
    for m in made:
        owners = {m.white.bot.owner_id, m.black.bot.owner_id}
        assert len(owners) == 2, (m.white.label, m.black.label)
    # Alone with its own bots, an owner's bots meet each other.
    BotVersion.objects.filter(pk=stranger.pk).update(status=BotVersion.Status.RETIRED)
    Match.objects.all().delete()
    alone = ladder.schedule_variant("yinsh", rng=random.Random(0), depth=1)
    assert {alone[0].white_id, alone[0].black_id} == {twin_a.pk, twin_b.pk}


@pytest.mark.django_db
def test_a_withdrawn_bot_or_a_retired_version_gets_no_ladder_games(user: Any) -> None:
    a = make_version(user, "a")
    gone = make_version(user, "gone")
    Bot.objects.filter(pk=gone.bot_id).update(status=Bot.Status.WITHDRAWN)
    make_version(user, "old", status=BotVersion.Status.RETIRED)
    assert ladder.schedule_variant("yinsh", rng=random.Random(0), depth=2) == []
    b = make_version(user, "b")
    made = ladder.schedule_variant("yinsh", rng=random.Random(0), depth=2)
    assert {v for m in made for v in (m.white_id, m.black_id)} == {a.pk, b.pk}


# ----------------------------------------------------------------------------- ratings


def results(pairs: dict[tuple[Any, Any], tuple[int, int, int]], variant: str = "yinsh") -> None:
    """Record finished matches: (white, black) -> (white wins, draws, black wins)."""
    for (w, b), (wins, draws, losses) in pairs.items():
        for result, n in (("white", wins), ("draw", draws), ("black", losses)):
            for _ in range(n):
                m = Match.objects.create(
                    variant=variant,
                    kind=Match.Kind.LADDER,
                    status=S.QUEUED,
                    white=w,
                    black=b,
                    time_control="1+0",
                )
                play_out(m, result)


@pytest.mark.django_db
def test_ratings_are_anchored_to_the_random_bot(user: Any, anchor: Any, settings: Any) -> None:
    strong = make_version(user, "strong")
    weak = make_version(user, "weak")
    results(
        {
            (strong, anchor): (9, 0, 1),
            (anchor, strong): (1, 0, 9),
            (weak, anchor): (4, 2, 4),
            (anchor, weak): (5, 0, 5),
        }
    )
    report = ratings.refresh("yinsh")
    assert report is not None and report.players == 3
    table = {r.version_id: r for r in Rating.objects.filter(variant="yinsh")}
    assert table[anchor.pk].elo == pytest.approx(settings.RATING_ANCHOR_ELO)
    assert table[anchor.pk].error == 0
    assert table[strong.pk].elo > table[weak.pk].elo > 900
    assert table[strong.pk].rank == 1
    assert table[weak.pk].error > 0 and table[weak.pk].games == 20
    assert table[weak.pk].points == pytest.approx(10.0)
    assert ratings.refresh("yinsh") is None  # nothing new: no fit


@pytest.mark.django_db
def test_ratings_recomputed_from_scratch_equal_the_incremental_ones(user: Any, anchor: Any) -> None:
    a = make_version(user, "a")
    b = make_version(user, "b")
    results({(a, anchor): (3, 1, 1), (b, a): (2, 2, 2), (anchor, b): (0, 1, 4)})
    ratings.refresh("yinsh")
    before = sorted(Rating.objects.values_list("version_id", "elo", "error", "games"))
    counts = sorted(
        PairStats.objects.values_list("white_id", "black_id", "wins", "draws", "losses")
    )
    PairStats.objects.all().delete()
    RatingState.objects.all().delete()
    recount.recompute()
    after = sorted(Rating.objects.values_list("version_id", "elo", "error", "games"))
    assert counts == sorted(
        PairStats.objects.values_list("white_id", "black_id", "wins", "draws", "losses")
    )
    assert [(v, round(e, 6), round(x, 6), g) for v, e, x, g in before] == [
        (v, round(e, 6), round(x, 6), g) for v, e, x, g in after
    ]
    assert RatingState.objects.get(variant="yinsh").results == 16


@pytest.mark.django_db
def test_the_recount_of_one_variant_counts_only_its_finished_rated_results(
    user: Any, anchor: Any
) -> None:
    a = make_version(user, "a")
    results({(a, anchor): (2, 1, 0), (anchor, a): (0, 0, 3)})
    results({(a, anchor): (1, 0, 0)}, variant="blitz")
    unrated = Match.objects.create(
        variant="yinsh", kind="ladder", status=S.QUEUED, white=a, black=anchor, time_control="1+0"
    )
    play_out(unrated, "white")
    Match.objects.filter(pk=unrated.pk).update(rated=False)
    aborted = Match.objects.create(
        variant="yinsh", kind="ladder", status=S.QUEUED, white=a, black=anchor, time_control="1+0"
    )
    services.finish(aborted.pk, claims.claim(Match, aborted.pk), fake_result(aborted=True))
    blitz = list(PairStats.objects.filter(variant="blitz").values_list("pk", "wins"))
    PairStats.objects.filter(variant="yinsh").update(wins=99)
    PairStats.objects.create(variant="yinsh", white=make_version(user, "ghost"), black=a, wins=3)

    assert recount.recount_results("yinsh") == 6
    counts = PairStats.objects.filter(variant="yinsh").values_list(
        "white_id", "black_id", "wins", "draws", "losses"
    )
    assert sorted(counts) == sorted([(a.pk, anchor.pk, 2, 1, 0), (anchor.pk, a.pk, 0, 0, 3)])
    assert list(PairStats.objects.filter(variant="blitz").values_list("pk", "wins")) == blitz
    assert RatingState.objects.get(variant="yinsh").results == 6
    assert recount.recount_results() == 7
    assert RatingState.objects.get(variant="blitz").results == 1


@pytest.mark.django_db
def test_a_refit_ends_at_the_same_ratings_whatever_it_starts_from(user: Any, anchor: Any) -> None:
    """The fit starts from the stored ratings; they only save iterations."""
    a = make_version(user, "a")
    b = make_version(user, "b")
    c = make_version(user, "c")
    results({(a, anchor): (3, 1, 1), (b, a): (2, 2, 2), (anchor, b): (0, 1, 4), (c, b): (1, 0, 3)})
    ratings.refresh("yinsh")

    def table() -> list[tuple[int, float, float, int, int]]:
        return [
            (v, round(e, 6), round(x, 6), g, rank)
            for v, e, x, g, rank in Rating.objects.values_list(
                "version_id", "elo", "error", "games", "rank"
            ).order_by("version_id")
        ]

    fitted = table()
    advantage = RatingState.objects.get(variant="yinsh").white_advantage
    Rating.objects.filter(version=b).update(elo=4000)
    Rating.objects.filter(version=c).update(elo=-3000)
    RatingState.objects.update(white_advantage=500)
    ratings.refresh("yinsh", force=True)
    assert table() == fitted
    assert RatingState.objects.get(variant="yinsh").white_advantage == pytest.approx(advantage)
    Rating.objects.all().delete()
    ratings.refresh("yinsh", force=True)
    assert table() == fitted


@pytest.mark.django_db
def test_a_result_reaches_the_ratings_at_the_next_fit(user: Any, anchor: Any) -> None:
    a = make_version(user, "a")
    b = make_version(user, "b")
    results({(a, anchor): (6, 2, 4), (anchor, a): (4, 2, 6), (b, anchor): (5, 2, 5)})
    ratings.refresh("yinsh")
    before = {r.version_id: r for r in Rating.objects.all()}
    results({(a, b): (1, 0, 0)})
    # Written with the result: the count the next fit will see; the ratings wait for it.
    state = RatingState.objects.get(variant="yinsh")
    assert state.results == state.fitted + 1
    assert {r.version_id: r.elo for r in Rating.objects.all()} == {
        v: r.elo for v, r in before.items()
    }
    assert ratings.refresh("yinsh") is not None
    after = {r.version_id: r for r in Rating.objects.all()}
    assert after[a.pk].elo > before[a.pk].elo and after[b.pk].elo < before[b.pk].elo
    assert (after[a.pk].games, after[a.pk].points) == (25, 15.0)
    assert (after[b.pk].games, after[b.pk].points) == (13, 6.0)
    assert after[anchor.pk].elo == before[anchor.pk].elo  # the anchor stays put
    # A newcomer is on the leaderboard after the fit that follows its first game.
    c = make_version(user, "c")
    results({(c, b): (0, 1, 0)})
    assert not Rating.objects.filter(version=c).exists()
    ratings.refresh("yinsh")
    newcomer = Rating.objects.get(version=c)
    assert newcomer.games == 1 and newcomer.points == 0.5 and newcomer.error is not None
    assert ratings.leaderboard("yinsh").filter(version=c).exists()


@pytest.mark.django_db
def test_a_fit_leaves_a_retired_versions_rating_as_it_was(user: Any, anchor: Any) -> None:
    a = make_version(user, "a")
    old = make_version(user, "old")
    results({(a, old): (2, 0, 2), (old, anchor): (3, 0, 1)})
    ratings.refresh("yinsh")
    BotVersion.objects.filter(pk=old.pk).update(status=BotVersion.Status.RETIRED)
    before = Rating.objects.get(version=old)
    results({(a, old): (1, 0, 0)})
    ratings.refresh("yinsh")
    after = Rating.objects.get(version=old)
    assert (after.elo, after.games, after.points) == (before.elo, before.games, before.points)
    assert Rating.objects.get(version=a).games == 5


@pytest.mark.django_db
def test_ratings_do_not_depend_on_the_order_of_the_results(user: Any, anchor: Any) -> None:
    a = make_version(user, "a")
    games = [(a, anchor, "white")] * 6 + [(anchor, a, "draw")] * 3 + [(anchor, a, "white")] * 2
    fits = []
    for seed in (1, 2):
        Match.objects.all().delete()
        PairStats.objects.all().delete()
        RatingState.objects.all().delete()
        order = games[:]
        random.Random(seed).shuffle(order)
        for w, b, r in order:
            m = Match.objects.create(
                variant="yinsh",
                kind="ladder",
                status=S.QUEUED,
                white=w,
                black=b,
                time_control="1+0",
            )
            play_out(m, r)
        ratings.refresh("yinsh")
        fits.append(Rating.objects.get(version=a).elo)
    assert fits[0] == pytest.approx(fits[1], abs=1e-9)


@pytest.mark.django_db
def test_rating_history_gets_a_point_when_a_versions_games_change(user: Any, anchor: Any) -> None:
    a = make_version(user, "a")
    b = make_version(user, "b")
    results({(a, anchor): (1, 0, 0)})
    ratings.refresh("yinsh")
    assert RatingPoint.objects.filter(version=a).count() == 1
    results({(b, anchor): (1, 0, 0)})
    ratings.refresh("yinsh")
    # a played no new game: no new point for it; b and the anchor got one.
    assert RatingPoint.objects.filter(version=a).count() == 1
    assert RatingPoint.objects.filter(version=b).count() == 1
    assert RatingPoint.objects.filter(version=anchor).count() == 2


@pytest.mark.django_db
def test_variants_are_rated_separately(user: Any, anchor: Any) -> None:
    a = make_version(user, "a")
    results({(a, anchor): (2, 0, 0)}, variant="blitz")
    ratings.refresh_all()
    assert set(Rating.objects.values_list("variant", flat=True)) == {"blitz"}
    assert ratings.leaderboard("blitz").count() == 2
    assert ratings.leaderboard("yinsh").count() == 0


@pytest.mark.django_db
def test_the_leaderboard_hides_retired_versions_unless_asked(user: Any, anchor: Any) -> None:
    a = make_version(user, "a")
    results({(a, anchor): (2, 0, 1)})
    ratings.refresh("yinsh")
    a.status = "retired"
    a.save(update_fields=["status"])
    assert [r.version_id for r in ratings.leaderboard("yinsh")] == [anchor.pk]
    assert ratings.leaderboard("yinsh", include_retired=True).count() == 2


@pytest.mark.django_db
def test_a_rating_without_an_interval_reads_as_text(user: Any) -> None:
    """The admin pages print ratings; one whose interval could not be estimated says so."""
    v = make_version(user, "lonely")
    known = Rating(variant="yinsh", version=v, elo=1234.4, error=56.2, games=3, points=1, rank=1)
    unknown = Rating(variant="yinsh", version=v, elo=1234.4, error=None, games=3, points=1, rank=1)
    assert str(known).endswith("yinsh: 1234 ± 56")
    assert str(unknown).endswith("yinsh: 1234 (interval unknown)")


@pytest.mark.parametrize(("plies", "errors"), [(0, 0), (4, 0), (10, 0), (11, 1), (-1, 1)])
def test_opening_plies_that_do_not_fit_every_variant_are_refused_at_start(
    settings: Any, plies: int, errors: int
) -> None:
    from arena.checks import check_opening_plies

    settings.OPENING_PLIES = plies
    found = check_opening_plies(None)
    assert len(found) == errors
    assert all("ARENA_OPENING_PLIES" in e.msg for e in found)


@pytest.mark.django_db
def test_the_leaderboard_says_how_old_its_ratings_are(user: Any, anchor: Any) -> None:
    from django.test import Client

    a = make_version(user, "a")
    results({(a, anchor): (3, 0, 1)})
    ratings.refresh("yinsh")
    page = Client().get("/leaderboard/yinsh/").content.decode()
    assert "Fitted 0\xa0minutes ago from 4 results." in page
    results({(a, anchor): (1, 0, 0)})
    page = Client().get("/leaderboard/yinsh/").content.decode()
    assert "from 4 results; 1 newer one counts from the next fit (every 15 s)." in page
