"""The API of remote bots: registering one and its versions, and the client's endpoints (work,
answers, logs), each with the bad input it refuses without changing anything."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from rest_framework.test import APIClient

from arena.bots.models import Bot, BotVersion
from arena.games import ladder, remote
from arena.games.models import Match, RemoteGame, RemoteLine
from arena.jobs import claims
from tests.arena.api.test_api import client_for
from tests.arena.conftest import make_version
from tests.arena.games.test_matches import queued_match


def register(api: APIClient, name: str = "far", **extra: Any) -> Any:
    return api.post("/api/bots/", {"name": name, "remote": True, **extra}, format="json")


def game_of(user: Any, other_user: Any, name: str = "far") -> tuple[Bot, RemoteGame, int]:
    """A remote bot of ``user`` playing a running match against ``other_user``'s bot, with
    its ``hello`` sent (the transport a worker would make); returns the line's seq."""
    r = register(client_for(user), name)
    assert r.status_code == 201, r.content
    mine = BotVersion.objects.get(pk=r.json()["id"])
    theirs = make_version(other_user, f"{name}-opponent")
    match = queued_match(mine, theirs)
    attempt = claims.claim(Match, match.pk)
    assert attempt is not None
    t = remote.RemoteTransport(match, attempt, "white", mine.bot_id, line_limit=64 * 1024)
    t.send(b'{"type":"hello"}\n', time.monotonic() + 5)
    line = RemoteLine.objects.get(game=t.game)
    return mine.bot, t.game, line.pk


@pytest.mark.django_db
def test_a_remote_bot_is_registered_with_an_active_version_and_no_file(user: Any) -> None:
    r = register(client_for(user), variants=["blitz", "yinsh"], description="mine")
    assert r.status_code == 201, r.content
    body = r.json()
    assert (body["status"], body["kind"], body["size"], body["variants"]) == (
        "active",
        "remote",
        0,
        ["yinsh", "blitz"],
    )
    detail = client_for(user).get("/api/bots/far/").json()
    assert detail["remote"] is True and [v["number"] for v in detail["versions"]] == [1]
    # Its version has no file to download, and its owner is given no address for one.
    assert client_for(user).get(f"/api/versions/{body['id']}/source/").status_code == 404
    assert body["source_url"] is None and detail["versions"][0]["source_url"] is None
    again = client_for(user).post("/api/bots/far/versions/", {}, format="json")
    assert again.status_code == 201 and again.json()["source_url"] is None
    version = client_for(user).get(f"/api/versions/{body['id']}/").json()
    assert version["kind"] == "remote" and version["source_url"] is None
    # An uploaded version's owner still gets one.
    uploaded = make_version(user, "near")
    shown = client_for(user).get(f"/api/versions/{uploaded.pk}/").json()
    assert shown["source_url"].endswith(f"/api/versions/{uploaded.pk}/source/")


@pytest.mark.django_db
def test_a_remote_bot_gets_a_new_version_when_its_owner_says_so(user: Any, other_user: Any) -> None:
    register(client_for(user), variants=["blitz"])
    r = client_for(user).post("/api/bots/far/versions/", {}, format="json")
    assert r.status_code == 201, r.content
    assert (r.json()["number"], r.json()["status"], r.json()["variants"]) == (
        2,
        "active",
        ["blitz"],
    )
    versions = dict(BotVersion.objects.filter(bot__name="far").values_list("number", "status"))
    assert versions == {1: "retired", 2: "active"}
    r = client_for(user).post("/api/bots/far/versions/", {"variants": ["yinsh"]}, format="json")
    assert r.status_code == 201 and r.json()["variants"] == ["yinsh"]
    # Not someone else's, and no unknown variant.
    assert (
        client_for(other_user).post("/api/bots/far/versions/", {}, format="json").status_code == 403
    )
    bad = client_for(user).post("/api/bots/far/versions/", {"variants": ["chess"]}, format="json")
    assert bad.status_code == 400 and "unknown variant" in bad.json()["detail"]
    assert BotVersion.objects.filter(bot__name="far").count() == 3


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"name": "far", "remote": False}, 400),
        ({"name": "far", "remote": "maybe"}, 400),
        ({"name": "far", "remote": True, "variants": ["chess"]}, 400),
        ({"name": "far", "remote": True, "variants": "yinsh"}, 400),
        ({"name": "F A R", "remote": True}, 400),
        ({"remote": True}, 400),
    ],
)
def test_a_bad_registration_is_refused_and_registers_nothing(
    user: Any, body: dict[str, Any], status: int
) -> None:
    r = client_for(user).post("/api/bots/", body, format="json")
    assert r.status_code == status, r.content
    assert not Bot.objects.exists()


@pytest.mark.django_db
def test_a_registration_that_is_not_an_object_is_an_upload_refused(user: Any) -> None:
    r = client_for(user).post("/api/bots/", "null", content_type="application/json")
    assert r.status_code == 400
    assert not Bot.objects.exists()


@pytest.mark.django_db
def test_registration_needs_a_login_and_a_free_name(user: Any, other_user: Any) -> None:
    assert register(APIClient()).status_code == 401
    assert register(client_for(user)).status_code == 201
    taken = register(client_for(other_user))
    assert taken.status_code == 400 and "exists already" in str(taken.json())
    assert Bot.objects.count() == 1


@pytest.mark.django_db
def test_the_ladder_never_schedules_a_remote_bot(user: Any, other_user: Any) -> None:
    register(client_for(user), "far-a")
    register(client_for(other_user), "far-b")
    assert ladder.schedule_variant("yinsh", depth=4) == []
    make_version(user, "near-a")
    make_version(other_user, "near-b")
    made = ladder.schedule_variant("yinsh", depth=4)
    assert made and all(not m.has_remote_player() for m in made)


@pytest.mark.django_db
def test_remote_bots_stay_out_of_the_sandboxes_ratings(user: Any, other_user: Any) -> None:
    from arena.duels import services as duels
    from arena.tournaments import services as tournaments

    far = BotVersion.objects.get(pk=register(client_for(user), "far").json()["id"])
    near = make_version(other_user, "near")
    Bot.objects.filter(pk=near.bot_id).update(rated_challenges=True)
    near.bot.refresh_from_db()
    with pytest.raises(duels.DuelError, match="unrated challenges only"):
        duels.start_challenge(user, far, near, variant="yinsh", games=2, rated=True)
    assert not duels.start_challenge(user, far, near, variant="yinsh", games=2).rated
    # Even its owner's own tournament is unrated with it, and refused when asked rated.
    assert not far.bot.accepts_rated_tournaments(user.pk)
    mine = make_version(user, "mine")
    t = tournaments.create(
        user,
        name="mixed",
        variant="yinsh",
        time_control="5+0.1",
        games_per_pair=2,
        bots=[far.bot, mine.bot],
    )
    assert not t.rated
    with pytest.raises(tournaments.TournamentError, match="far"):
        tournaments.create(
            user,
            name="mixed rated",
            variant="yinsh",
            time_control="5+0.1",
            games_per_pair=2,
            bots=[far.bot, mine.bot],
            rated=True,
        )


@pytest.mark.django_db
def test_a_game_with_a_remote_player_goes_to_the_remote_queue(user: Any, other_user: Any) -> None:
    register(client_for(user))
    mine = BotVersion.objects.get(bot__name="far")
    theirs = make_version(other_user, "near")
    assert queued_match(mine, theirs).queue() == settings.REMOTE_QUEUE
    assert queued_match(theirs, make_version(user, "near-too")).queue() is None
    # Its task's time limits grow with the latency allowance of every action.
    with_remote = queued_match(mine, theirs).time_limits()
    without = queued_match(theirs, make_version(user, "other")).time_limits()
    assert with_remote[0] > without[0]


# ----------------------------------------------------------------------------- the client's side


@pytest.mark.django_db
def test_the_client_is_given_its_open_games_and_their_waiting_line(
    user: Any, other_user: Any
) -> None:
    _bot, game, seq = game_of(user, other_user)
    r = client_for(user).get("/api/remote/far/events/")
    assert r.status_code == 200, r.content
    assert r.json() == {
        "cursor": seq,
        "games": [
            {
                "game": game.pk,
                "match": game.match_id,
                "color": "white",
                "variant": "yinsh",
                "seq": seq,
                "line": '{"type":"hello"}',
            }
        ],
    }
    # Answered, the game waits on no line; asked again, the client is told at once.
    assert (
        client_for(user)
        .post(f"/api/remote/far/games/{game.pk}/answer/", {"seq": seq, "line": "x"}, format="json")
        .status_code
        == 204
    )
    again = client_for(user).get(f"/api/remote/far/events/?since={seq}").json()
    assert again["games"][0]["seq"] is None and again["cursor"] == seq


@pytest.mark.django_db(transaction=True)
def test_a_long_poll_returns_as_soon_as_a_line_is_sent(user: Any, other_user: Any) -> None:
    _bot, game, seq = game_of(user, other_user)

    def later() -> None:  # the referee's thread sends the next line meanwhile
        try:
            time.sleep(0.5)
            RemoteLine.objects.create(game=game, line='{"type":"request"}')
        finally:
            connection.close()

    thread = threading.Thread(target=later)
    thread.start()
    r = client_for(user).get(f"/api/remote/far/events/?since={seq}&wait=20")
    thread.join()
    assert r.status_code == 200
    assert r.json()["games"][0]["line"] == '{"type":"request"}'
    assert r.json()["cursor"] > seq


@pytest.mark.django_db
def test_a_client_disconnected_is_given_the_waiting_line_again(user: Any, other_user: Any) -> None:
    _bot, _game, seq = game_of(user, other_user)
    first = client_for(user).get("/api/remote/far/events/").json()
    second = client_for(user).get("/api/remote/far/events/").json()
    assert first == second and first["games"][0]["seq"] == seq


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("who", "path", "status"),
    [
        ("anonymous", "/api/remote/far/events/", 401),
        ("other", "/api/remote/far/events/", 403),
        ("owner", "/api/remote/nobody/events/", 404),
        ("owner", "/api/remote/near/events/", 404),  # not a remote bot
        ("owner", "/api/remote/far/events/?since=-1", 400),
        ("owner", "/api/remote/far/events/?wait=soon", 400),
    ],
)
def test_the_events_refuse_what_is_not_theirs_to_ask(
    user: Any, other_user: Any, who: str, path: str, status: int
) -> None:
    game_of(user, other_user)
    make_version(user, "near")
    client = {"anonymous": APIClient(), "other": client_for(other_user), "owner": client_for(user)}
    assert client[who].get(path).status_code == status


@pytest.mark.django_db
def test_bad_answers_are_refused_and_change_nothing(user: Any, other_user: Any) -> None:
    _bot, game, seq = game_of(user, other_user)
    _other_bot, other_game, other_seq = game_of(other_user, user, "far-other")
    owner = client_for(user)
    url = f"/api/remote/far/games/{game.pk}/answer/"
    cases = [
        (owner.post(url, "{not json", content_type="application/json"), 400),
        (owner.post(url, {"seq": seq}, format="json"), 400),
        (owner.post(url, {"seq": seq, "line": 5}, format="json"), 400),
        (owner.post(url, {"seq": "x", "line": "a"}, format="json"), 400),
        (owner.post(url, {"seq": seq, "line": "a\nb"}, format="json"), 400),
        (owner.post(url, {"seq": seq + 1000, "line": "a"}, format="json"), 409),  # stale
        # Another bot's game, through this bot's address or the other's.
        (
            owner.post(
                f"/api/remote/far/games/{other_game.pk}/answer/",
                {"seq": other_seq, "line": "a"},
                format="json",
            ),
            404,
        ),
        (
            owner.post(
                f"/api/remote/far-other/games/{other_game.pk}/answer/",
                {"seq": other_seq, "line": "a"},
                format="json",
            ),
            403,
        ),
        (APIClient().post(url, {"seq": seq, "line": "a"}, format="json"), 401),
        # A game that is no number: this API's 404, in JSON.
        (owner.post("/api/remote/far/games/x%0A/answer/", {"seq": seq, "line": "a"}), 404),
    ]
    for response, status in cases:
        assert response.status_code == status, (response.status_code, response.content)
    assert not RemoteLine.objects.filter(answer__isnull=False).exists()
    # Answered once; a second answer to the same line is stale.
    assert owner.post(url, {"seq": seq, "line": "ok"}, format="json").status_code == 204
    again = owner.post(url, {"seq": seq, "line": "again"}, format="json")
    assert again.status_code == 409
    assert RemoteLine.objects.get(pk=seq).answer == "ok"


@pytest.mark.django_db
def test_an_answer_to_a_game_that_is_over_is_refused(user: Any, other_user: Any) -> None:
    _bot, game, seq = game_of(user, other_user)
    RemoteGame.objects.filter(pk=game.pk).update(closed_at=game.created_at)
    r = client_for(user).post(
        f"/api/remote/far/games/{game.pk}/answer/", {"seq": seq, "line": "a"}, format="json"
    )
    assert r.status_code == 409 and "over" in r.json()["detail"]
    assert client_for(user).get("/api/remote/far/events/").json()["games"] == []


@pytest.mark.django_db
def test_a_dead_claims_games_are_no_longer_given(user: Any, other_user: Any) -> None:
    _bot, game, _seq = game_of(user, other_user)
    Match.objects.filter(pk=game.match_id).update(attempts=2)  # the match's next claim
    assert client_for(user).get("/api/remote/far/events/").json()["games"] == []


@pytest.mark.django_db
def test_the_log_keeps_what_the_client_forwards(user: Any, other_user: Any) -> None:
    _bot, game, _seq = game_of(user, other_user)
    url = f"/api/remote/far/games/{game.pk}/log/"
    owner = client_for(user)
    assert owner.post(url, {"stderr": "thinking\n"}, format="json").status_code == 204
    assert owner.post(url, {"stderr": "déjà\n"}, format="json").status_code == 204
    game.refresh_from_db()
    assert (game.stderr_tail, game.stderr_bytes) == ("thinking\ndéjà\n", 16)
    for response, status in [
        (owner.post(url, {"stderr": 3}, format="json"), 400),
        (owner.post(url, "]", content_type="application/json"), 400),
        (owner.post(url, {"stderr": "x" * (remote.LOG_REQUEST_LIMIT + 1)}, format="json"), 400),
        (owner.post("/api/remote/far/games/999999/log/", {"stderr": "x"}, format="json"), 404),
        (client_for(other_user).post(url, {"stderr": "x"}, format="json"), 403),
    ]:
        assert response.status_code == status, response.content
    game.refresh_from_db()
    assert game.stderr_bytes == 16


@pytest.mark.django_db
def test_a_remote_bot_is_challenged_and_challenges_through_the_duel_api(
    user: Any, other_user: Any
) -> None:
    register(client_for(user), "far")
    far = BotVersion.objects.get(bot__name="far")
    near = make_version(other_user, "near")
    for api, candidate, opponent in (
        (client_for(other_user), near, far),  # someone else's remote bot as the opponent
        (client_for(user), far, near),  # the remote bot as the candidate
    ):
        r = api.post(
            "/api/duels/",
            {
                "kind": "challenge",
                "candidate": candidate.pk,
                "opponent": opponent.pk,
                "variant": "yinsh",
                "games": 2,
            },
            format="json",
        )
        assert r.status_code == 201, r.content
        matches = Match.objects.filter(duel_id=r.json()["id"])
        assert matches.count() == 2
        assert all(m.queue() == settings.REMOTE_QUEUE for m in matches)
