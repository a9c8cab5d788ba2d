"""The API of tournaments in every format (arena/api/tournaments.py): created with their
parameters, followed with the format's tables, refused when the format cannot be played."""

from __future__ import annotations

from typing import Any

import pytest

from arena.games.models import Match
from arena.tournaments.models import Tournament
from tests.arena.api.test_api import client_for
from tests.arena.conftest import make_version
from tests.arena.tournaments.test_tournaments import finish_one

NAMES = ["api-a", "api-b", "api-c", "api-d", "api-e"]


@pytest.fixture
def bots(user: Any) -> list[str]:
    for name in NAMES:
        make_version(user, name)
    return NAMES


def post(user: Any, **body: Any) -> Any:
    base = {"name": "Cup", "variant": "blitz", "time_control": "5+0.1", "bots": NAMES[:4]}
    return client_for(user).post("/api/tournaments/", {**base, **body}, format="json")


def play_out(tid: int) -> None:
    while (m := Match.objects.filter(tournament_id=tid, status="queued").first()) is not None:
        finish_one(m, "white")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "rounds", "current", "games"),
    [
        ({}, 6, 6, 12),  # a round robin, as before formats: all its rounds at once
        ({"format": "round-robin", "games_per_pair": 1}, 3, 3, 6),
        ({"format": "double-round-robin", "games_per_pair": 1}, 6, 6, 12),
        ({"format": "swiss", "rounds": 2, "games_per_pair": 1}, 2, 1, 2),  # one at a time
        ({"format": "swiss", "games_per_pair": 1}, 2, 1, 2),  # log2(4) rounds
        ({"format": "gauntlet", "seed": "api-c"}, 3, 3, 6),
        ({"format": "knockout"}, 2, 1, 4),
    ],
)
def test_each_format_is_created_through_the_api(
    user: Any, bots: list[str], body: dict[str, Any], rounds: int, current: int, games: int
) -> None:
    r = post(user, **body)
    assert r.status_code == 201, r.content
    made = r.json()
    assert made["format"] == body.get("format", "round-robin")
    assert made["rounds"] == rounds
    assert made["seed"] == ("api-c v1" if "seed" in body else None)
    detail = client_for(user).get(f"/api/tournaments/{made['id']}/").json()
    assert detail["progress"]["round"] == current and detail["progress"]["rounds"] == rounds
    assert detail["progress"]["total"] == games  # the rounds made so far
    assert (detail["bracket"] is not None) == (made["format"] == "knockout")
    assert (detail["gauntlet"] is not None) == (made["format"] == "gauntlet")


@pytest.mark.django_db
def test_a_swiss_says_its_byes_and_tie_breaks(user: Any, bots: list[str]) -> None:
    r = post(user, format="swiss", rounds=3, games_per_pair=1, bots=NAMES)
    tid = r.json()["id"]
    play_out(tid)
    detail = client_for(user).get(f"/api/tournaments/{tid}/").json()
    assert detail["status"] == "finished"
    assert [b["round"] for b in detail["byes"]] == [1, 2, 3]
    assert {b["bot"] for b in detail["byes"]} <= set(NAMES)
    row = detail["standings"][0]
    assert set(row) >= {"buchholz", "sonneborn_berger", "head_to_head", "byes", "tiebreak"}
    assert sum(s["byes"] for s in detail["standings"]) == 3
    assert sum(s["points"] for s in detail["standings"]) == 3 * 2 + 3  # games and byes
    assert row["tiebreak"] == row["sonneborn_berger"]


@pytest.mark.django_db
def test_a_knockouts_json_has_its_bracket_and_champion(user: Any, bots: list[str]) -> None:
    tid = post(user, format="knockout", games_per_pair=2, bots=NAMES[:3]).json()["id"]
    play_out(tid)  # White wins every game: every mini-match level, then the decider
    detail = client_for(user).get(f"/api/tournaments/{tid}/").json()
    bracket = detail["bracket"]
    assert [r["name"] for r in bracket["rounds"]] == ["Semi-finals", "Final"]
    bye, semi = bracket["rounds"][0]["ties"]
    assert bye["low"] is None and bye["decided_by"] == "bye"
    assert semi["decided_by"] == "decider" and semi["tiebreaks"] == 2 and semi["games"] == 6
    assert semi["winner"] == semi["high"]
    champion = bracket["champion"]
    assert champion == {"bot": "api-a", "version": 1, "seed": 1}  # unrated: the order given
    assert detail["standings"][0]["bot"] == "api-a"
    assert detail["standings"][0]["round_reached"] == 3


@pytest.mark.django_db
def test_a_gauntlets_json_has_its_seeds_score_against_each(user: Any, bots: list[str]) -> None:
    tid = post(user, format="gauntlet", games_per_pair=2, seed="api-b").json()["id"]
    play_out(tid)
    detail = client_for(user).get(f"/api/tournaments/{tid}/").json()
    assert detail["seed"] == "api-b v1"
    assert [g["bot"] for g in detail["gauntlet"]] == ["api-a", "api-c", "api-d"]
    assert {(g["games"], g["wins"], g["losses"], g["points"]) for g in detail["gauntlet"]} == {
        (2, 1, 1, 1.0)
    }


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"format": "swiss", "rounds": 4}, "non_field_errors", "at most 3 rounds"),
        ({"format": "knockout", "games_per_pair": 3}, "non_field_errors", "even number"),
        ({"format": "knockout", "bots": NAMES[:1]}, "bots", "at least 2"),
        ({"format": "league"}, "format", "not a valid choice"),
        ({"rounds": 2}, "non_field_errors", "only a Swiss is given its number of rounds"),
        ({"format": "gauntlet", "seed": "api-e"}, "seed", "the seed, api-e, is not one of"),
        ({"format": "swiss", "seed": "api-a"}, "seed", "only a gauntlet has a seed"),
    ],
)
def test_what_a_format_cannot_play_is_a_400_and_creates_nothing(
    user: Any, bots: list[str], body: dict[str, Any], field: str, message: str
) -> None:
    r = post(user, **body)
    assert r.status_code == 400, r.content
    assert message in " ".join(r.json()[field]), r.json()
    assert message in r.json()["detail"]
    assert not Tournament.objects.exists() and not Match.objects.exists()
