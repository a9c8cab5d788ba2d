"""The site's pages and downloads, called through Django's test client."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from arena.bots.models import Bot, BotVersion
from arena.games import privacy, services
from arena.games.models import Match, MatchRecord
from arena.ratings import services as ratings
from arena.tournaments.models import Tournament
from tests.arena.conftest import BOTS, make_version, zipped_folder
from tests.arena.games.test_matches import queued_match


def logged_in(user: Any) -> Client:
    c = Client()
    c.force_login(user)
    return c


@pytest.fixture
def real_match(user: Any, anchor: Any) -> Match:
    """A real game played by the referee (no worker), ratings fitted."""
    v = make_version(user, "alpha", folder=BOTS / "greedy")
    m = queued_match(v, anchor, variant="yinsh")
    assert services.play(m.pk) == "finished"
    ratings.refresh("yinsh")
    return Match.objects.get(pk=m.pk)


@pytest.mark.django_db
def test_public_pages_render(real_match: Match) -> None:
    c = Client()
    for url in (
        "/",
        "/leaderboard/yinsh/",
        "/leaderboard/blitz/",
        "/leaderboard/yinsh/?all=1",
        "/bots/",
        "/bots/alpha/",
        "/bots/random/",
        "/matches/",
        "/matches/?variant=yinsh&status=finished",
        f"/matches/{real_match.pk}/",
        "/tournaments/",
        "/accounts/login/",
        "/accounts/signup/",
        "/healthz",
    ):
        r = c.get(url)
        assert r.status_code == 200, url
    assert c.get("/leaderboard/").status_code == 302
    assert c.get("/leaderboard/chess/").status_code == 404
    assert c.get("/bots/nobody/").status_code == 404


def test_the_pages_static_files_are_found() -> None:
    from django.contrib.staticfiles import finders

    for name in ("arena/site.css", "arena/board.js", "arena/board.css"):
        assert finders.find(name), name


@pytest.mark.django_db
def test_the_leaderboard_shows_rank_bot_version_owner_elo_games_and_score(
    real_match: Match,
) -> None:
    page = Client().get("/leaderboard/yinsh/").content.decode()
    for text in ("alpha", "v1", "alice", "random", "1000", "%"):
        assert text in page


@pytest.mark.django_db
def test_the_bot_page_plots_the_rating_history(real_match: Match) -> None:
    page = Client().get("/bots/alpha/").content.decode()
    assert "<svg" in page and "polyline" in page and "alpha v1" in page
    assert f"/matches/{real_match.pk}/" in page


@pytest.mark.django_db
def test_the_bot_page_and_list_show_the_variants_each_version_plays(user: Any) -> None:
    old = make_version(user, "classic", status=BotVersion.Status.RETIRED)
    make_version(user, "classic", variants=["yinsh", "blitz"])
    BotVersion.objects.filter(bot__name="classic").update(declared_name="classic")
    make_version(user, "waiting", status=BotVersion.Status.PENDING)
    page = Client().get("/bots/classic/").content.decode()
    assert "· plays YINSH, Blitz YINSH</p>" in page  # the active version, under the title
    v1 = page[page.index(f'id="v{old.number}"') :]
    v2 = page[page.index('id="v2"') : page.index(f'id="v{old.number}"')]
    assert "plays YINSH, Blitz YINSH" in v2 and "plays every variant" in v1
    rows = Client().get("/bots/?status=all").content.decode()
    assert "<td>YINSH, Blitz YINSH</td>" in rows
    assert "<td>\N{EN DASH}</td>" in rows  # waiting: no active version


@pytest.mark.django_db
def test_the_match_page_embeds_the_replay_and_the_moves(real_match: Match) -> None:
    page = Client().get(f"/matches/{real_match.pk}/").content.decode()
    assert f'data-replay-url="/matches/{real_match.pk}/replay.json"' in page
    assert "arena/board.js" in page and "arena/board.css" in page
    assert real_match.reason in page and real_match.termination in page
    first_turn = MatchRecord.objects.get(match=real_match).record.split("\n\n")[1].split()[0]
    assert first_turn.split(".", 1)[1] in page
    replay = Client().get(f"/matches/{real_match.pk}/replay.json").json()
    assert len(replay["frames"]) == real_match.plies


@pytest.mark.django_db
def test_downloads_byte_match_the_records(real_match: Match) -> None:
    import engine

    data = MatchRecord.objects.get(match=real_match)
    c = Client()
    long_ = c.get(f"/matches/{real_match.pk}/record.txt")
    assert long_.content.decode() == data.record
    assert long_["Content-Disposition"] == f'attachment; filename="match-{real_match.pk}.txt"'
    short = c.get(f"/matches/{real_match.pk}/record.short.txt").content.decode()
    assert short == data.record_short
    record = engine.Record.parse(data.record)
    assert record.to_text(long=True) == data.record and record.to_text(long=False) == short
    shown = json.loads(c.get(f"/matches/{real_match.pk}/transcript.json").content)
    assert shown == privacy.transcript_for(None, real_match, data.transcript)
    assert shown["moves"] == [
        {k: v for k, v in m.items() if k != "info"} for m in data.transcript["moves"]
    ]


@pytest.mark.django_db
def test_signing_up_logs_in_and_the_token_page_shows_a_token(django_user_model: Any) -> None:
    c = Client()
    r = c.post(
        "/accounts/signup/",
        {"username": "carol", "password1": "a-very-long-pass-9", "password2": "a-very-long-pass-9"},
    )
    assert r.status_code == 302
    r = c.get("/accounts/token/")
    page = r.content.decode()
    assert "no-store" in r["Cache-Control"]  # a secret: kept by no cache, shared or the browser's
    from rest_framework.authtoken.models import Token

    key = Token.objects.get(user__username="carol").key
    assert key in page
    c.post("/accounts/token/")
    assert not Token.objects.filter(key=key).exists()
    assert c.post("/accounts/logout/").status_code == 302
    assert c.get("/accounts/token/").status_code == 302  # to the login page


@pytest.mark.django_db
def test_uploading_through_the_site(user: Any) -> None:
    c = logged_in(user)
    assert c.get("/upload/").status_code == 200
    f = SimpleUploadedFile("bot.zip", zipped_folder(BOTS / "random"))
    r = c.post("/upload/", {"name": "webbot", "description": "", "file": f})
    assert r.status_code == 302 and r["Location"] == "/bots/webbot/"
    assert BotVersion.objects.get(bot__name="webbot").status == "pending"
    r = c.post("/bots/webbot/upload/", {"file": SimpleUploadedFile("b.zip", b"garbage")})
    assert r.status_code == 200 and "not a zip archive" in r.content.decode()
    assert BotVersion.objects.filter(bot__name="webbot").count() == 1


@pytest.mark.django_db
def test_an_upload_too_large_is_refused_before_it_is_read(user: Any, settings: Any) -> None:
    """The declared length alone refuses it (413), on the site and the API; nothing is stored."""
    settings.BOT_UPLOAD_MAX_BYTES = 1024
    c = logged_in(user)
    body = b"x" * 10
    huge = str(5 * 1024 * 1024)
    r = c.generic("POST", "/upload/", body, "multipart/form-data; boundary=b", CONTENT_LENGTH=huge)
    assert r.status_code == 413 and "at most" in r.content.decode()
    r = c.generic(
        "POST", "/api/bots/", body, "multipart/form-data; boundary=b", CONTENT_LENGTH=huge
    )
    assert r.status_code == 413 and "at most" in r.json()["detail"]
    assert not BotVersion.objects.exists()


@pytest.mark.django_db
def test_a_description_longer_than_the_model_allows_is_refused(user: Any) -> None:
    c = logged_in(user)
    f = SimpleUploadedFile("bot.zip", zipped_folder(BOTS / "random"))
    r = c.post("/upload/", {"name": "longbot", "description": "d" * 2001, "file": f})
    assert r.status_code == 200 and "at most 2000 characters" in r.content.decode()
    assert not Bot.objects.filter(name="longbot").exists()


@pytest.mark.django_db
def test_uploading_needs_a_login() -> None:
    r = Client().get("/upload/")
    assert r.status_code == 302 and "/accounts/login/" in r["Location"]


@pytest.mark.django_db
def test_others_cannot_edit_delete_or_download_a_bot(user: Any, other_user: Any) -> None:
    make_version(user, "mine")
    c = logged_in(other_user)
    assert c.get("/bots/mine/edit/").status_code == 403
    assert c.post("/bots/mine/edit/", {"description": "x"}).status_code == 403
    assert c.post("/bots/mine/delete/").status_code == 403
    assert c.get("/bots/mine/upload/").status_code == 403
    assert c.get("/bots/mine/v1/source").status_code == 403
    assert c.get("/bots/mine/v1/check.json").status_code == 403
    assert "Check report" not in c.get("/bots/mine/").content.decode()
    assert Bot.objects.get(name="mine").description == ""
    owner = logged_in(user)
    assert "Check report" in owner.get("/bots/mine/").content.decode()
    assert owner.get("/bots/mine/v1/source").status_code == 200
    assert owner.post("/bots/mine/edit/", {"description": "mine"}).status_code == 302
    assert owner.post("/bots/mine/delete/").status_code == 302
    assert not Bot.objects.filter(name="mine").exists()


@pytest.mark.django_db
def test_organising_pausing_and_downloading_a_tournament(user: Any, other_user: Any) -> None:
    for name in ("a1", "b1", "c1"):
        make_version(user, name)
    c = logged_in(user)
    assert c.get("/tournaments/new/").status_code == 200
    bots = list(Bot.objects.filter(name__in=["a1", "b1", "c1"]).values_list("pk", flat=True))
    r = c.post(
        "/tournaments/new/",
        {
            "name": "Cup",
            "variant": "yangsh",
            "time_control": "5+0.1",
            "games_per_pair": 2,
            "bots": bots,
            "rated": "on",
        },
    )
    assert r.status_code == 302
    t = Tournament.objects.get()
    page = c.get(f"/tournaments/{t.pk}/").content.decode()
    assert "Standings" in page and "Cross-table" in page and "0 of 6 games finished" in page
    assert logged_in(other_user).post(f"/tournaments/{t.pk}/pause/").status_code == 403
    assert c.post(f"/tournaments/{t.pk}/pause/").status_code == 302
    assert Tournament.objects.get().status == "paused"
    # Each action is said in words (not "pause done.").
    said = c.get(f"/tournaments/{t.pk}/").content.decode()
    assert "Cup is paused: no new game starts" in said
    said = c.post(f"/tournaments/{t.pk}/resume/", follow=True).content.decode()
    assert "Cup plays on." in said
    said = c.post(f"/tournaments/{t.pk}/cancel/", follow=True).content.decode()
    assert "Cup is cancelled: its games not played yet will not be played." in said
    assert Tournament.objects.get().status == "cancelled"
    archive = Client().get(f"/tournaments/{t.pk}/archive.zip")
    assert archive.status_code == 200
    zipfile.ZipFile(io.BytesIO(archive.content)).testzip()


@pytest.mark.django_db
def test_an_invalid_tournament_form_shows_the_reason(user: Any) -> None:
    for name in ("a1", "b1"):
        make_version(user, name)
    bots = list(Bot.objects.values_list("pk", flat=True))
    r = logged_in(user).post(
        "/tournaments/new/",
        {
            "name": "Cup",
            "variant": "yinsh",
            "time_control": "forever",
            "games_per_pair": 2,
            "bots": bots,
        },
    )
    assert r.status_code == 200 and "bad time control" in r.content.decode()
    assert not Tournament.objects.exists()


@pytest.mark.django_db
def test_the_tournament_form_says_what_each_bot_plays_and_refuses_a_variant_one_lacks(
    user: Any,
) -> None:
    make_version(user, "a1")
    make_version(user, "classic", variants=["yinsh", "blitz"])
    c = logged_in(user)
    form = c.get("/tournaments/new/").content.decode()
    assert "classic (alice; plays only YINSH, Blitz YINSH; rated or unrated)" in form
    assert "a1 (alice; rated or unrated)<" in form
    r = c.post(
        "/tournaments/new/",
        {
            "name": "Cup",
            "variant": "yangsh",
            "time_control": "5+0.1",
            "games_per_pair": 2,
            "bots": list(Bot.objects.values_list("pk", flat=True)),
        },
    )
    assert r.status_code == 200
    assert "not playing Yangsh: classic v1 plays only YINSH, Blitz YINSH" in r.content.decode()
    assert not Tournament.objects.exists()


@pytest.mark.django_db
def test_the_admin_refuses_a_match_in_a_variant_a_version_does_not_play(
    django_user_model: Any, user: Any
) -> None:
    admin = django_user_model.objects.create_superuser("root", "r@example.org", "pw-long-1234")
    every = make_version(user, "every")
    classic = make_version(user, "classic", variants=["yinsh", "blitz"])
    fields = {
        "kind": "ladder",
        "status": "pending",
        "white": every.pk,
        "black": classic.pk,
        "time_control": "5+0.1",
        "seed": 1,
        "tiebreak": 0,
        "plies": 0,
        "attempts": 0,
        "rated": "on",
        "data-TOTAL_FORMS": 0,  # the record inline, empty
        "data-INITIAL_FORMS": 0,
    }
    c = logged_in(admin)
    r = c.post("/admin/games/match/add/", {**fields, "variant": "yangsh"})
    assert r.status_code == 200 and not Match.objects.exists()
    assert "classic v1 does not play yangsh: it plays yinsh, blitz" in r.content.decode()
    assert c.post("/admin/games/match/add/", {**fields, "variant": "blitz"}).status_code == 302
    assert Match.objects.get().variant == "blitz"


@pytest.mark.django_db
def test_the_admin_lists_every_model(django_user_model: Any) -> None:
    admin = django_user_model.objects.create_superuser("root", "r@example.org", "pw-long-1234")
    c = logged_in(admin)
    for url in (
        "/admin/bots/bot/",
        "/admin/bots/botversion/",
        "/admin/games/match/",
        "/admin/ratings/pairstats/",
        "/admin/ratings/rating/",
        "/admin/ratings/ratingpoint/",
        "/admin/ratings/ratingstate/",
        "/admin/tournaments/tournament/",
    ):
        assert c.get(url).status_code == 200, url


@pytest.mark.django_db
def test_the_admin_shows_a_rating_whose_interval_is_unknown(
    django_user_model: Any, user: Any
) -> None:
    from arena.ratings.models import Rating

    admin = django_user_model.objects.create_superuser("root", "r@example.org", "pw-long-1234")
    v = make_version(user, "newcomer")
    r = Rating.objects.create(
        variant="yinsh", version=v, elo=1000, error=None, games=1, points=0, rank=1
    )
    c = logged_in(admin)
    assert c.get("/admin/ratings/rating/").status_code == 200
    page = c.get(f"/admin/ratings/rating/{r.pk}/change/")
    assert page.status_code == 200 and "interval unknown" in page.content.decode()


@pytest.mark.django_db
def test_the_admin_warns_of_held_versions_and_checks_them_again(
    django_user_model: Any, user: Any, django_capture_on_commit_callbacks: Any
) -> None:
    admin = django_user_model.objects.create_superuser("root", "r@example.org", "pw-long-1234")
    held = make_version(user, "stuck", status=BotVersion.Status.HELD)
    c = logged_in(admin)
    page = c.get("/admin/bots/botversion/").content.decode()
    assert "1 version(s) are held" in page
    assert c.get(f"/admin/bots/botversion/{held.pk}/change/").status_code == 200
    with django_capture_on_commit_callbacks(execute=False) as sent:
        r = c.post(
            "/admin/bots/botversion/",
            {"action": "recheck", "_selected_action": [held.pk]},
            follow=True,
        )
    assert "1 version(s) queued for a new check" in r.content.decode()
    held.refresh_from_db()
    assert held.status == BotVersion.Status.PENDING and len(sent) == 1


# ----------------------------------------------------------------------------- the bot list


def listed(url: str) -> list[str]:
    """The bots a list page shows, by name."""
    page = Client().get(url).content.decode()
    return sorted(
        name
        for name in ("playing", "refused", "waiting", "gone")
        if f'href="/bots/{name}/"' in page
    )


@pytest.fixture
def bots_of_every_standing(user: Any) -> None:
    make_version(user, "playing")
    make_version(user, "refused", status=BotVersion.Status.REJECTED)
    make_version(user, "waiting", status=BotVersion.Status.PENDING)
    make_version(user, "gone")
    Bot.objects.filter(name="gone").update(status=Bot.Status.WITHDRAWN)


@pytest.mark.django_db
def test_the_bot_list_shows_active_bots_unless_asked_for_others(
    bots_of_every_standing: None,
) -> None:
    assert listed("/bots/") == ["playing"]
    assert listed("/bots/?status=active") == ["playing"]
    assert listed("/bots/?status=rejected") == ["refused"]
    assert listed("/bots/?status=waiting") == ["waiting"]
    assert listed("/bots/?status=withdrawn") == ["gone"]
    assert listed("/bots/?status=all") == ["gone", "playing", "refused", "waiting"]
    assert Client().get("/bots/?status=nonsense").status_code == 400


@pytest.mark.django_db
def test_the_bot_lists_filter_links_and_pager_keep_the_url_clean(
    bots_of_every_standing: None, user: Any
) -> None:
    page = Client().get("/bots/").content.decode()
    for href in ('href="?status=rejected"', 'href="?status=all"', 'href="?status=withdrawn"'):
        assert href in page
    assert 'href="?"' in page  # the default: /bots/ with nothing after it
    assert "status=&" not in page and "?&" not in page
    for k in range(101):
        make_version(user, f"bot{k:03}", status=BotVersion.Status.REJECTED)
    rejected = Client().get("/bots/?status=rejected").content.decode()
    assert 'href="?status=rejected&amp;page=2"' in rejected
    default = Client().get("/bots/").content.decode()
    assert "page=2" not in default


@pytest.mark.django_db
def test_the_tournament_form_marks_the_bots_a_rated_tournament_may_include(
    user: Any, other_user: Any, anchor: Any
) -> None:
    make_version(user, "a1")
    make_version(other_user, "rival")
    make_version(other_user, "willing")
    Bot.objects.filter(name="willing").update(rated_tournaments=True)
    form = logged_in(user).get("/tournaments/new/").content.decode()
    assert "a1 (alice; rated or unrated)<" in form  # the organiser's own
    assert "random (arena; rated or unrated)<" in form  # built-in
    assert "willing (bob; rated or unrated)<" in form  # opted in
    assert "rival (bob; unrated only)<" in form
    # The same bots as bob sees them: alice's are now the other people's.
    form = logged_in(other_user).get("/tournaments/new/").content.decode()
    assert "a1 (alice; unrated only)<" in form and "rival (bob; rated or unrated)<" in form


@pytest.mark.django_db
def test_a_rated_tournament_form_with_bots_not_opted_in_names_them(
    user: Any, other_user: Any
) -> None:
    make_version(user, "a1")
    make_version(other_user, "rival")
    c = logged_in(user)
    body = {
        "name": "Cup",
        "variant": "yinsh",
        "time_control": "5+0.1",
        "games_per_pair": 2,
        "bots": list(Bot.objects.values_list("pk", flat=True)),
    }
    r = c.post("/tournaments/new/", {**body, "rated": "on"})
    assert r.status_code == 200  # the form again, with the reason
    assert "these do not: rival (make it unrated, or leave them out)" in r.content.decode()
    assert not Tournament.objects.exists()
    assert c.post("/tournaments/new/", body).status_code == 302  # unrated
    assert not Tournament.objects.get().rated


@pytest.mark.django_db
def test_the_owner_opts_in_to_rated_tournaments_on_the_edit_page(user: Any) -> None:
    make_version(user, "mybot")
    c = logged_in(user)
    assert "Accept rated tournaments" in c.get("/bots/mybot/edit/").content.decode()
    assert not Bot.objects.get(name="mybot").rated_tournaments  # off until the owner says
    c.post("/bots/mybot/edit/", {"description": "hi", "rated_tournaments": "on"})
    assert Bot.objects.get(name="mybot").rated_tournaments
    c.post("/bots/mybot/edit/", {"description": "hi"})
    assert not Bot.objects.get(name="mybot").rated_tournaments


@pytest.mark.django_db
def test_the_owner_lets_the_bot_answer_on_the_analysis_board_on_the_edit_page(user: Any) -> None:
    make_version(user, "mybot")
    c = logged_in(user)
    assert "Answer on the analysis board" in c.get("/bots/mybot/edit/").content.decode()
    assert not Bot.objects.get(name="mybot").analysis  # off until the owner says
    c.post("/bots/mybot/edit/", {"description": "hi", "analysis": "on"})
    assert Bot.objects.get(name="mybot").analysis
    c.post("/bots/mybot/edit/", {"description": "hi"})
    assert not Bot.objects.get(name="mybot").analysis


@pytest.mark.django_db
def test_a_remote_bots_edit_page_offers_no_analysis_board(user: Any) -> None:
    from arena.bots import services as bot_services

    bot_services.create_remote_bot(user, "far")
    c = logged_in(user)
    page = c.get("/bots/far/edit/").content.decode()
    assert "Answer on the analysis board" not in page and "Let people play it" in page
    r = c.post("/bots/far/edit/", {"description": "hi", "analysis": "on", "people": "on"})
    assert r.status_code == 302
    far = Bot.objects.get(name="far")
    assert not far.analysis and far.people and far.description == "hi"


@pytest.mark.django_db
def test_the_match_page_counts_its_actions_in_words(user: Any, anchor: Any) -> None:
    from arena.jobs import claims
    from tests.arena.games.test_matches import fake_result

    m = queued_match(make_version(user, "counter"), anchor)
    services.finish(m.pk, claims.claim(Match, m.pk), fake_result())
    Match.objects.filter(pk=m.pk).update(plies=1, duration_s=2.0)
    assert "2.0 s, 1 action</td>" in Client().get(f"/matches/{m.pk}/").content.decode()
    Match.objects.filter(pk=m.pk).update(plies=2)
    assert "2.0 s, 2 actions</td>" in Client().get(f"/matches/{m.pk}/").content.decode()


@pytest.mark.django_db
def test_deleting_a_bot_returns_its_owner_to_my_bots(user: Any) -> None:
    make_version(user, "gone", status=BotVersion.Status.REJECTED)
    r = logged_in(user).post("/bots/gone/delete/")
    assert r.status_code == 302 and r["Location"] == "/accounts/bots/"
    assert not Bot.objects.filter(name="gone").exists()


@pytest.mark.django_db
def test_the_match_lists_page_links_carry_no_empty_filters() -> None:
    r = Client().get("/matches/?bot=&variant=&status=&kind=ladder&termination=&version=&page=1")
    assert r.status_code == 200
    assert r.context["extra"] == "kind=ladder&"
