"""What a first-time visitor reads: pages and API answers that say what they mean, once."""

from __future__ import annotations

import html
import itertools
import re
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from arena.bots.models import BotVersion
from arena.games import services as games
from arena.games.models import Match
from arena.jobs import claims
from arena.ratings.models import Rating, RatingPoint
from arena.referee.redaction import info_text
from arena.tournaments import services as tournaments
from tests.arena.api.test_api import client_for
from tests.arena.conftest import BOTS, make_version, zipped_folder
from tests.arena.games.test_matches import fake_result, queued_match
from tests.arena.tournaments.test_tournaments import finish_one, start


def bot_row(page: str, name: str) -> str:
    start_at = page.index(f'href="/bots/{name}/"')
    return page[start_at : page.index("</tr>", start_at)]


@pytest.mark.django_db
def test_the_bot_list_calls_a_bot_active_only_when_a_version_plays(user: Any) -> None:
    make_version(user, "refused", status=BotVersion.Status.REJECTED)
    make_version(user, "waiting", status=BotVersion.Status.PENDING)
    make_version(user, "playing")
    page = Client().get("/bots/?status=all").content.decode()
    assert "<td>rejected</td>" in bot_row(page, "refused")
    assert ">active<" not in bot_row(page, "refused")
    assert "<td>waiting for its check</td>" in bot_row(page, "waiting")
    assert "<td>active</td>" in bot_row(page, "playing")


@pytest.mark.django_db
def test_tournament_progress_counts_finished_games_and_cancelled_apart(
    user: Any, settings: Any
) -> None:
    entrants = [make_version(user, f"cup-{i}") for i in range(3)]
    t = start(user, entrants, games_per_pair=2)
    finish_one(t.matches.filter(status=Match.Status.QUEUED).first())
    assert tournaments.cancel(user, t)
    progress = tournaments.progress(t)
    assert (progress.total, progress.finished, progress.cancelled) == (6, 1, 5)
    assert progress.done == 1 and round(progress.percent) == 17
    page = Client().get(f"/tournaments/{t.pk}/").content.decode()
    assert "1 of 6 games finished" in page and "5 cancelled" in page
    assert "6 of 6" not in page
    assert 'aria-valuenow="1"' in page


def chart(page: str, title: str) -> str:
    at = page.index(f"<figcaption>{title}</figcaption>")
    return page[at : page.index("</svg>", at)]


@pytest.mark.django_db
def test_a_rating_charts_legend_gives_the_rating_the_table_gives(user: Any) -> None:
    v = make_version(user, "climber")
    day = timezone.now() - timedelta(days=3)
    for variant, elos, now in (("yinsh", (1300.0, 1342.0), 1360.0), ("blitz", (990.0,), 1004.0)):
        for i, elo in enumerate(elos):
            RatingPoint.objects.create(
                variant=variant, version=v, at=day + timedelta(days=i), elo=elo, games=4 + i
            )
        Rating.objects.create(
            variant=variant, version=v, elo=now, error=40.0, games=50, points=25.0, rank=1
        )
    page = Client().get("/bots/climber/").content.decode()
    assert "climber v1 (now 1360)" in chart(page, "YINSH") and "now 1342" not in page
    assert "climber v1 (now 1004)" in chart(page, "Blitz YINSH")
    assert '<td class="num">1360' in page and '<td class="num">1004' in page


@pytest.mark.django_db
def test_rating_charts_label_their_axes_alike(user: Any) -> None:
    v = make_version(user, "steady")
    start_at = timezone.now() - timedelta(days=10)
    for variant, elos in (("yinsh", (1012.0, 1377.0, 1291.0)), ("blitz", (1003.0, 1009.0))):
        for i, elo in enumerate(elos):
            at = start_at + timedelta(days=i, minutes=7 * i)
            RatingPoint.objects.create(variant=variant, version=v, at=at, elo=elo, games=i + 1)
    page = Client().get("/bots/steady/").content.decode()
    formats = []
    for title in ("YINSH", "Blitz YINSH"):
        svg = chart(page, title)
        assert 'class="axis-title">Elo</text>' in svg and "time (UTC)</text>" in svg
        ticks = [int(t) for t in re.findall(r'class="tick-y"[^>]*>(-?\d+)</text>', svg)]
        assert len(ticks) >= 3
        steps = {b - a for a, b in itertools.pairwise(ticks)}
        (step,) = steps  # evenly spaced, at round numbers
        assert step in (10, 20, 25, 50, 100, 200, 250, 500) and ticks[0] % step == 0
        dates = re.findall(r'class="tick-x"[^>]*>([^<]+)</text>', svg)
        assert len(dates) == 2
        formats.append({re.sub(r"\d", "9", d) for d in dates})
    assert formats[0] == formats[1] and len(formats[0]) == 1


@pytest.mark.django_db
def test_the_upload_form_says_what_a_bot_name_may_be(user: Any) -> None:
    c = Client()
    c.force_login(user)
    for name in ("Bad_Name!", "x" * 41):
        f = SimpleUploadedFile("bot.zip", zipped_folder(BOTS / "random"))
        r = c.post("/upload/", {"name": name, "description": "", "file": f})
        assert r.status_code == 200, name
        errors = re.findall(r'<ul class="errorlist[^"]*"[^>]*>(.*?)</ul>', r.content.decode(), re.S)
        assert any(
            "2 to 40 characters: lower-case letters, digits, - and _" in html.unescape(e)
            for e in errors
        ), (name, errors)
    assert not BotVersion.objects.exists()


@pytest.mark.django_db
def test_the_footer_links_a_readable_api_reference_and_keeps_the_raw_schema() -> None:
    page = Client().get("/").content.decode()
    footer = page[page.index("<footer>") : page.index("</footer>")]
    links = dict(
        (text, href) for href, text in re.findall(r'<a href="([^"]+)"[^>]*>([^<]+)</a>', footer)
    )
    assert links["API reference"] == "/api/docs/"
    assert links["OpenAPI schema (YAML)"] == "/api/schema/"
    docs = Client().get(links["API reference"])
    assert docs.status_code == 200 and docs["Content-Type"].startswith("text/html")
    assert "Content-Disposition" not in docs
    # Its script is a file of its own (the Content-Security-Policy runs no inline script),
    # and it reads the raw schema.
    scripts = re.findall(r'<script src="([^"]+)"', docs.content.decode())
    assert "/api/docs/?script=" in scripts
    assert "/api/schema/" in Client().get("/api/docs/?script=").content.decode()


def footer_links() -> dict[str, str]:
    page = Client().get("/").content.decode()
    footer = page[page.index("<footer>") : page.index("</footer>")]
    return {text: href for href, text in re.findall(r'<a href="([^"]+)"[^>]*>([^<]+)</a>', footer)}


@pytest.mark.django_db
def test_the_footer_links_the_source_code_where_the_site_says_it_is(settings: Any) -> None:
    settings.SOURCE_URL = "https://example.org/yinsh-arena"
    assert footer_links()["Source code"] == "https://example.org/yinsh-arena"


@pytest.mark.django_db
def test_the_footer_has_no_source_link_when_the_site_names_no_source(settings: Any) -> None:
    settings.SOURCE_URL = ""
    links = footer_links()
    assert "Source code" not in links and "API reference" in links


def info_game(owner: Any, info: Any) -> Match:
    """A finished game whose white bot (``owner``'s) sent ``info`` with its first action."""
    white, black = make_version(owner, "thinker"), make_version(owner, "other")
    m = queued_match(white, black)
    result = fake_result(result="black")
    moves = [
        {"color": "white", "action": "e3", "ms": 12.5, "info": info},
        {"color": "black", "action": "a5", "ms": 3.0},
    ]
    players = {c: {"name": c, "stderr_tail": "", "stderr_bytes": 0} for c in ("white", "black")}
    transcript = {**result.transcript, "moves": moves, "players": players}
    assert games.finish(m.pk, claims.claim(Match, m.pk), replace(result, transcript=transcript))
    return Match.objects.get(pk=m.pk)


def test_info_reads_as_keys_and_values() -> None:
    assert info_text({"depth": 3, "pv": ["e3", "a5"], "eval": {"w": 0.5}}) == (
        "depth: 3 · pv: e3 a5 · eval: (w: 0.5)"
    )
    assert info_text("thinking hard") == "thinking hard"
    assert info_text(7) == "7" and info_text(None) == "" and info_text({}) == ""
    assert info_text({"ok": True, "none": None}) == "ok: true · none: null"


@pytest.mark.django_db
def test_the_owner_reads_a_bots_info_as_keys_and_values(user: Any, other_user: Any) -> None:
    m = info_game(user, {"depth": 3, "pv": ["e3", "a5"]})
    c = Client()
    c.force_login(user)
    page = html.unescape(c.get(f"/matches/{m.pk}/").content.decode())
    log = page[page.index('id="log-white"') :]
    # (PostgreSQL's jsonb keeps the keys in an order of its own.)
    assert any(
        f"{a} · {b}" in log for a, b in (("depth: 3", "pv: e3 a5"), ("pv: e3 a5", "depth: 3"))
    )
    assert '"depth"' not in page
    c.force_login(other_user)
    assert "depth: 3" not in c.get(f"/matches/{m.pk}/").content.decode()  # its owner's only


@pytest.mark.django_db
def test_the_match_page_says_the_result_once_and_lists_the_moves_once(user: Any) -> None:
    m = info_game(user, None)
    page = html.unescape(Client().get(f"/matches/{m.pk}/").content.decode())
    row = re.search(r"<tr><th>Result</th><td>(.*?)</td></tr>", page)
    assert row is not None and row.group(1) == "0-1 (black wins)"
    # The list of moves is the replay's: written in the page only for a browser without
    # JavaScript, inside the box the replay takes over.
    assert page.count('<ol class="moves"') == 1 and page.count("<h2>Moves</h2>") == 0
    box = page[page.index('class="yinsh-replay"') :]
    box = box[: box.index("</div>")]
    assert '<ol class="moves"' in box and "<code>e3</code>" in box


def listed_ids(page: str) -> list[int]:
    table = page[page.index('<table class="matches">') :]
    table = table[: table.index("</table>")]
    return [int(pk) for pk in re.findall(r'<td><a href="/matches/(\d+)/">', table)]


@pytest.mark.django_db
def test_every_list_of_matches_is_newest_first_by_number(user: Any) -> None:
    entrants = [make_version(user, f"cup-{i}") for i in range(3)]
    t = start(user, entrants, games_per_pair=1)
    made = list(t.matches.order_by("id"))
    for m in made:  # the newest game finishes first, the oldest last
        Match.objects.filter(pk=m.pk).update(status=Match.Status.QUEUED)
    for m in reversed(made):
        finish_one(m)
    newest_first = sorted((m.pk for m in made), reverse=True)
    assert listed_ids(Client().get("/").content.decode()) == newest_first
    assert listed_ids(Client().get(f"/tournaments/{t.pk}/").content.decode()) == newest_first
    assert listed_ids(Client().get("/matches/").content.decode()) == newest_first
    api = [m["id"] for m in client_for().get("/api/matches/").json()["results"]]
    assert api == newest_first
