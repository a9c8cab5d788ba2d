"""The tournament pages in every format: the form's format and its fields (with and without
JavaScript), a Swiss's tie-breaks and byes, a gauntlet's seed, a knockout's bracket."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from arena.bots.models import Bot
from arena.games.models import Match
from arena.tournaments import services
from arena.tournaments.models import Tournament
from tests.arena.conftest import make_version
from tests.arena.tournaments.test_tournaments import finish_one

NAMES = ["web-a", "web-b", "web-c", "web-d", "web-e"]


@pytest.fixture
def bots(user: Any) -> list[Bot]:
    return [make_version(user, name).bot for name in NAMES]


def logged_in(user: Any) -> Client:
    c = Client()
    c.force_login(user)
    return c


def form(bots: list[Bot], **fields: Any) -> dict[str, Any]:
    return {
        "name": "Cup",
        "variant": "blitz",
        "time_control": "5+0.1",
        "games_per_pair": 2,
        "bots": [b.pk for b in bots],
        **fields,
    }


def start(user: Any, bots: list[Bot], fmt: str, games: int = 2, **kw: Any) -> Tournament:
    return services.create(
        user,
        name=f"The {fmt} cup",
        variant="blitz",
        time_control="5+0.1",
        games_per_pair=games,
        bots=bots,
        format=fmt,
        **kw,
    )


def play_out(t: Tournament, result: str = "white") -> None:
    while (m := t.matches.filter(status=Match.Status.QUEUED).first()) is not None:
        finish_one(m, result)


@pytest.mark.django_db
def test_the_form_chooses_a_format_and_shows_its_fields_in_its_own_fieldset(
    user: Any, bots: list[Bot]
) -> None:
    page = logged_in(user).get("/tournaments/new/").content.decode()
    assert 'data-modes="format"' in page
    assert '<select name="format"' in page
    for value in ("round-robin", "double-round-robin", "swiss", "gauntlet", "knockout"):
        assert f'<option value="{value}"' in page
    swiss = page.index('<fieldset data-mode="swiss">')
    gauntlet = page.index('<fieldset data-mode="gauntlet">')
    assert swiss < page.index('name="rounds"') < gauntlet < page.index('name="seed"')
    # The fields common to every format are outside the fieldsets.
    assert page.index('name="games_per_pair"') < swiss < gauntlet < page.index('name="bots"')


@pytest.mark.django_db
def test_a_swiss_is_organised_on_the_form_with_its_rounds(user: Any, bots: list[Bot]) -> None:
    r = logged_in(user).post("/tournaments/new/", form(bots, format="swiss", rounds=2))
    assert r.status_code == 302
    t = Tournament.objects.get()
    assert (t.format, t.rounds) == ("swiss", 2)


@pytest.mark.django_db
def test_without_javascript_the_fields_of_another_format_are_ignored(
    user: Any, bots: list[Bot]
) -> None:
    body = form(bots, format="knockout", rounds=99, seed=bots[3].pk)  # all fields were sent
    assert logged_in(user).post("/tournaments/new/", body).status_code == 302
    t = Tournament.objects.get()
    assert (t.format, t.rounds) == ("knockout", None)


@pytest.mark.django_db
def test_a_gauntlet_is_organised_on_the_form_with_its_seed(user: Any, bots: list[Bot]) -> None:
    body = form(bots[:3], format="gauntlet", seed=bots[2].pk)
    assert logged_in(user).post("/tournaments/new/", body).status_code == 302
    t = Tournament.objects.get()
    assert t.entries.get(seed=1).version.bot == bots[2]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"format": "swiss", "rounds": 9}, "can have at most 3 rounds"),
        ({"format": "knockout", "games_per_pair": 3}, "needs an even number of games"),
        ({"format": "gauntlet", "seed": "web-e"}, "seed, web-e, is not one of its bots"),
        ({"format": "league"}, "Select a valid choice"),
    ],
)
def test_the_form_refuses_what_the_format_cannot_play(
    user: Any, bots: list[Bot], fields: dict[str, Any], message: str
) -> None:
    if fields.get("seed"):
        fields["seed"] = next(b.pk for b in bots if b.name == fields["seed"])
    r = logged_in(user).post("/tournaments/new/", form(bots[:4], **fields))
    assert r.status_code == 200
    assert message in r.content.decode()
    assert not Tournament.objects.exists() and not Match.objects.exists()


@pytest.mark.django_db
def test_a_swiss_page_shows_its_rounds_tie_breaks_and_byes(user: Any, bots: list[Bot]) -> None:
    t = start(user, bots, "swiss", games=1, rounds=2)
    page = Client().get(f"/tournaments/{t.pk}/").content.decode()
    assert "Swiss, 2 rounds, mini-matches of 1 game" in page
    assert "Round 1 of 2" in page
    play_out(t)
    page = Client().get(f"/tournaments/{t.pk}/").content.decode()
    assert "Round 2 of 2" in page
    for column in ("Buch.", "SB", "H2H", "byes"):
        assert f">{column}<" in page
    assert "<h2>Byes</h2>" in page and "Cross-table" in page
    for bye in t.byes.select_related("entry__version__bot"):
        assert f"Round {bye.round}: <a " in page and bye.entry.version.label in page


@pytest.mark.django_db
def test_a_gauntlet_page_shows_the_seeds_score_against_each(user: Any, bots: list[Bot]) -> None:
    t = start(user, bots[:3], "gauntlet", games=2, seed=bots[1])
    play_out(t, "draw")
    page = Client().get(f"/tournaments/{t.pk}/").content.decode()
    assert "Gauntlet of web-b v1, mini-matches of 2 games" in page
    assert "The seed against each" in page
    assert "so far it scored 2 points in 4 games (50.0%)" in page
    assert page.count('<td class="num">50.0%</td>') == 2
    assert "Cross-table" not in page


@pytest.mark.django_db
def test_a_knockout_page_draws_its_bracket_and_champion(user: Any, bots: list[Bot]) -> None:
    t = start(user, bots, "knockout", games=2)
    page = Client().get(f"/tournaments/{t.pk}/").content.decode()
    assert "<h2>Bracket</h2>" in page and "Champion" not in page
    assert "Quarter-finals" in page and "Semi-finals" in page and "Final" in page
    assert page.count("to be decided") == 2 + 1  # the semi-finals and the final
    assert page.count('class="side bye"') == 3  # 5 bots in a bracket of 8
    play_out(t)  # White wins every game: level ties, tie-breaks, the decider
    page = Client().get(f"/tournaments/{t.pk}/").content.decode()
    assert "Champion: <a " in page and "web-a v1" in page
    assert "level after 2 tie-breaks: the higher seed goes through" in page
    assert "to be decided" not in page and "Cross-table" not in page
    tiebreak = t.matches.filter(tiebreak=1).first()
    assert tiebreak is not None
    match_page = Client().get(f"/matches/{tiebreak.pk}/").content.decode()
    assert f"round {tiebreak.round}.1" in match_page


@pytest.mark.django_db
def test_the_list_of_tournaments_says_each_ones_format(user: Any, bots: list[Bot]) -> None:
    start(user, bots[:2], "knockout")
    start(user, bots[:2], "round-robin")
    page = Client().get("/tournaments/").content.decode()
    assert "<td>knockout</td>" in page and "<td>round robin</td>" in page


@pytest.mark.django_db
def test_the_form_and_the_page_link_to_the_formats_rules(user: Any, bots: list[Bot]) -> None:
    t = start(user, bots[:3], "swiss", games=1, rounds=2)
    for html in (
        logged_in(user).get("/tournaments/new/").content.decode(),
        Client().get(f"/tournaments/{t.pk}/").content.decode(),
    ):
        assert 'href="/guide/tournaments/"' in html
    rules = Client().get("/guide/tournaments/").content.decode()
    for heading in ("Round robin and double round robin", "Swiss", "Gauntlet", "Knockout"):
        assert f">{heading}</h2>" in rules or f">{heading}<" in rules
    assert "a Swiss and a knockout seed them by their current rating" in rules
