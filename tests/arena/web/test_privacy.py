"""A bot's logs are its owner's: the redaction (arena.referee.redaction) and every page, API
answer and archive that shows a game, seen by a visitor, another user, each owner and an
operator."""

from __future__ import annotations

import copy
import io
import json
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.test import Client

from arena.games import privacy
from arena.games import services as games
from arena.games.models import Match
from arena.referee import redaction
from arena.referee.match import SINGLE_FILE_PREFIX
from arena.tournaments import services as tournaments
from arena.tournaments.models import Tournament
from tests.arena.conftest import TEST_BOTS, make_version
from tests.arena.games.test_matches import queued_match

#: What the diary bot (tests/data/bots/honest/diary) writes to its stderr and its info.
DIARY = "DIARY-MARKER-5e2b"
#: What the quitter (tests/data/bots/protocol/exits_midgame) writes to its stderr before it exits.
QUITTER = "giving up after three actions"

#: The server's folders as privacy.server_roots gives them: "yinsh-bot-" ends in "-", a prefix
#: of folder names (the referee's folders for single-file bots), not all of /tmp.
ROOTS = ["/srv/arena/var", "/srv/arena/var/bot-cache", "/tmp/yinsh-bot-"]


def transcript() -> dict[str, Any]:
    """A transcript as the referee writes it (docs/protocol.md), white at fault."""
    return {
        "protocol": 1,
        "variant": "yinsh",
        "headers": {"Event": "ladder"},
        "players": {
            "white": {
                "name": "alpha",
                "path": "/srv/arena/var/bot-cache/ab12/bot",
                "command": ["python3", "main.py"],
                "build": "make",
                "digest": "aa",
                "ready": {"name": "alpha", "version": "1", "ms": 20.0},
                "clock_ms": 900,
                "stderr_tail": "Traceback\n  File /srv/arena/var/bot-cache/ab12/bot/main.py\n"
                "WHITE-SECRET\n  File /bot/lib.py, line 3",
                "stderr_bytes": 120,
                "exit": "exit code 3",
                "killed": "after its failure",
                "violation": "memory limit exceeded (memory)",
                "failure": "white exited at ply 3 (exit code 3); stderr: WHITE-SECRET",
                "info_dropped": 1,
                "cpu_s": 0.5,
            },
            "black": {
                "name": "beta",
                "path": "/tmp/yinsh-bot-x1/beta.py",
                "command": ["./beta.py"],
                "digest": "bb",
                "stderr_tail": "BLACK-SECRET thinking",
                "stderr_bytes": 21,
                "exit": "exit code 0",
                "sent_end": True,
            },
        },
        "moves": [
            {
                "color": "white",
                "action": "e3",
                "ms": 12.5,
                "clock_ms": 990,
                "info": {"w": 1},
                "stderr": "WHITE-SECRET on e3\n",
            },
            {
                "color": "black",
                "action": "a5",
                "ms": 3.0,
                "info": {"note": "BLACK-SECRET", "nested": ["/srv/arena/var/bots/cd"]},
                "stderr": "BLACK-SECRET read /srv/arena/var/bots/cd/book\n",
                "stderr_bytes": 5000,
            },
            {"color": "white", "action": "b5", "ms": 1.0, "info_dropped": 4000},
        ],
        "result": "black",
        "termination": "crash",
        "reason": "white exited at ply 3 (exit code 3); stderr: WHITE-SECRET at /bot/x.py",
        "fault": "white",
    }


def text(data: Any) -> str:
    return json.dumps(data)


# ----------------------------------------------------------------------------- the redaction


def test_a_visitor_sees_no_stderr_info_or_failure_details_of_either_bot() -> None:
    r = redaction.redact(transcript(), set(), ROOTS)
    assert isinstance(r, dict)
    for colour in ("white", "black"):
        player = r["players"][colour]
        assert not set(player) & redaction.PRIVATE_PLAYER_KEYS
        assert player["path"] == "<path>"
    assert [set(m) & redaction.PRIVATE_MOVE_KEYS for m in r["moves"]] == [set(), set(), set()]
    assert {"stderr", "stderr_bytes"} <= redaction.PRIVATE_MOVE_KEYS
    assert "SECRET" not in text(r) and "/srv" not in text(r) and "/tmp" not in text(r)
    assert r["reason"] == "white exited at ply 3 (exit code 3)"
    # What happened stays: the result, the clocks, the actions and think times.
    assert r["players"]["white"]["clock_ms"] == 900 and r["players"]["white"]["cpu_s"] == 0.5
    assert [m["action"] for m in r["moves"]] == ["e3", "a5", "b5"]
    assert r["moves"][0]["ms"] == 12.5 and r["result"] == "black"


def test_an_owner_sees_its_own_colours_logs_and_not_the_others() -> None:
    r = redaction.redact(transcript(), {"white"}, ROOTS)
    assert isinstance(r, dict)
    white, black = r["players"]["white"], r["players"]["black"]
    assert "WHITE-SECRET" in white["stderr_tail"] and white["exit"] == "exit code 3"
    assert white["violation"] and white["failure"] and white["command"] == ["python3", "main.py"]
    assert "stderr_tail" not in black and "exit" not in black and "command" not in black
    assert r["moves"][0]["info"] == {"w": 1} and r["moves"][2]["info_dropped"] == 4000
    assert r["moves"][0]["stderr"] == "WHITE-SECRET on e3\n"
    assert "info" not in r["moves"][1] and "stderr" not in r["moves"][1]
    assert "stderr_bytes" not in r["moves"][1]
    assert "BLACK-SECRET" not in text(r)
    # White is at fault: its owner reads the whole reason.
    assert r["reason"] == "white exited at ply 3 (exit code 3); stderr: WHITE-SECRET at /bot/x.py"


def test_the_owner_of_the_other_colour_reads_only_what_happened() -> None:
    r = redaction.redact(transcript(), {"black"}, ROOTS)
    assert isinstance(r, dict)
    assert "WHITE-SECRET" not in text(r) and "exit code 3)" in r["reason"]
    assert r["players"]["black"]["stderr_tail"] == "BLACK-SECRET thinking"
    assert r["moves"][1]["info"] == {"note": "BLACK-SECRET", "nested": ["<path>"]}
    assert r["moves"][1]["stderr"] == "BLACK-SECRET read <path>\n"
    assert r["moves"][1]["stderr_bytes"] == 5000 and "stderr" not in r["moves"][0]


def test_server_paths_leave_every_string_even_for_the_owner_but_paths_in_the_sandbox_stay() -> None:
    r = redaction.redact(transcript(), {"white", "black"}, ROOTS)
    assert isinstance(r, dict)
    assert "/srv" not in text(r) and "/tmp" not in text(r)
    stderr = r["players"]["white"]["stderr_tail"]
    assert "File <path>\n" in stderr and "File /bot/lib.py, line 3" in stderr
    assert r["moves"][1]["info"]["nested"] == ["<path>"]


def test_paths_in_keys_and_deeply_nested_values_are_taken_out() -> None:
    t = {"extra": {"/srv/arena/var/a": [{"b": ["x /tmp/yinsh-bot-q1/y z"]}]}, "moves": "not a list"}
    assert redaction.redact(t, set(), ROOTS) == {
        "extra": {"<path>": [{"b": ["x <path> z"]}]},
        "moves": "not a list",
    }


def test_a_root_is_a_whole_folder_name() -> None:
    assert redaction.strip_paths("/srv/arena/variance /srv/arena/var", ROOTS) == (
        "/srv/arena/variance <path>"
    )
    assert redaction.strip_paths("at /tmp/yinsh-bot-", ROOTS) == "at <path>"
    assert redaction.strip_paths("at /tmp/yinsh-bot-a_1.b/x.py", ROOTS) == "at <path>"


def test_the_owner_reads_the_paths_of_its_bots_own_tmp() -> None:
    # A bot's /tmp is its own (a tmpfs in the sandbox): the owner reads what it wrote there.
    said = "cached to /tmp/book.bin; see /tmp/yinsh-botany and /tmpfile"
    assert redaction.strip_paths(said, ROOTS) == said


def test_a_closing_tag_is_not_a_path() -> None:
    said = "white played an illegal move '</script><b>' at ply 3"
    assert redaction.public_text(said) == said
    assert redaction.public_text("no such move: /etc/passwd") == "no such move: <path>"


def test_both_failed_reasons_are_whole_only_for_who_sees_both() -> None:
    t = transcript()
    t["fault"] = None
    t["reason"] = "both bots failed to start: white exited; stderr: A; black exited; stderr: B"
    for visible in (set(), {"white"}, {"black"}):
        r = redaction.redact(t, visible, ROOTS)
        assert isinstance(r, dict) and r["reason"] == "both bots failed to start: white exited"
    both = redaction.redact(t, {"white", "black"}, ROOTS)
    assert isinstance(both, dict) and both["reason"] == t["reason"]


def test_redaction_copies_and_never_fails_on_odd_data() -> None:
    t = transcript()
    before = copy.deepcopy(t)
    redaction.redact(t, set(), ROOTS)
    assert t == before
    for odd in (None, 3, "x /srv/arena/var/q", [{"info": 1}], {"players": [1, 2]}):
        redaction.redact(odd, set(), ROOTS)  # type: ignore[arg-type]  # malformed on purpose
    assert redaction.redact("x /srv/arena/var/q", set(), ROOTS) == "x <path>"


def test_public_text_keeps_what_happened_and_drops_the_bots_words_and_paths() -> None:
    assert redaction.public_text("black exited at ply 8 (exit code 3); stderr: boom") == (
        "black exited at ply 8 (exit code 3)"
    )
    assert redaction.public_text("white ran out of time (no answer after 5.05 s, at ply 3)") == (
        "white ran out of time (no answer after 5.05 s, at ply 3)"
    )
    assert redaction.public_text("OSError: cannot open /home/x/y.txt: gone") == (
        "OSError: cannot open <path>: gone"
    )
    assert redaction.public_text("a draw 1/2-1/2 in ./x") == "a draw 1/2-1/2 in ./x"


def test_the_owners_log_lists_stderr_ending_failure_and_each_actions_info() -> None:
    shown = redaction.redact(transcript(), {"white"}, ROOTS)
    (log,) = redaction.player_logs(shown, {"white"})
    assert log.colour == "white" and log.name == "alpha" and "WHITE-SECRET" in log.stderr
    assert log.stderr_bytes == 120 and log.failure.startswith("white exited at ply 3")
    assert "exit code 3" in log.ending and any("memory" in e for e in log.ending)
    assert log.moves == [
        (1, "e3", 12.5, "w: 1"),
        (3, "b5", 1.0, "(dropped: 4000 bytes)"),
    ]
    assert redaction.player_logs(shown, set()) == []
    assert redaction.player_logs(None, {"white"}) == []


# ----------------------------------------------------------------------------- the site


@pytest.fixture
def people(django_user_model: Any) -> dict[str, Any]:
    make = django_user_model.objects.create_user
    return {
        "alice": make("alice", password="a-long-password-1"),
        "bob": make("bob", password="a-long-password-2"),
        "carol": make("carol", password="a-long-password-3"),
        "olga": make("olga", password="a-long-password-4", is_staff=True),
    }


def client(user: Any | None) -> Client:
    c = Client()
    if user is not None:
        c.force_login(user)
    return c


def diary(owner: Any, name: str = "diary") -> Any:
    return make_version(owner, name, folder=TEST_BOTS / "honest" / "diary")


def quitter(owner: Any, name: str = "quitter") -> Any:
    return make_version(owner, name, folder=TEST_BOTS / "protocol" / "exits_midgame")


@pytest.fixture
def played(people: dict[str, Any]) -> Match:
    """Alice's diary (white) against Bob's quitter (black), which crashes: a real game."""
    m = queued_match(diary(people["alice"]), quitter(people["bob"]))
    assert games.play(m.pk) == "finished"
    m = Match.objects.get(pk=m.pk)
    assert m.fault == "black" and QUITTER in m.detail  # the full reason quotes its stderr
    assert m.reason.startswith("black exited at ply") and "exit code" not in m.reason
    transcript = m.data.transcript
    assert DIARY in transcript["players"]["white"]["stderr_tail"]
    assert any(DIARY in text(e.get("info")) for e in transcript["moves"])
    return m


def server_paths() -> list[str]:
    return [
        str(p)
        for p in (
            django_settings.VAR_DIR,
            django_settings.BOT_STORE_DIR,
            django_settings.BOT_CACHE_DIR,
            django_settings.BOT_BUILD_DIR,
            django_settings.BASE_DIR,
            tempfile.gettempdir() + "/",
        )
    ]


def match_urls(m: Match) -> list[str]:
    return [
        "/",
        "/matches/",
        f"/matches/{m.pk}/",
        f"/matches/{m.pk}/transcript.json",
        f"/matches/{m.pk}/replay.json",
        f"/matches/{m.pk}/live.json",
        f"/matches/{m.pk}/record.txt",
        f"/matches/{m.pk}/record.short.txt",
        "/bots/diary/",
        "/bots/quitter/",
        "/api/matches/",
        f"/api/matches/{m.pk}/",
        f"/api/matches/{m.pk}/transcript/",
        f"/api/matches/{m.pk}/record/",
        "/api/bots/diary/",
        "/api/bots/quitter/",
        "/api/versions/",
    ]


#: Who reads which bot's words: the diary's (white) and the quitter's (black).
SEES = {
    None: (False, False),
    "carol": (False, False),
    "alice": (True, False),
    "bob": (False, True),
    "olga": (True, True),
}


@pytest.mark.django_db
@pytest.mark.parametrize("who", list(SEES), ids=[str(w) for w in SEES])
def test_every_page_and_answer_shows_a_bots_words_to_its_owner_and_operators_only(
    who: str | None, people: dict[str, Any], played: Match
) -> None:
    sees_white, sees_black = SEES[who]
    c = client(people[who] if who else None)
    everything = ""
    for url in match_urls(played):
        r = c.get(url)
        assert r.status_code == 200, url
        body = r.content.decode()
        for path in server_paths():
            assert path not in body, (url, path)
        if not sees_white:
            assert DIARY not in body, url
        if not sees_black:
            assert QUITTER not in body, url
        everything += body
    assert (DIARY in everything) == sees_white
    assert (QUITTER in everything) == sees_black


@pytest.mark.django_db
@pytest.mark.parametrize("who", list(SEES), ids=[str(w) for w in SEES])
def test_the_match_page_shows_the_owner_its_bots_log_and_everyone_what_happened(
    who: str | None, people: dict[str, Any], played: Match
) -> None:
    sees_white, sees_black = SEES[who]
    page = client(people[who] if who else None).get(f"/matches/{played.pk}/").content.decode()
    assert "black exited at ply" in page  # what happened: public
    assert ("exit code 3" in page) == sees_black  # how its process ended: its owner's
    assert ('id="log-white"' in page) == sees_white
    assert ('id="log-black"' in page) == sees_black
    if sees_white:
        log = page[page.index('id="log-white"') :]
        assert f"{DIARY} starting in" in log  # its stderr
        assert f"{DIARY} plays" in log and "note: " + DIARY in log  # info, as keys and values
    if sees_black:
        log = page[page.index('id="log-black"') :]
        assert f"exits_midgame: {QUITTER}" in log and "exit code 3" in log


@pytest.mark.django_db
@pytest.mark.parametrize("who", list(SEES), ids=[str(w) for w in SEES])
def test_the_transcript_and_replay_carry_the_viewers_own_info_and_stderr_only(
    who: str | None, people: dict[str, Any], played: Match
) -> None:
    sees_white, sees_black = SEES[who]
    c = client(people[who] if who else None)
    for url in (f"/matches/{played.pk}/transcript.json", f"/api/matches/{played.pk}/transcript/"):
        shown = json.loads(c.get(url).content)
        white, black = shown["players"]["white"], shown["players"]["black"]
        assert ("stderr_tail" in white) == sees_white and ("stderr_tail" in black) == sees_black
        assert ("exit" in black) == sees_black
        infos = [m for m in shown["moves"] if "info" in m]
        assert bool(infos) == sees_white and all(m["color"] == "white" for m in infos)
        assert white["path"] == black["path"] == "<path>"
        stderrs = [m for m in shown["moves"] if "stderr" in m]
        assert bool(stderrs) == sees_white and all(m["color"] == "white" for m in stderrs)
    replay = c.get(f"/matches/{played.pk}/replay.json").json()
    frames = replay["frames"]
    assert any("info" in f for f in frames) == sees_white
    told = [f for f in frames if "stderr" in f]
    assert bool(told) == sees_white and all(f["by"] == "white" for f in told)
    assert all(f["stderr"].startswith(f"{DIARY} plays {f['action']} ") for f in told)
    assert replay["logs"] == [
        c for c, seen in zip(redaction.COLOURS, SEES[who], strict=True) if seen
    ]
    detail = c.get(f"/api/matches/{played.pk}/").json()
    assert (QUITTER in detail["reason"]) == sees_black
    assert ("exit code 3" in detail["reason"]) == sees_black
    assert detail["reason"].startswith("black exited at ply")


@pytest.mark.django_db
def test_the_owner_of_both_bots_sees_both_logs(people: dict[str, Any]) -> None:
    alice = people["alice"]
    m = queued_match(diary(alice), quitter(alice))
    assert games.play(m.pk) == "finished"
    page = client(alice).get(f"/matches/{m.pk}/").content.decode()
    assert 'id="log-white"' in page and 'id="log-black"' in page
    assert DIARY in page and QUITTER in page
    shown = json.loads(client(alice).get(f"/matches/{m.pk}/transcript.json").content)
    assert "stderr_tail" in shown["players"]["white"] and "stderr_tail" in shown["players"]["black"]
    assert DIARY not in client(people["bob"]).get(f"/matches/{m.pk}/").content.decode()


@pytest.mark.django_db
def test_a_rejected_versions_reason_quotes_its_stderr_to_its_owner_only(
    people: dict[str, Any],
) -> None:
    v = quitter(people["bob"])
    v.status = v.Status.REJECTED
    v.reason = (
        "qualification game 1 lost by crash: black exited at ply 6 (exit code 3); "
        f"stderr: exits_midgame: {QUITTER} in {django_settings.BOT_CACHE_DIR}/ab/bot"
    )
    v.save()
    for who, sees in ((None, False), ("carol", False), ("bob", True), ("olga", True)):
        c = client(people[who] if who else None)
        page = c.get("/bots/quitter/").content.decode()
        api = text(c.get("/api/bots/quitter/").json())
        for body in (page, api):
            assert "black exited at ply 6 (exit code 3)" in body
            assert (QUITTER in body) == sees, who
            assert str(django_settings.BOT_CACHE_DIR) not in body


@pytest.mark.django_db
def test_the_tournament_archive_holds_each_viewers_own_logs_only(
    people: dict[str, Any], settings: Any
) -> None:
    settings.OPEN_TOURNAMENTS = True
    entrants = [diary(people["alice"]), quitter(people["bob"])]
    t = tournaments.create(
        people["carol"],
        name="Privacy cup",
        variant="yinsh",
        time_control="5+0.1",
        games_per_pair=2,
        bots=[v.bot for v in entrants],
    )
    while (m := t.matches.filter(status=Match.Status.QUEUED).first()) is not None:
        assert games.play(m.pk) == "finished"
    assert Tournament.objects.get(pk=t.pk).matches.filter(status="finished").count() == 2
    for who, (sees_diary, sees_quitter) in SEES.items():
        user = people[who] if who else None
        for url in (f"/tournaments/{t.pk}/archive.zip", f"/api/tournaments/{t.pk}/archive/"):
            body = client(user).get(url).content
            with zipfile.ZipFile(io.BytesIO(body)) as zf:
                names = [n for n in zf.namelist() if "/transcripts/" in n]
                assert len(names) == 2
                everything = "".join(zf.read(n).decode() for n in zf.namelist())
            assert (DIARY in everything) == sees_diary, who
            assert (QUITTER in everything) == sees_quitter, who
            for path in server_paths():
                assert path not in everything, (who, path)


@pytest.mark.django_db
def test_the_check_transcript_download_is_the_owners_and_carries_no_server_path(
    people: dict[str, Any], settings: Any
) -> None:
    v = quitter(people["bob"])
    t = transcript()
    t["players"]["white"]["path"] = f"{settings.BOT_CACHE_DIR}/ab/bot"
    t["players"]["white"]["stderr_tail"] = f"WHITE-SECRET in {settings.BOT_CACHE_DIR}/ab/bot"
    v.transcript = t
    v.save()
    url = f"/bots/quitter/v{v.number}/check.json"
    assert client(None).get(url).status_code == 302  # to the login page
    assert client(people["carol"]).get(url).status_code == 403
    for who in ("bob", "olga"):
        body = client(people[who]).get(url).content.decode()
        assert "WHITE-SECRET in <path>" in body and str(settings.BOT_CACHE_DIR) not in body
    api = client(people["bob"]).get(f"/api/versions/{v.pk}/").json()["check_report"]
    assert str(settings.BOT_CACHE_DIR) not in text(api)
    assert client(people["carol"]).get(f"/api/versions/{v.pk}/").json()["check_report"] is None


def test_the_server_roots_are_the_settings_folders(settings: Any, tmp_path: Path) -> None:
    settings.VAR_DIR = tmp_path / "var"
    settings.BOT_CACHE_DIR = tmp_path / "elsewhere" / "cache"
    roots = privacy.server_roots()
    assert str(tmp_path / "var") in roots and str(tmp_path / "elsewhere" / "cache") in roots
    # Of the temporary folder, only the referee's folders for single-file bots.
    assert tempfile.gettempdir() not in roots and "/" not in roots
    assert os.path.join(tempfile.gettempdir(), SINGLE_FILE_PREFIX) in roots


@pytest.mark.django_db
def test_the_check_report_is_the_owners_without_server_paths(
    people: dict[str, Any], settings: Any
) -> None:
    v = quitter(people["bob"])
    v.report = [f"FAIL build: cannot open {settings.BOT_BUILD_DIR}/ab/out.o", "REPORT-LINE"]
    v.stderr_tail = f"STDERR-TAIL at {settings.BOT_CACHE_DIR}/ab/bot/main.py"
    v.save()
    for who in ("bob", None, "carol"):
        c = client(people[who] if who else None)
        page = c.get("/bots/quitter/").content.decode()
        api = text(c.get(f"/api/versions/{v.pk}/").json())
        for body in (page, api):
            tail = "STDERR-TAIL at <path>" in body or "STDERR-TAIL at &lt;path&gt;" in body
            assert ("REPORT-LINE" in body and tail) == (who == "bob")
            assert str(settings.BOT_BUILD_DIR) not in body
            assert str(settings.BOT_CACHE_DIR) not in body


@pytest.mark.django_db
def test_reasons_stored_before_the_split_keep_their_stderr_for_the_owner_only(
    people: dict[str, Any],
) -> None:
    import importlib

    from django.apps import apps

    migration = importlib.import_module("arena.games.migrations.0006_match_detail")
    old = f"black exited at ply 6 (exit code 3); stderr: {QUITTER} at /srv/bot/x.py"
    m = queued_match(diary(people["alice"]), quitter(people["bob"]), reason=old, fault="black")
    plain = queued_match(m.white, m.black, reason="white removed 3 rings (3-1)")
    migration.split_reasons(apps, None)
    m.refresh_from_db()
    plain.refresh_from_db()
    assert (m.reason, m.detail) == ("black exited at ply 6 (exit code 3)", old)
    assert (plain.reason, plain.detail) == ("white removed 3 rings (3-1)", "")
    assert privacy.reason_for(people["bob"], m) == old
    assert privacy.reason_for(people["alice"], m) == m.reason


@pytest.mark.django_db
def test_a_failed_builds_exit_code_is_its_owners_only(people: dict[str, Any]) -> None:
    v = quitter(people["bob"])
    v.status = v.Status.REJECTED
    v.reason = "the build failed: the build command failed (exit code 101)"
    v.save()
    for who, sees in ((None, False), ("carol", False), ("bob", True), ("olga", True)):
        c = client(people[who] if who else None)
        page = c.get("/bots/quitter/").content.decode()
        api = text(c.get(f"/api/versions/{v.pk}/").json())
        for body in (page, api):
            assert "the build failed: the build command failed" in body, who
            assert ("exit code 101" in body) == sees, who
