"""The pages' event streams (:mod:`arena.web.events`, :mod:`arena.web.streams`), read as a
browser's EventSource reads them: a live match's feed as the game moves on, resumed from the last
event's id, ended when the game is over or the stream's lifetime is up, with each viewer's own
``info`` only; and the ``changed`` events of the pages of things under way. The tests step
through ``streaming_content`` and write rows between two events, as a worker would."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from arena.admission import trials
from arena.admission.models import Trial
from arena.bots.models import BotVersion
from arena.duels import services as duels
from arena.games import services
from arena.games.models import LiveMove, Match
from arena.metrics.middleware import LATENCY
from arena.tournaments import services as tournaments
from arena.tournaments.models import Tournament
from tests.arena.conftest import BOTS, make_version, packed, upload
from tests.arena.games.test_live import play_some, running_match
from tests.arena.games.test_matches import fake_result

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _quick_streams(settings: Any) -> None:
    """Streams that look often and, unless a test says otherwise, last long enough for any
    test's steps (each ends as soon as its game does)."""
    settings.STREAM_POLL_S = 0.01
    settings.STREAM_LIFETIME_S = 120.0
    settings.STREAM_HEARTBEAT_S = 60.0


class Stream:
    """A stream read event by event: each a dict of its fields (``event``, ``id``, ``data``;
    a comment line as ``comment``)."""

    def __init__(self, response: Any) -> None:
        assert response.status_code == 200, response
        assert response["Content-Type"].startswith("text/event-stream")
        self.response = response
        self.chunks: Iterator[bytes] = iter(response.streaming_content)
        first = self.next()
        assert first == {"retry": "250"}

    def next(self) -> dict[str, str]:
        """The next event (StopIteration once the stream ended)."""
        chunk = next(self.chunks).decode()
        assert chunk.endswith("\n\n"), chunk
        fields: dict[str, str] = {}
        for line in chunk[:-2].split("\n"):
            if line.startswith(":"):
                fields["comment"] = line[1:].strip()
                continue
            name, _, value = line.partition(": ")
            fields[name] = value
        return fields

    def feed(self) -> dict[str, Any]:
        event = self.next()
        assert event["event"] == "feed", event
        data: dict[str, Any] = json.loads(event["data"])
        assert event["id"] == f"{data['attempt']}.{data['plies']}"
        return data

    def rest(self) -> list[dict[str, str]]:
        """The events until the stream ends."""
        out = []
        while True:
            try:
                out.append(self.next())
            except StopIteration:
                return out


def events_of(pk: int, client: Client | None = None, **headers: str) -> Any:
    return (client or Client()).get(f"/matches/{pk}/live/events", headers=headers)


@pytest.fixture
def pair(user: Any) -> tuple[Any, Any]:
    return make_version(user, "white-bot"), make_version(user, "black-bot")


def replay_more(match: Match, attempt: int, plies: int, *, info: bool = False) -> list[Any]:
    """The same game (same seed) written again, ``plies`` long: the new rows appear as if the
    referee had played on."""
    LiveMove.objects.filter(match=match).delete()
    return play_some(match, attempt, plies, info=info)


# ----------------------------------------------------------------------------- a live match


def test_a_stream_sends_the_game_then_each_new_action_as_it_is_written(pair: Any) -> None:
    m, attempt = running_match(pair)
    played = play_some(m, attempt, 3)
    response = events_of(m.pk)
    assert response["Cache-Control"] == "no-store" and response["X-Accel-Buffering"] == "no"
    stream = Stream(response)
    first = stream.feed()
    assert first["after"] == 0 and first["game"] is not None
    assert [f["action"] for f in first["frames"]] == [p.action for p in played]
    more = replay_more(m, attempt, 5)
    second = stream.feed()
    assert second["after"] == 3 and second["game"] is None
    assert [f["n"] for f in second["frames"]] == [4, 5]
    assert [f["action"] for f in second["frames"]] == [p.action for p in more[3:]]
    assert second["clocks"]["turn"] == more[-1].turn
    assert (second["clocks"]["white"]["ms"], second["clocks"]["black"]["ms"]) == more[-1].clocks_ms


def test_a_reconnecting_browser_resumes_from_its_last_events_id(pair: Any) -> None:
    m, attempt = running_match(pair)
    play_some(m, attempt, 6)
    # Last-Event-ID (what EventSource sends when it opens the stream again) wins over ?since=.
    resumed = Stream(
        Client().get(
            f"/matches/{m.pk}/live/events?since=0", headers={"Last-Event-ID": f"{attempt}.4"}
        )
    ).feed()
    assert resumed["after"] == 4 and [f["n"] for f in resumed["frames"]] == [5, 6]
    assert (
        Stream(Client().get(f"/matches/{m.pk}/live/events?since={attempt}.6")).feed()["frames"]
        == []
    )
    # The id of another claim: the game was started again, the watcher starts afresh.
    again = Stream(events_of(m.pk, **{"Last-Event-ID": f"{attempt + 1}.6"})).feed()
    assert again["after"] == 0 and len(again["frames"]) == 6 and again["game"] is not None


def test_the_stream_ends_with_the_game(pair: Any) -> None:
    m, attempt = running_match(pair)
    play_some(m, attempt, 2)
    stream = Stream(events_of(m.pk))
    assert stream.feed()["over"] is False
    assert services.finish(m.pk, attempt, fake_result())
    last = stream.feed()
    assert last["over"] is True and last["score"] == "1-0" and last["clocks"] is None
    assert stream.rest() == []


def test_the_stream_ends_after_its_lifetime_and_says_it_is_there_meanwhile(
    pair: Any, settings: Any
) -> None:
    settings.STREAM_LIFETIME_S = 0.3
    settings.STREAM_HEARTBEAT_S = 0.02
    m, attempt = running_match(pair)
    play_some(m, attempt, 2)
    stream = Stream(events_of(m.pk))
    assert stream.feed()["plies"] == 2
    rest = stream.rest()  # ends by itself: the browser opens it again
    assert rest and all(event == {"comment": "still here"} for event in rest)


def test_a_running_games_info_is_streamed_to_its_owner_only(user: Any, other_user: Any) -> None:
    white, black = make_version(user, "white-bot"), make_version(other_user, "black-bot")
    m, attempt = running_match((white, black))
    play_some(m, attempt, 2, info=True)
    owner, rival, visitor = Client(), Client(), Client()
    owner.force_login(user)
    rival.force_login(other_user)
    streams = {
        name: Stream(events_of(m.pk, c))
        for name, c in (("owner", owner), ("rival", rival), ("visitor", visitor))
    }
    firsts = {name: s.feed() for name, s in streams.items()}
    played = replay_more(m, attempt, 4, info=True)
    seconds = {name: s.feed() for name, s in streams.items()}
    for name, colour in (("owner", "white"), ("rival", "black"), ("visitor", None)):
        for data in (firsts[name], seconds[name]):
            assert data["logs"] == ([colour] if colour else [])
            by_ply = {p.ply: p for p in played}
            assert [f.get("info") for f in data["frames"]] == [
                by_ply[f["n"]].info if by_ply[f["n"]].color == colour else None
                for f in data["frames"]
            ]


def test_an_unknown_match_or_a_bad_position_is_refused(pair: Any) -> None:
    m, _ = running_match(pair)
    assert events_of(999999).status_code == 404
    for bad in ("x", "-1", "1.x", "a.2", "1.2.3"):
        r = Client().get(f"/matches/{m.pk}/live/events", {"since": bad})
        assert r.status_code == 400 and "since must be" in r.json()["error"], bad
    assert events_of(m.pk, **{"Last-Event-ID": "nonsense"}).status_code == 400


def test_a_stream_is_not_counted_in_the_request_latency(pair: Any) -> None:
    m, _ = running_match(pair)
    route = "matches/<int:pk>/live/events"

    def observed() -> float:
        return sum(
            s.value
            for metric in LATENCY.collect()
            for s in metric.samples
            if s.name.endswith("_count") and s.labels.get("route") == route
        )

    before = observed()
    Stream(events_of(m.pk)).feed()
    assert observed() == before


# ----------------------------------------------------------------------------- pages that change


def stream_url(page: str) -> str:
    """The stream's address a page gives (``data-events``)."""
    return page.split('data-events="', 1)[1].split('"', 1)[0].replace("&amp;", "&")


def test_a_tournament_page_is_told_when_its_games_move_on_and_when_it_ends(user: Any) -> None:
    entrants = [make_version(user, f"bot-{i}") for i in range(3)]
    t = tournaments.create(
        user,
        name="Cup",
        variant="blitz",
        time_control="5+0.1",
        games_per_pair=1,
        bots=[v.bot for v in entrants],
    )
    url = stream_url(Client().get(f"/tournaments/{t.pk}/").content.decode())
    assert url.startswith(f"/tournaments/{t.pk}/events?v=")
    stream = Stream(Client().get(url))
    first = t.matches.filter(status=Match.Status.QUEUED).first()
    assert first is not None
    Match.objects.filter(pk=first.pk).update(status=Match.Status.RUNNING)
    changed = stream.next()
    assert changed["event"] == "changed" and json.loads(changed["data"]) == {"over": False}
    # Paused, it may still change (its games under way finish; it may be resumed): its page
    # follows it still.
    tournaments.pause(user, t)
    paused = stream.next()
    assert paused["event"] == "changed" and json.loads(paused["data"]) == {"over": False}
    assert "data-events" in Client().get(f"/tournaments/{t.pk}/").content.decode()
    tournaments.resume(user, t)
    assert json.loads(stream.next()["data"]) == {"over": False}
    Tournament.objects.filter(pk=t.pk).update(status=Tournament.Status.CANCELLED)
    ended = stream.next()
    assert ended["event"] == "changed" and json.loads(ended["data"]) == {"over": True}
    assert stream.rest() == []
    # The page now shows it over: no stream; the stream of a page that knows, 204.
    page = Client().get(f"/tournaments/{t.pk}/").content.decode()
    assert "data-events" not in page
    assert Client().get(url, headers={"Last-Event-ID": ended["id"]}).status_code == 204
    # An old page's version: one last "changed", so it catches up.
    assert Stream(Client().get(url)).next()["event"] == "changed"


def test_a_stream_from_the_pages_version_tells_only_what_changed_after_it(user: Any) -> None:
    old = make_version(user, "mybot", status=BotVersion.Status.RETIRED)
    duel = duels.start_test(user, make_version(user, "mybot"), old, variant="yinsh")
    url = stream_url(Client().get(f"/tests/{duel.pk}/").content.decode())
    assert url.startswith(f"/tests/{duel.pk}/events?v=")
    stream = Stream(Client().get(url))
    duels.cancel(user, duel)
    assert stream.next()["event"] == "changed"  # nothing before: the page had this version
    assert Client().get(f"/challenges/{duel.pk}/events").status_code == 404
    assert Client().get("/tests/999999/events").status_code == 404


def test_a_trials_stream_is_its_owners_only(user: Any, other_user: Any, anchor: Any) -> None:
    trial = trials.create(user, upload(packed(BOTS / "random"), "random.tar.gz"))
    owner, other = Client(), Client()
    owner.force_login(user)
    other.force_login(other_user)
    url = stream_url(owner.get(f"/trials/{trial.pk}/").content.decode())
    assert url.startswith(f"/trials/{trial.pk}/events?v=")
    for stranger in (other, Client()):
        assert stranger.get(url).status_code == 404
    stream = Stream(owner.get(url))
    Trial.objects.filter(pk=trial.pk).update(status=Trial.Status.RUNNING)
    assert json.loads(stream.next()["data"]) == {"over": False}
    Trial.objects.filter(pk=trial.pk).update(status=Trial.Status.FAILED)
    assert json.loads(stream.next()["data"]) == {"over": True}
    assert stream.rest() == []


def test_a_bot_page_follows_the_check_of_its_new_version(user: Any) -> None:
    version = make_version(user, "checked", status=BotVersion.Status.PENDING)
    page = Client().get("/bots/checked/").content.decode()
    url = stream_url(page)
    assert url.startswith("/bots/checked/events?v=")
    stream = Stream(Client().get(url))
    BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.CHECKING)
    assert json.loads(stream.next()["data"]) == {"over": False}
    BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.ACTIVE)
    assert json.loads(stream.next()["data"]) == {"over": True}
    assert "data-events" not in Client().get("/bots/checked/").content.decode()
    assert Client().get("/bots/nobody/events").status_code == 404
