"""The ladder's seasons: divisions made by rating, pairings within them (and a share across the
boundaries), promotion and relegation at the end, standings frozen once closed, the periodic
check and the ``season`` command."""

from __future__ import annotations

import datetime as dt
import doctest
import random
from collections import Counter
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

import arena.games.seasons
from arena.bots.models import Bot, BotVersion
from arena.games import ladder, seasons, services
from arena.games.models import Match, Season, SeasonEntry
from arena.jobs import claims
from arena.ratings.models import Rating
from tests.arena.conftest import make_version
from tests.arena.games.test_matches import fake_result, queued_match

S = Match.Status


def players(django_user_model: Any, count: int, *, rated: int | None = None) -> list[BotVersion]:
    """``count`` bots of as many owners, ``b00`` the strongest: the first ``rated`` of them (all
    by default) rated in Yinsh, 2000 Elo down by 50 a bot; the others not rated yet."""
    out = []
    for k in range(count):
        owner = django_user_model.objects.create_user(f"owner{k:02}")
        version = make_version(owner, f"b{k:02}")
        if rated is None or k < rated:
            Rating.objects.create(
                variant="yinsh", version=version, elo=2000 - 50 * k, games=30, points=15, rank=k
            )
        out.append(version)
    return out


def divisions(season: Season) -> list[list[str]]:
    """The bots' names by division, in the order the season was made in."""
    out: dict[int, list[str]] = {}
    for e in season.entries.order_by("seed").select_related("bot"):
        out.setdefault(e.division, []).append(e.bot.name)
    return [out[k] for k in sorted(out)]


def play(white: BotVersion, black: BotVersion, result: str, n: int = 1) -> None:
    """``n`` ladder games of white against black, finished now with ``result``."""
    for _ in range(n):
        m = queued_match(white, black)
        assert services.finish(m.pk, claims.claim(Match, m.pk), fake_result("yinsh", result))


def table(season: Season) -> list[list[tuple[str, float, str]]]:
    """Each division's standings: (bot, points, move), in rank order."""
    return [
        [(r.bot.name, r.points, r.move) for r in division.rows]
        for division in seasons.standings(season)
    ]


def test_the_doctests_of_the_seasons_module_pass() -> None:
    failures, tried = doctest.testmod(arena.games.seasons)
    assert tried and not failures


# ----------------------------------------------------------------------------- opening


@pytest.mark.django_db
def test_a_season_places_the_bots_by_rating_the_last_division_taking_the_rest(
    django_user_model: Any,
) -> None:
    bots = players(django_user_model, 11, rated=9)
    season = seasons.open_season("yinsh", division_size=4, movers=1)
    assert (season.number, season.status, season.title) == (1, "open", "YINSH season 1")
    assert season.previous is None
    # 11 // 4 = 2 divisions: 4 bots, then the other 7; the unrated ones last, oldest first.
    assert divisions(season) == [
        ["b00", "b01", "b02", "b03"],
        ["b04", "b05", "b06", "b07", "b08", "b09", "b10"],
    ]
    # A retired version, a withdrawn bot and a bot that does not play the variant get no seat.
    Bot.objects.filter(pk=bots[0].bot_id).update(status=Bot.Status.WITHDRAWN)
    make_version(bots[1].bot.owner, "blitz-only", variants=["blitz"])
    make_version(bots[2].bot.owner, "old", status=BotVersion.Status.RETIRED)
    blitz = seasons.open_season("blitz", division_size=3)
    assert blitz.movers == 1  # ARENA_SEASON_MOVERS (2), at most half a division
    # Nobody is rated in Blitz: the bots come in the order they were registered.
    order = [name for names in divisions(blitz) for name in names]
    assert order == [f"b{k:02}" for k in range(1, 11)] + ["blitz-only"]
    assert [len(d) for d in divisions(blitz)] == [3, 3, 5]


@pytest.mark.django_db
def test_fewer_bots_than_a_division_make_one_division(django_user_model: Any) -> None:
    players(django_user_model, 3)
    season = seasons.open_season("yinsh", division_size=8, movers=2)
    assert divisions(season) == [["b00", "b01", "b02"]]


@pytest.mark.django_db
def test_a_second_open_season_of_a_variant_is_refused_and_changes_nothing(
    django_user_model: Any,
) -> None:
    players(django_user_model, 4)
    first = seasons.open_season("yinsh", division_size=2, movers=1)
    with pytest.raises(seasons.SeasonError, match="YINSH season 1 is open already") as e:
        seasons.open_season("yinsh", division_size=2, movers=1)
    assert "close it first" in str(e.value)
    assert list(Season.objects.values_list("pk", flat=True)) == [first.pk]
    assert SeasonEntry.objects.count() == 4
    # Another variant opens beside it; once the first is closed, a new one opens.
    seasons.open_season("blitz", division_size=2, movers=1)
    seasons.close_season(first)
    assert seasons.open_season("yinsh", division_size=2, movers=1).number == 2


@pytest.mark.django_db
def test_the_database_refuses_two_open_seasons_of_a_variant(django_user_model: Any) -> None:
    from django.db import IntegrityError, transaction

    players(django_user_model, 2)
    seasons.open_season("yinsh", division_size=2, movers=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        Season.objects.create(variant="yinsh", number=2, division_size=2, movers=1)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"division_size": 1}, "a division holds at least 2 bots, not 1"),
        ({"movers": 0}, "at least 1 bot of a division goes up and down, not 0"),
        ({"division_size": 4, "movers": 3}, "at most 2 go up and as many down, not 3"),
        ({"ends_on": dt.date(2020, 1, 1)}, "its end date 2020-01-01 has passed"),
        ({"variant": "chess"}, "no variant 'chess'"),
        ({"variant": "yangsh7"}, "the ladder does not play yangsh7"),
        ({"name": "x" * 81}, "at most 80 characters"),
    ],
)
@pytest.mark.django_db
def test_a_season_that_cannot_open_is_refused_with_the_reason(
    django_user_model: Any, settings: Any, fields: dict[str, Any], message: str
) -> None:
    settings.LADDER_VARIANTS = ["yinsh", "blitz"]
    players(django_user_model, 4)
    arguments = {"variant": "yinsh", "division_size": 4, "movers": 1, **fields}
    with pytest.raises(seasons.SeasonError, match=message):
        seasons.open_season(**arguments)
    assert not Season.objects.exists() and not SeasonEntry.objects.exists()


@pytest.mark.django_db
def test_a_season_needs_two_bots(user: Any) -> None:
    with pytest.raises(seasons.SeasonError, match="at least 2 bots that play yinsh; none do"):
        seasons.open_season("yinsh")
    make_version(user, "alone")
    with pytest.raises(seasons.SeasonError, match="1 does"):
        seasons.open_season("yinsh")
    assert not Season.objects.exists()


def test_the_system_check_refuses_season_settings_that_make_no_sense(settings: Any) -> None:
    from arena.checks import check_season_settings

    assert check_season_settings(None) == []
    settings.SEASON_CROSS_SHARE = 1.5
    settings.SEASON_DIVISION_SIZE = 1
    settings.SEASON_MOVERS = 0
    settings.SEASON_CHECK_INTERVAL_S = 0
    found = check_season_settings(None)
    assert [e.id for e in found] == ["arena.E004", "arena.E005", "arena.E006", "arena.E007"]
    assert "ARENA_SEASON_CROSS_SHARE is 1.5" in found[0].msg


# ----------------------------------------------------------------------------- the ladder


def opponents(made: list[Match]) -> list[tuple[int, int]]:
    """The pairings of ``made`` (two matches each), as version ids."""
    return [(m.white_id, m.black_id) for m in made[::2]]


@pytest.mark.django_db
def test_the_ladder_pairs_within_divisions_but_for_its_share_across_the_boundaries(
    django_user_model: Any, settings: Any
) -> None:
    settings.SEASON_CROSS_SHARE = 0.1
    bots = players(django_user_model, 12)
    season = seasons.open_season("yinsh", division_size=4, movers=1)
    division = {e.bot.versions.get().pk: e.division for e in season.entries.select_related("bot")}
    assert Counter(division.values()) == {1: 4, 2: 4, 3: 4}
    made = ladder.schedule_variant("yinsh", rng=random.Random(2024), depth=1200)
    pairs = opponents(made)
    assert len(pairs) == 600
    across = [(a, b) for a, b in pairs if division[a] != division[b]]
    # Never further than the next division; about a tenth of the pairings: 60 expected, and
    # the binomial's standard deviation is 7.3 (this seed gives one number: within 3 of them).
    assert all(abs(division[a] - division[b]) == 1 for a, b in across)
    assert 38 <= len(across) <= 82, len(across)
    # Everyone plays, in its division mostly.
    assert {v for pair in pairs for v in pair} == {b.pk for b in bots}

    Match.objects.all().delete()
    settings.SEASON_CROSS_SHARE = 0.0
    made = ladder.schedule_variant("yinsh", rng=random.Random(7), depth=400)
    assert all(division[a] == division[b] for a, b in opponents(made))

    Match.objects.all().delete()
    settings.SEASON_CROSS_SHARE = 1.0
    made = ladder.schedule_variant("yinsh", rng=random.Random(7), depth=400)
    assert all(abs(division[a] - division[b]) == 1 for a, b in opponents(made))


@pytest.mark.django_db
def test_a_bot_alone_in_its_division_plays_the_next_one(
    django_user_model: Any, settings: Any
) -> None:
    settings.SEASON_CROSS_SHARE = 0.0
    bots = players(django_user_model, 4)
    seasons.open_season("yinsh", division_size=2, movers=1)
    # b01 is withdrawn: b00 has nobody left in the top division.
    Bot.objects.filter(pk=bots[1].bot_id).update(status=Bot.Status.WITHDRAWN)
    made = ladder.schedule_variant("yinsh", rng=random.Random(1), depth=40)
    met = {frozenset(pair) for pair in opponents(made)}
    assert frozenset((bots[2].pk, bots[3].pk)) in met
    assert any(bots[0].pk in pair for pair in met)
    assert all(pair <= {bots[0].pk, bots[2].pk, bots[3].pk} for pair in met)


@pytest.mark.django_db
def test_a_bot_that_starts_playing_during_the_season_joins_the_bottom_division(
    django_user_model: Any, settings: Any
) -> None:
    settings.SEASON_CROSS_SHARE = 0.0
    bots = players(django_user_model, 4)
    season = seasons.open_season("yinsh", division_size=2, movers=1)
    newcomer = make_version(django_user_model.objects.create_user("late"), "late")
    Rating.objects.create(variant="yinsh", version=newcomer, elo=3000, games=5, points=5, rank=1)
    made = ladder.schedule_variant("yinsh", rng=random.Random(3), depth=40)
    assert divisions(season) == [["b00", "b01"], ["b02", "b03", "late"]]
    late = {frozenset(p) for p in opponents(made) if newcomer.pk in p}
    assert late and all(p <= {newcomer.pk, bots[2].pk, bots[3].pk} for p in late)
    # A new version of the bot keeps the bot's seat.
    BotVersion.objects.filter(pk=newcomer.pk).update(status=BotVersion.Status.RETIRED)
    again = make_version(newcomer.bot.owner, "late")
    assert seasons.ladder_divisions("yinsh", {again.pk: again.bot_id}) == {again.pk: 2}
    assert SeasonEntry.objects.filter(season=season).count() == 5


@pytest.mark.django_db
def test_with_no_season_open_the_ladder_pairs_across_the_old_divisions(
    django_user_model: Any, settings: Any
) -> None:
    settings.SEASON_CROSS_SHARE = 0.0
    b = players(django_user_model, 4)
    season = seasons.open_season("yinsh", division_size=2, movers=1)
    made = ladder.schedule_variant("yinsh", rng=random.Random(5), depth=40)
    top = {b[0].pk, b[1].pk}
    assert all(len(top & set(pair)) != 1 for pair in opponents(made))
    seasons.close_season(season)
    assert seasons.ladder_divisions("yinsh", {b[0].pk: b[0].bot_id}) is None
    Match.objects.all().delete()
    made = ladder.schedule_variant("yinsh", rng=random.Random(5), depth=40)
    assert any(len(top & set(pair)) == 1 for pair in opponents(made))


# ----------------------------------------------------------------------------- standings, close


@pytest.mark.django_db
def test_closing_promotes_the_top_and_relegates_the_bottom_of_each_division(
    django_user_model: Any,
) -> None:
    b = players(django_user_model, 9)
    season = seasons.open_season("yinsh", division_size=3, movers=1)
    assert divisions(season) == [
        ["b00", "b01", "b02"],
        ["b03", "b04", "b05"],
        ["b06", "b07", "b08"],
    ]
    # Division 1: b02 beats both; b00 beats b01.
    play(b[2], b[0], "white", 2)
    play(b[2], b[1], "white", 2)
    play(b[0], b[1], "white")
    # Division 2: b05 beats b03 thrice and draws b04 twice; b03 beats b04. b04 and b03 tie on
    # points, b04's from the stronger opponent (Sonneborn-Berger).
    play(b[5], b[3], "white", 3)
    play(b[4], b[5], "draw", 2)
    play(b[3], b[4], "white")
    # Division 3: b08 beats b06, who beats b07; b07 and b08 draw.
    play(b[8], b[6], "white", 3)
    play(b[6], b[7], "white")
    play(b[7], b[8], "draw")
    # Across a boundary, before the season and of another kind: not in the standings.
    play(b[1], b[3], "black", 5)
    old = queued_match(b[7], b[6])
    services.finish(old.pk, claims.claim(Match, old.pk), fake_result("yinsh", "white"))
    Match.objects.filter(pk=old.pk).update(finished_at=season.opened_at - dt.timedelta(1))
    test = queued_match(b[7], b[6], kind=Match.Kind.TEST)
    services.finish(test.pk, claims.claim(Match, test.pk), fake_result("yinsh", "white"))

    live = table(season)
    assert live == [
        [("b02", 4.0, "stay"), ("b00", 1.0, "stay"), ("b01", 0.0, "down")],
        [("b05", 4.0, "up"), ("b04", 1.0, "stay"), ("b03", 1.0, "down")],
        [("b08", 3.5, "up"), ("b06", 1.0, "stay"), ("b07", 0.5, "stay")],
    ]
    # A bot's page reads its division's games only, and finds the same standing.
    for number, rows in enumerate(live, 1):
        for rank, (name, points, move) in enumerate(rows, 1):
            (now,), history = seasons.bot_seasons(Bot.objects.get(name=name))
            assert history == [] and (now.members, now.divisions) == (3, 3)
            assert (now.row.entry.division, now.row.rank) == (number, rank)
            assert (now.row.points, now.row.move) == (points, move)
    closed = seasons.close_season(season)
    assert closed.status == "closed" and closed.closed_at is not None
    assert table(closed) == live
    ((), (entry,)) = seasons.bot_seasons(Bot.objects.get(name="b05"))
    assert (entry.season, entry.rank, entry.move) == (closed, 1, "up")
    row = {e.bot.name: e for e in closed.entries.select_related("bot", "version")}
    assert (row["b08"].rank, row["b08"].wins, row["b08"].draws, row["b08"].losses) == (1, 3, 1, 0)
    assert row["b08"].version == b[8] and row["b08"].elo == 1600
    assert (row["b04"].tiebreak, row["b03"].tiebreak) == (2.0, 1.0)
    assert {n: e.next_division for n, e in row.items()} == {
        "b00": 1,
        "b01": 2,
        "b02": 1,
        "b03": 3,
        "b04": 2,
        "b05": 1,
        "b06": 3,
        "b07": 3,
        "b08": 2,
    }
    with pytest.raises(seasons.SeasonError, match="YINSH season 1 is closed already"):
        seasons.close_season(closed)

    # The next season starts from there: a relegated bot first, the stayers by rank, the
    # promoted last; a withdrawn bot leaves a hole the others close; a newcomer comes last.
    Bot.objects.filter(pk=b[6].bot_id).update(status=Bot.Status.WITHDRAWN)
    make_version(django_user_model.objects.create_user("new"), "newcomer")
    second = seasons.open_season("yinsh", division_size=3, movers=1)
    assert second.previous == closed and second.number == 2
    assert divisions(second) == [
        ["b02", "b00", "b05"],
        ["b01", "b04", "b08"],
        ["b03", "b07", "newcomer"],
    ]


@pytest.mark.django_db
def test_a_closed_seasons_standings_do_not_change_with_later_games(
    django_user_model: Any,
) -> None:
    b = players(django_user_model, 4)
    season = seasons.open_season("yinsh", division_size=2, movers=1)
    play(b[0], b[1], "white")
    play(b[2], b[3], "draw")
    closed = seasons.close_season(season)
    before = (table(closed), seasons.standings_csv(closed).content)
    play(b[1], b[0], "white", 3)
    play(b[3], b[2], "white", 3)
    Rating.objects.filter(version=b[0]).update(elo=100)
    BotVersion.objects.filter(pk=b[1].pk).update(status=BotVersion.Status.RETIRED)
    make_version(b[1].bot.owner, "b01")  # a new version of b01
    assert (table(closed), seasons.standings_csv(closed).content) == before
    lines = before[1].decode().splitlines()
    assert lines[0] == (
        "division,rank,bot,version,owner,games,wins,draws,losses,points,sonneborn_berger,elo,move"
    )
    assert lines[1] == "1,1,b00,1,owner00,1,1,0,0,1,0.00,2000,stay"
    assert lines[2] == "1,2,b01,1,owner01,1,0,0,1,0,0.00,1950,down"
    assert lines[3].startswith("2,1,b02,1,owner02,1,0,1,0,0.5,") and lines[3].endswith(",up")


@pytest.mark.django_db
def test_the_periodic_check_closes_the_seasons_whose_last_day_is_over(
    django_user_model: Any,
) -> None:
    from arena.games.tasks import close_ended_seasons

    players(django_user_model, 2)
    today = timezone.now().date()
    yinsh = seasons.open_season("yinsh", division_size=2, movers=1, ends_on=today)
    blitz = seasons.open_season("blitz", division_size=2, movers=1)
    assert close_ended_seasons() == 0  # its last day is not over
    assert seasons.close_ended(today + dt.timedelta(days=1)) == [yinsh]
    yinsh.refresh_from_db()
    blitz.refresh_from_db()
    assert (yinsh.status, blitz.status) == ("closed", "open")
    assert seasons.close_ended(today + dt.timedelta(days=400)) == []


@pytest.mark.django_db
def test_a_bot_that_took_part_in_a_season_is_withdrawn_not_deleted(user: Any) -> None:
    from arena.bots import services as bots

    a = make_version(user, "a")
    make_version(user, "b")
    seasons.open_season("yinsh", division_size=2, movers=1)
    assert bots.delete_bot(user, a.bot) == "withdrawn"
    assert SeasonEntry.objects.filter(bot=a.bot).exists()


# ----------------------------------------------------------------------------- real games


@pytest.mark.django_db
def test_real_ladder_games_in_a_season_fill_the_divisions_standings(
    django_user_model: Any, settings: Any
) -> None:
    """The ladder schedules within the divisions and the referee plays the games (in this
    process, as the ladder's other tests do); the standings count them."""
    settings.SEASON_CROSS_SHARE = 0.0
    settings.LADDER_TIME_CONTROL = "5+0.1"
    b = players(django_user_model, 4)
    season = seasons.open_season("yinsh", division_size=2, movers=1)
    made = ladder.schedule_variant("yinsh", rng=random.Random(11), depth=4)
    assert len(made) == 4
    for m in made:
        assert services.play(m.pk, worker_name="test") == "finished"
    played = Match.objects.filter(pk__in=[m.pk for m in made])
    assert {frozenset((m.white_id, m.black_id)) for m in played} == {
        frozenset((b[0].pk, b[1].pk)),
        frozenset((b[2].pk, b[3].pk)),
    }
    top, bottom = seasons.standings(season)
    assert [r.games for r in top.rows] == [2, 2] and [r.games for r in bottom.rows] == [2, 2]
    assert sum(r.points for r in top.rows) == 2 and sum(r.points for r in bottom.rows) == 2
    closed = seasons.close_season(season)
    assert sorted(e.games for e in closed.entries.all()) == [2, 2, 2, 2]
    assert sorted(e.move for e in closed.entries.all()) == ["down", "stay", "stay", "up"]


# ----------------------------------------------------------------------------- the command


def run(*args: str) -> str:
    from io import StringIO

    out = StringIO()
    call_command("season", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_the_command_opens_shows_and_closes_a_season(django_user_model: Any) -> None:
    b = players(django_user_model, 4)
    assert run("show") == "no season yet\n"
    text = run("open", "--variant", "yinsh", "--division-size", "2", "--movers", "1",
               "--name", "Spring", "--ends", "2999-12-31")  # fmt: skip
    assert text.startswith("opened #") and "Spring (yinsh): open" in text
    assert "ends 2999-12-31" in text and "4 bots, divisions of 2, 1 up and down" in text
    assert "division 2" in text and "if it closed now" in text
    play(b[1], b[0], "white")
    shown = run("show", "--variant", "yinsh").splitlines()
    assert shown[4].split() == ["1", "b01", "v1", "1", "1", "1", "0", "0", "1950", "stayed"]
    assert shown[5].split() == ["2", "b00", "v1", "0", "1", "0", "0", "1", "2000", "relegated"]
    assert shown[9].split()[:3] == ["1", "b02", "v1"] and shown[9].endswith("promoted")
    closed = run("close", "--variant", "yinsh")
    assert closed.startswith("closed #") and "relegated" in closed and "promoted" in closed
    season = Season.objects.get()
    assert season.status == "closed" and season.name == "Spring" and season.movers == 1
    first = closed.splitlines()[0].removeprefix("closed ")
    assert run("show", "--season", str(season.pk)).splitlines()[0] == first
    assert "Spring (yinsh): closed" in run("show")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["open", "--variant", "chess"], "invalid choice: 'chess'"),
        (["open"], "the following arguments are required: --variant"),
        (["open", "--variant", "yinsh", "--ends", "31/12/2030"], "expected a day as YYYY-MM-DD"),
        (["open", "--variant", "yinsh", "--division-size", "two"], "invalid int value"),
        (["open", "--variant", "yinsh", "--division-size", "1"], "at least 2 bots, not 1"),
        (["open", "--variant", "yinsh", "--ends", "2000-01-01"], "has passed"),
        (["close", "--variant", "yinsh"], "no season of yinsh is open"),
        (["show", "--season", "99"], "there is no season 99"),
        (["show", "--variant", "blitz"], "no season of blitz yet"),
        (["reopen"], "invalid choice: 'reopen'"),
    ],
)
@pytest.mark.django_db
def test_the_command_refuses_bad_input_and_changes_nothing(
    django_user_model: Any, args: list[str], message: str
) -> None:
    players(django_user_model, 2)
    with pytest.raises(CommandError, match=message):
        run(*args)
    assert not Season.objects.exists()


@pytest.mark.django_db
def test_the_command_refuses_a_second_open_season(django_user_model: Any) -> None:
    players(django_user_model, 2)
    run("open", "--variant", "yinsh")
    with pytest.raises(CommandError, match="YINSH season 1 is open already"):
        run("open", "--variant", "yinsh")
    assert Season.objects.count() == 1


# ----------------------------------------------------------------------------- the admin


@pytest.mark.django_db
def test_the_admin_opens_refuses_a_second_and_closes_a_season(django_user_model: Any) -> None:
    from django.test import Client

    players(django_user_model, 4)
    root = django_user_model.objects.create_superuser("root", "r@example.org", "pw-long-1234")
    c = Client()
    c.force_login(root)
    form = c.get("/admin/games/season/add/").content.decode()
    assert 'name="division_size"' in form and 'value="8"' in form
    fields = {"variant": "yinsh", "name": "", "division_size": "2", "movers": "1", "ends_on": ""}
    r = c.post("/admin/games/season/add/", fields)
    assert r.status_code == 302, r.content.decode()[-2000:]
    season = Season.objects.get()
    assert divisions(season) == [["b00", "b01"], ["b02", "b03"]]
    refused = c.post("/admin/games/season/add/", fields)
    assert refused.status_code == 200
    assert "YINSH season 1 is open already" in refused.content.decode()
    bad = c.post("/admin/games/season/add/", {**fields, "variant": "blitz", "movers": "2"})
    assert "at most 1 go up and as many down, not 2" in bad.content.decode()
    assert Season.objects.count() == 1
    page = c.get(f"/admin/games/season/{season.pk}/change/")
    assert page.status_code == 200 and "b03" in page.content.decode()
    r = c.post("/admin/games/season/", {"action": "close", "_selected_action": [str(season.pk)]})
    assert r.status_code == 302
    season.refresh_from_db()
    assert season.status == "closed"
    assert set(season.entries.values_list("move", flat=True)) == {"up", "stay", "down"}
