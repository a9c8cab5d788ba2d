"""The open ladder: who it pairs (remote bots whose client is connected, sandboxed bots whose
owners opted in, never a person's seat), its own rating space, its leaderboard and opt-in."""

from __future__ import annotations

import random
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from arena.bots import services as bots
from arena.bots.models import Bot, BotVersion
from arena.games import ladder, recount, remote
from arena.games.models import Match
from arena.ratings import services as ratings
from arena.ratings.models import Ladder, PairStats, Rating, RatingPoint, RatingState
from tests.arena.api.test_api import client_for
from tests.arena.conftest import make_version
from tests.arena.ratings.test_ladder_and_ratings import play_out

S = Match.Status


def opted_in(owner: Any, name: str) -> BotVersion:
    version = make_version(owner, name)
    Bot.objects.filter(pk=version.bot_id).update(open_ladder=True)
    return version


def connected(owner: Any, name: str, *, ago_s: float = 0) -> BotVersion:
    """A remote bot whose client last asked for work ``ago_s`` seconds ago."""
    version = bots.create_remote_bot(owner, name)
    Bot.objects.filter(pk=version.bot_id).update(seen_at=timezone.now() - timedelta(seconds=ago_s))
    return version


def schedule_open(variant: str = "yinsh", seed: int = 1) -> list[Match]:
    return ladder.schedule_variant(variant, rng=random.Random(seed), ladder=Ladder.OPEN)


def players(matches: list[Match]) -> set[int]:
    return {m.white_id for m in matches} | {m.black_id for m in matches}


# ----------------------------------------------------------------------------- scheduling


@pytest.mark.django_db
def test_the_open_ladder_pairs_a_connected_remote_bot_with_an_opted_in_sandboxed_bot(
    user: Any, other_user: Any, settings: Any
) -> None:
    settings.OPEN_LADDER_QUEUE_DEPTH = 2
    settings.OPEN_LADDER_TIME_CONTROL = "20+0.2"
    far = connected(user, "far", ago_s=10)
    near = opted_in(other_user, "near")
    make_version(other_user, "homebody")  # sandboxed, not opted in
    made = schedule_open()
    assert len(made) == 2  # one pair, colours reversed
    assert {(m.white_id, m.black_id) for m in made} == {(far.pk, near.pk), (near.pk, far.pk)}
    assert all(m.kind == Match.Kind.OPEN and m.status == S.QUEUED for m in made)
    assert all(m.time_control == "20+0.2" and m.rated for m in made)
    assert all(m.queue() == settings.REMOTE_QUEUE for m in made)
    assert schedule_open(seed=2) == []  # at its depth


@pytest.mark.django_db
def test_a_remote_bot_not_seen_lately_is_not_paired(
    user: Any, other_user: Any, settings: Any
) -> None:
    settings.REMOTE_SEEN_S = 60
    connected(user, "gone", ago_s=61)
    bots.create_remote_bot(user, "never")  # its client never asked
    opted_in(other_user, "near")
    assert schedule_open() == []


@pytest.mark.django_db
def test_every_open_ladder_pairing_has_a_remote_bot_in_it(
    user: Any, other_user: Any, django_user_model: Any, settings: Any
) -> None:
    third = django_user_model.objects.create_user("carol", password="a-long-password-3")
    opted_in(other_user, "near-a")
    opted_in(third, "near-b")
    assert schedule_open() == []  # no remote bot connected: nothing to play there
    far = connected(user, "far")
    settings.OPEN_LADDER_QUEUE_DEPTH = 6
    made = schedule_open()
    assert len(made) == 6
    assert all(far.pk in (m.white_id, m.black_id) for m in made)


@pytest.mark.django_db
def test_a_far_rated_opponent_is_still_met_now_and_then(
    user: Any, other_user: Any, settings: Any
) -> None:
    """A remote bot whose first games were lost by a broken set-up (its program could not
    start) is rated far below the anchor it lost them to; paired by rating alone it would meet
    only the bot nearest to it from then on, and its rating would never come back."""
    far = connected(user, "far")
    near, anchor = opted_in(other_user, "near"), opted_in(other_user, "anchor")
    for version, elo, games in ((far, 600, 92), (near, 609, 86), (anchor, 1000, 6)):
        Rating.objects.create(
            ladder=Ladder.OPEN,
            variant="yinsh",
            version=version,
            elo=elo,
            games=games,
            points=0,
            rank=1,
        )

    def opponents(share: float) -> Counter[int]:
        settings.LADDER_ANY_RATING_SHARE = share
        met: Counter[int] = Counter()
        for seed in range(100):
            Match.objects.all().delete()
            (m, _) = ladder.schedule_variant(
                "yinsh", rng=random.Random(seed), depth=1, ladder=Ladder.OPEN
            )
            met[m.black_id if m.white_id == far.pk else m.white_id] += 1
        return met

    assert opponents(0)[anchor.pk] == 0
    assert 3 <= opponents(0.1)[anchor.pk] <= 25  # about a tenth of its pairings
    assert opponents(1)[anchor.pk] == 100  # by load alone: the anchor has played least


@pytest.mark.django_db
def test_a_persons_seat_never_plays_on_the_open_ladder(
    user: Any, other_user: Any, django_user_model: Any
) -> None:
    seat = bots.seat_of(user)
    Bot.objects.filter(pk=seat.bot_id).update(seen_at=timezone.now(), open_ladder=True)
    near = opted_in(other_user, "near")
    far = connected(other_user, "far")
    made = schedule_open()
    assert made and seat.pk not in players(made)
    assert players(made) == {near.pk, far.pk}


@pytest.mark.django_db
def test_the_sandboxed_ladder_still_leaves_remote_bots_out(
    user: Any, other_user: Any, settings: Any
) -> None:
    settings.LADDER_VARIANTS = ["yinsh"]
    settings.LADDER_QUEUE_DEPTH = 2
    settings.OPEN_LADDER_QUEUE_DEPTH = 2
    far = connected(user, "far")
    a = opted_in(other_user, "a")
    b = make_version(user, "b")
    made = ladder.schedule_ladder(random.Random(3))
    sandboxed = [m for m in made if m.kind == Match.Kind.LADDER]
    opened = [m for m in made if m.kind == Match.Kind.OPEN]
    assert len(sandboxed) == 2 and players(sandboxed) == {a.pk, b.pk}
    assert len(opened) == 2 and players(opened) == {a.pk, far.pk}
    assert all(m.time_control == settings.LADDER_TIME_CONTROL for m in sandboxed)


@pytest.mark.django_db
def test_waiting_open_ladder_matches_of_a_withdrawn_bot_are_cancelled(
    user: Any, other_user: Any
) -> None:
    connected(user, "far")
    near = opted_in(other_user, "near")
    made = schedule_open()
    bots.delete_bot(other_user, near.bot)  # it has matches: withdrawn
    assert {m.status for m in Match.objects.filter(pk__in=[m.pk for m in made])} == {S.CANCELLED}


# ----------------------------------------------------------------------------- when a client asked


@pytest.mark.django_db
def test_asking_for_work_notes_the_client_at_most_every_few_seconds(
    user: Any, settings: Any
) -> None:
    settings.REMOTE_SEEN_WRITE_S = 5
    version = bots.create_remote_bot(user, "far")
    bot = Bot.objects.get(pk=version.bot_id)
    assert bot.seen_at is None
    remote.pending(bot, since=0, wait_s=0)
    first = Bot.objects.get(pk=bot.pk).seen_at
    assert first is not None
    remote.pending(bot, since=0, wait_s=0)
    assert Bot.objects.get(pk=bot.pk).seen_at == first  # within 5 s: not written again
    Bot.objects.filter(pk=bot.pk).update(seen_at=first - timedelta(seconds=6))
    remote.pending(bot, since=0, wait_s=0)
    assert Bot.objects.get(pk=bot.pk).seen_at > first


# ----------------------------------------------------------------------------- rating spaces


def sandboxed_tables() -> tuple[list[Any], ...]:
    return (
        list(PairStats.objects.filter(ladder=Ladder.SANDBOX).values()),
        list(RatingState.objects.filter(ladder=Ladder.SANDBOX).values("variant", "results")),
        list(Rating.objects.filter(ladder=Ladder.SANDBOX).values("version", "elo", "games")),
        list(RatingPoint.objects.filter(ladder=Ladder.SANDBOX).values("version", "elo")),
    )


@pytest.mark.django_db
def test_open_ladder_games_are_rated_in_their_own_space_only(
    user: Any, other_user: Any, anchor: BotVersion, settings: Any
) -> None:
    settings.LADDER_VARIANTS = ["yinsh"]
    b = make_version(user, "b")
    for m in ladder.schedule_variant("yinsh", rng=random.Random(1)):
        play_out(m, "white")
    ratings.refresh("yinsh")
    before = sandboxed_tables()
    assert before[0] and before[2]

    far = connected(other_user, "far")
    near = opted_in(user, "near")
    for m in schedule_open():
        play_out(m, "white" if m.white_id == far.pk else "black")  # far wins both
    assert ratings.refresh("yinsh") is None  # nothing new on the sandboxed ladder
    report = ratings.refresh("yinsh", ladder=Ladder.OPEN)
    assert report is not None and report.results == 2 and report.ladder == Ladder.OPEN

    assert sandboxed_tables() == before
    board = list(ratings.leaderboard("yinsh", ladder=Ladder.OPEN))
    assert [r.version_id for r in board] == [far.pk, near.pk]
    # The anchor bot has no open ladder games: the mean rating is held instead.
    assert sum(r.elo for r in board) / 2 == pytest.approx(settings.RATING_ANCHOR_ELO)
    assert {r.version_id for r in ratings.leaderboard("yinsh")} == {anchor.pk, b.pk}
    assert ratings.fit_state("yinsh", Ladder.OPEN).fitted == 2  # type: ignore[union-attr]

    # Counted again from the matches, every space comes out the same.
    open_pairs = list(PairStats.objects.filter(ladder=Ladder.OPEN).values())
    PairStats.objects.all().delete()
    recount.recompute("yinsh")
    assert list(PairStats.objects.filter(ladder=Ladder.OPEN).values()) != []
    assert sorted(
        (p["white_id"], p["black_id"], p["wins"], p["losses"])
        for p in PairStats.objects.filter(ladder=Ladder.OPEN).values()
    ) == sorted((p["white_id"], p["black_id"], p["wins"], p["losses"]) for p in open_pairs)
    assert RatingState.objects.get(ladder=Ladder.OPEN, variant="yinsh").results == 2
    assert [r.version_id for r in ratings.leaderboard("yinsh", ladder=Ladder.OPEN)] == [
        far.pk,
        near.pk,
    ]
    assert {r.version_id for r in ratings.leaderboard("yinsh")} == {anchor.pk, b.pk}


@pytest.mark.django_db
def test_the_anchor_bot_holds_the_open_ladder_when_it_plays_there(
    user: Any, anchor: BotVersion, settings: Any
) -> None:
    Bot.objects.filter(pk=anchor.bot_id).update(open_ladder=True)
    far = connected(user, "far")
    for m in schedule_open():
        play_out(m, "white" if m.white_id == far.pk else "black")
    ratings.refresh("yinsh", ladder=Ladder.OPEN)
    elo = dict(Rating.objects.filter(ladder=Ladder.OPEN).values_list("version_id", "elo"))
    assert elo[anchor.pk] == pytest.approx(settings.RATING_ANCHOR_ELO)
    assert elo[far.pk] > elo[anchor.pk]


# ----------------------------------------------------------------------------- pages and API


@pytest.fixture
def open_board(user: Any, other_user: Any) -> tuple[BotVersion, BotVersion]:
    far = connected(other_user, "far")
    near = opted_in(user, "near")
    for m in schedule_open():
        play_out(m, "white")
    ratings.refresh("yinsh", ladder=Ladder.OPEN)
    return far, near


@pytest.mark.django_db
def test_the_open_leaderboard_page_lists_its_bots_and_marks_remote_ones(
    open_board: Any, client: Client
) -> None:
    page = client.get("/leaderboard/yinsh/open/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "YINSH open ladder" in html
    assert '>far</a> <small class="remote">(remote)</small>' in html
    assert ">near</a></td>" in html
    assert 'href="/leaderboard/blitz/open/"' in html  # its variant tabs stay on it
    sandboxed = client.get("/leaderboard/yinsh/").content.decode()
    assert 'href="/leaderboard/yinsh/open/"' in sandboxed
    assert ">far</a>" not in sandboxed
    assert client.get("/leaderboard/nope/open/").status_code == 404


@pytest.mark.django_db
def test_the_api_leaderboard_takes_the_ladder(open_board: Any) -> None:
    c = client_for()
    rows = c.get("/api/ratings/", {"variant": "yinsh", "ladder": "open"}).json()["results"]
    assert {(r["bot"], r["kind"]) for r in rows} == {("far", "remote"), ("near", "upload")}
    assert c.get("/api/ratings/", {"variant": "yinsh"}).json()["results"] == []
    bad = c.get("/api/ratings/", {"ladder": "closed"})
    assert bad.status_code == 400 and "ladder" in bad.json()


@pytest.mark.django_db
def test_a_bots_page_shows_its_open_ladder_rating_beside_its_ladder_rating(
    open_board: Any, client: Client
) -> None:
    _far, near = open_board
    html = client.get("/bots/far/").content.decode()
    assert '<a href="/leaderboard/yinsh/open/">YINSH, open ladder</a>' in html
    assert "<figcaption>YINSH, open ladder</figcaption>" in html  # its rating history
    # A sandboxed bot rated on both: the ladder's rating first, then the open ladder's.
    Rating.objects.create(
        ladder=Ladder.SANDBOX, variant="yinsh", version=near, elo=1400, games=3, points=2, rank=1
    )
    html = client.get("/bots/near/").content.decode()
    ladder_row = html.index('<a href="/leaderboard/yinsh/">YINSH</a>')
    assert ladder_row < html.index('<a href="/leaderboard/yinsh/open/">YINSH, open ladder</a>')


@pytest.mark.django_db
def test_the_api_names_the_ladder_of_each_rating_and_of_its_history(open_board: Any) -> None:
    far, near = open_board
    Rating.objects.create(
        ladder=Ladder.SANDBOX, variant="yinsh", version=near, elo=1400, games=3, points=2, rank=1
    )
    c = client_for()
    rated = c.get(f"/api/versions/{near.pk}/").json()["ratings"]
    assert sorted((r["ladder"], r["variant"]) for r in rated) == [
        ("open", "yinsh"),
        ("sandbox", "yinsh"),
    ]
    history = c.get(f"/api/versions/{far.pk}/history/", {"ladder": "open"}).json()
    assert history and {p["ladder"] for p in history} == {"open"}
    assert c.get(f"/api/versions/{far.pk}/history/").json() == []  # the ladder's, by default
    assert c.get(f"/api/versions/{far.pk}/history/", {"ladder": "x"}).status_code == 400


# ----------------------------------------------------------------------------- the opt-in


@pytest.mark.django_db
def test_an_owner_opts_a_sandboxed_bot_in_through_the_api(user: Any) -> None:
    make_version(user, "mine")
    c = client_for(user)
    r = c.patch("/api/bots/mine/", {"open_ladder": True}, format="json")
    assert r.status_code == 200 and r.json()["open_ladder"] is True
    assert Bot.objects.get(name="mine").open_ladder
    assert c.patch("/api/bots/mine/", {"open_ladder": "yes"}, format="json").status_code == 400
    assert Bot.objects.get(name="mine").open_ladder


@pytest.mark.django_db
def test_a_remote_bot_cannot_choose_the_open_ladder(user: Any) -> None:
    bots.create_remote_bot(user, "far", description="kept")
    r = client_for(user).patch(
        "/api/bots/far/", {"open_ladder": False, "description": "changed"}, format="json"
    )
    assert r.status_code == 400 and "open ladder" in r.json()["detail"]
    bot = Bot.objects.get(name="far")
    assert bot.description == "kept" and not bot.open_ladder


@pytest.mark.django_db
def test_the_edit_page_offers_the_open_ladder_to_sandboxed_bots_only(
    user: Any, client: Client
) -> None:
    make_version(user, "mine")
    bots.create_remote_bot(user, "far")
    client.force_login(user)
    assert "open_ladder" in client.get("/bots/mine/edit/").content.decode()
    assert "open_ladder" not in client.get("/bots/far/edit/").content.decode()
    r = client.post("/bots/mine/edit/", {"description": "d", "open_ladder": "on"})
    assert r.status_code == 302 and Bot.objects.get(name="mine").open_ladder


@pytest.mark.django_db
def test_random_and_greedy_are_registered_on_the_open_ladder(system_user: Any) -> None:
    bots.register_builtin_bots(names=["random", "greedy", "search"])
    assert dict(Bot.objects.values_list("name", "open_ladder")) == {
        "random": True,
        "greedy": True,
        "search": False,
    }


@pytest.mark.django_db
def test_registering_a_remote_bot_points_to_the_open_ladder(user: Any, client: Client) -> None:
    client.force_login(user)
    page = client.get("/upload/remote/")
    assert page.status_code == 200
    assert 'href="/leaderboard/yinsh/open/">open ladder</a>' in page.content.decode()
