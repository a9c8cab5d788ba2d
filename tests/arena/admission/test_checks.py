"""The check of an uploaded version (:mod:`arena.admission`), on the worker side, in-process with
the real referee, sandbox and bots: built, played, qualified, rejected with its reasons, or held
when the machine fails, never blamed on the bot."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import engine
from arena.admission import services as admission
from arena.bots import services
from arena.bots.models import BotVersion
from arena.games import ladder
from arena.games import services as services_games
from arena.games.models import Match, MatchRecord
from arena.jobs import claims
from arena.ratings.models import PairStats
from arena.referee.errors import InfrastructureError
from arena.referee.sandbox import Sandbox, SandboxUnavailable
from tests.arena.bots.test_unpack import zip_with_name_bytes
from tests.arena.conftest import (
    BOTS,
    TEST_BOTS,
    make_version,
    packed,
    upload,
    zipped,
    zipped_folder,
)
from tests.arena.games.test_matches import fake_result

V = BotVersion.Status
MANIFEST_START = b'name = "d"\ncommand = "python3 main.py"\n'


# ----------------------------------------------------------------------------- checks


def submit(user: Any, name: str, data: bytes, filename: str) -> BotVersion:
    return services.create_bot(user, name, upload(data, filename))


def qualification_games(v: BotVersion) -> set[tuple[str, str]]:
    """(variant, the version's colour) of its stored qualification games."""
    games = Match.objects.filter(kind=Match.Kind.QUALIFICATION)
    return {(m.variant, "white" if m.white_id == v.pk else "black") for m in games}


@pytest.mark.django_db
def test_a_good_bot_passes_its_check_and_is_rated(user: Any, anchor: Any, settings: Any) -> None:
    settings.QUALIFICATION_GAMES = 2
    v = submit(user, "copycat", zipped_folder(BOTS / "greedy"), "copycat.zip")
    assert admission.check_version(v.pk) == "active"
    v.refresh_from_db()
    assert v.status == V.ACTIVE and v.checked_at is not None
    assert v.report[-1].startswith("passed") and any("qualification game 2" in x for x in v.report)
    assert v.declared_name == "greedy"
    # It declares no variants, so it plays every one: qualified in each, with each colour.
    assert v.variant_names == list(engine.VARIANTS)
    games = Match.objects.filter(kind=Match.Kind.QUALIFICATION)
    assert games.count() == 2 * len(engine.VARIANTS)
    assert qualification_games(v) == {(n, c) for n in engine.VARIANTS for c in ("white", "black")}
    assert {(m.white_id, m.black_id) for m in games} == {(v.pk, anchor.pk), (anchor.pk, v.pk)}
    assert all(m.status == Match.Status.FINISHED for m in games)
    assert MatchRecord.objects.filter(match__in=games).count() == games.count()
    assert sum(p.games for p in PairStats.objects.all()) == games.count()
    assert admission.check_version(v.pk) == "not pending"


@pytest.mark.django_db
def test_a_bot_is_checked_and_qualified_in_the_variants_it_declares(
    user: Any, anchor: Any, settings: Any
) -> None:
    # Even when the ladder plays none of them.
    settings.LADDER_VARIANTS = ["yangsh", "yangsh7"]
    settings.QUALIFICATION_GAMES = 1
    v = submit(user, "two", packed(TEST_BOTS / "honest" / "yinsh_and_blitz"), "two.tar.gz")
    assert admission.check_version(v.pk) == "active"
    v.refresh_from_db()
    assert v.variants == "yinsh,blitz" and v.plays("blitz") and not v.plays("yangsh")
    assert any(line.startswith("ok    game 1 (yinsh,") for line in v.report)
    assert any(line.startswith("ok    game 2 (blitz,") for line in v.report)
    assert not any("yangsh" in line for line in v.report)
    assert qualification_games(v) == {
        (n, c) for n in ("yinsh", "blitz") for c in ("white", "black")
    }


@pytest.mark.django_db
def test_a_bot_that_cannot_play_a_variant_it_declares_is_rejected(
    user: Any, anchor: Any, settings: Any
) -> None:
    # Before: checked in YINSH and Blitz only, it passed, then lost every Yangsh game by crash.
    folder = TEST_BOTS / "honest" / "yinsh_and_blitz"
    files: dict[str, bytes | str] = {p.name: p.read_bytes() for p in folder.iterdir()}
    files["bot.toml"] = (folder / "bot.toml").read_text().replace("variants =", "# variants =")
    v = submit(user, "boaster", zipped(files), "boaster.zip")
    assert admission.check_version(v.pk) == "rejected"
    v.refresh_from_db()
    assert v.status == V.REJECTED and v.variant_names == list(engine.VARIANTS)
    assert v.reason.startswith("the protocol check failed: game 3 (yangsh, boaster v1 as white")
    assert "): boaster v1 exited" in v.reason  # the bot checked, by name, not by its colour
    # What it wrote is its owner's: in the report, not in the public reason.
    assert "yangsh is not implemented" not in v.reason
    assert any("yangsh is not implemented" in line for line in v.report)
    assert not Match.objects.exists()


@pytest.mark.django_db
def test_a_bot_that_crashes_is_rejected_with_its_transcript_and_stderr(
    user: Any, settings: Any
) -> None:
    v = submit(user, "quitter", packed(TEST_BOTS / "protocol" / "exits_midgame"), "q.tar.gz")
    assert admission.check_version(v.pk) == "rejected"
    v.refresh_from_db()
    assert v.status == V.REJECTED
    assert "protocol check failed" in v.reason and "exited" in v.reason
    assert "exit code" not in v.reason and "giving up" not in v.reason  # the owner's details
    assert any("exit code 3" in line and "giving up" in line for line in v.report)
    assert v.transcript is not None and v.transcript["fault"] in ("white", "black")
    assert "giving up after three actions" in v.stderr_tail
    assert any(line.startswith("FAIL") for line in v.report)
    assert not Match.objects.exists() and not PairStats.objects.exists()
    # The failing game is kept for its owner: the bot's own logs, not its opponent's (the
    # random bot's), and no server path.
    mine = v.transcript["fault"]
    theirs = "black" if mine == "white" else "white"
    players = v.transcript["players"]
    assert "giving up after three actions" in players[mine]["stderr_tail"]
    assert "stderr_tail" not in players[theirs] and "exit" not in players[theirs]
    assert {players[c]["path"] for c in players} == {"<path>"}
    assert str(settings.BOT_CACHE_DIR) not in json.dumps(v.transcript)


@pytest.mark.django_db
def test_a_bot_built_from_source_passes_its_check_and_plays(
    user: Any, anchor: Any, settings: Any, tmp_path: Path
) -> None:
    from tests.referee.test_build import c_bot, needs_cc

    needs_cc()
    settings.QUALIFICATION_GAMES = 2
    folder = c_bot(tmp_path).folder
    v = submit(user, "compiled", zipped_folder(folder), "compiled.zip")
    assert admission.check_version(v.pk) == "active"
    v.refresh_from_db()
    assert "build: cc -O2 -o bot main.c && echo compiled it" in v.report
    assert any(line.startswith("build: done in") for line in v.report)
    qualification = Match.objects.filter(kind=Match.Kind.QUALIFICATION, fault="")
    assert qualification.count() == 2 * len(engine.VARIANTS)  # each variant in each colour
    assert len(list(Path(settings.BOT_BUILD_DIR).glob("*/bot/bot"))) == 1  # built once


@pytest.mark.django_db
def test_a_failed_build_rejects_the_version_with_its_output_for_its_owner_only(
    user: Any, other_user: Any, client: Any, tmp_path: Path, settings: Any
) -> None:
    from tests.referee.test_build import make_bot

    folder = make_bot(
        tmp_path / "b",
        "echo 'main.c:3:5: error: expected ; before return' >&2; exit 1",
    ).folder
    v = submit(user, "broken", zipped_folder(folder), "broken.zip")
    assert admission.check_version(v.pk) == "rejected"
    v.refresh_from_db()
    assert v.reason == "the build failed: the build command failed (exit code 1)"
    assert v.build_failed and "expected ; before return" in v.stderr_tail
    assert any(line.startswith("FAIL the build") for line in v.report)
    assert not Match.objects.exists()
    assert list(Path(settings.BOT_BUILD_DIR).iterdir()) == []  # no lock or use file stays
    client.force_login(user)
    page = client.get(v.get_absolute_url()).content.decode()
    assert "Build output" in page and "expected ; before return" in page
    assert v.reason in page  # the owner reads the exit code
    client.force_login(other_user)
    page = client.get(v.get_absolute_url()).content.decode()
    assert "the build failed: the build command failed" in page and "exit code" not in page
    assert "expected ; before return" not in page


def random_with_build(folder: Path, build: str) -> bytes:
    """The built-in random bot, zipped, with a build."""
    shutil.copytree(BOTS / "random", folder)
    manifest = folder / "bot.toml"
    manifest.write_text(manifest.read_text() + f"build = {json.dumps(build)}\n")
    return zipped_folder(folder)


def built_files(settings: Any) -> list[Path]:
    return [p for p in Path(settings.BOT_BUILD_DIR).glob("*/bot/**/*") if p.is_file()]


@pytest.mark.django_db
def test_what_a_build_keeps_counts_in_its_owners_storage(
    user: Any, anchor: Any, settings: Any, tmp_path: Path
) -> None:
    settings.QUALIFICATION_GAMES = 1
    data = random_with_build(tmp_path / "b", "head -c 300000 /dev/zero > table")
    v = submit(user, "tabled", data, "tabled.zip")
    assert admission.check_version(v.pk) == "active"
    v.refresh_from_db()
    assert v.built_size == sum(p.stat().st_size for p in built_files(settings)) > 300_000
    assert services.storage_used(user) == v.size + v.built_size


@pytest.mark.django_db
def test_a_build_that_does_not_fit_in_its_owners_storage_rejects_the_version(
    user: Any, anchor: Any, settings: Any, tmp_path: Path
) -> None:
    data = random_with_build(tmp_path / "b", "head -c 300000 /dev/zero > table")
    settings.BOT_QUOTA_MB = (len(data) + 200_000) / (1 << 20)  # room for the upload only
    v = submit(user, "tabled", data, "tabled.zip")
    BotVersion.objects.filter(pk=v.pk).update(built_size=1000)  # as an earlier check left it
    assert admission.check_version(v.pk) == "rejected"
    v.refresh_from_db()
    size = f"{sum(p.stat().st_size for p in built_files(settings)) / (1 << 20):.1f} MB"
    # The public words say what failed; the owner's report, how much room they use.
    assert v.reason == (
        f"the build failed: the built bot ({size}) does not fit in its owner's storage quota"
    )
    assert v.build_failed and v.built_size == 0
    assert any(
        line.startswith(f"FAIL the build: the built bot ({size}) does not fit in your storage")
        and "your bots' uploads and builds use" in line
        for line in v.report
    )
    assert not Match.objects.exists()
    assert services.storage_used(user) == v.size


@pytest.mark.django_db
def test_an_illegal_mover_is_rejected(user: Any) -> None:
    v = submit(user, "cheater", packed(TEST_BOTS / "protocol" / "illegal_move"), "c.tar.gz")
    assert admission.check_version(v.pk) == "rejected"
    v.refresh_from_db()
    assert "not legal" in v.reason


@pytest.mark.django_db
def test_an_archive_with_path_traversal_is_rejected_and_writes_nothing_outside(
    user: Any, settings: Any
) -> None:
    data = zipped({"bot.toml": b'name="x"\ncommand="python3 main.py"\n', "../../pwned": b"x"})
    v = submit(user, "sneaky", data, "s.zip")
    assert admission.check_version(v.pk) == "rejected"
    v.refresh_from_db()
    assert "path traversal" in v.reason
    cache = settings.BOT_CACHE_DIR
    assert not (cache.parent / "pwned").exists() and not (cache / "pwned").exists()


@pytest.mark.django_db
def test_an_archive_without_a_manifest_is_rejected(user: Any) -> None:
    v = submit(user, "nameless", zipped({"main.py": b"print()\n"}), "n.zip")
    admission.check_version(v.pk)
    v.refresh_from_db()
    assert v.status == V.REJECTED and "no bot.toml" in v.reason


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (
            zipped({"bot.toml": MANIFEST_START + b"x = " + b"[" * 5000, "main.py": b""}),
            "bot.toml: nested too deeply to read",
        ),
        (zip_with_name_bytes(b"caf\xff\xfeQQ.txt"), "not a readable zip archive"),
    ],
    ids=["deep-manifest", "bad-utf8-name"],
)
def test_what_the_unpacker_cannot_take_is_a_rejection_at_once(
    user: Any, data: bytes, reason: str
) -> None:
    """A bot's own files are never the machine's fault: rejected at the first try, with a
    plain reason and no exception's name, never held for an operator."""
    v = submit(user, "hostile", data, "h.zip")
    admission.check_version(v.pk)
    v.refresh_from_db()
    assert v.status == V.REJECTED and reason in v.reason, v.reason
    assert v.attempts == 1
    assert "Error" not in v.reason


@pytest.mark.django_db
def test_a_new_version_retires_the_old_one_when_it_passes(
    user: Any, anchor: Any, settings: Any
) -> None:
    settings.QUALIFICATION_GAMES = 1
    old = make_version(user, "evolving")
    new = services.add_version(user, old.bot, upload(zipped_folder(BOTS / "random"), "r.zip"))
    admission.check_version(new.pk)
    old.refresh_from_db()
    new.refresh_from_db()
    assert (old.status, new.status) == (V.RETIRED, V.ACTIVE)


@pytest.mark.django_db
def test_a_new_version_that_drops_a_variant_keeps_its_old_games_and_leaves_that_ladder(
    user: Any, other_user: Any, anchor: Any, settings: Any
) -> None:
    settings.QUALIFICATION_GAMES = 1
    old = make_version(user, "evolving")
    rival = make_version(other_user, "rival")
    yangsh = ladder.schedule_variant("yangsh", rng=random.Random(1), depth=3)
    assert old.pk in {p for m in yangsh for p in (m.white_id, m.black_id)}
    for m in yangsh:
        services_games.finish(m.pk, claims.claim(Match, m.pk), fake_result("yangsh", "draw"))
    new = services.add_version(
        user, old.bot, upload(packed(TEST_BOTS / "honest" / "yinsh_and_blitz"), "v2.tar.gz")
    )
    assert admission.check_version(new.pk) == "active"
    new.refresh_from_db()
    assert new.variant_names == ["yinsh", "blitz"]
    # The old version's games stay, counted.
    assert (
        Match.objects.filter(pk__in=[m.pk for m in yangsh], status="finished").count()
        == len(yangsh)
        == 4
    )
    assert PairStats.objects.filter(variant="yangsh").count() > 0
    # New pairings follow the active version's declaration.
    made = ladder.schedule_variant("yangsh", rng=random.Random(2), depth=6)
    assert made and all({m.white_id, m.black_id} <= {rival.pk, anchor.pk} for m in made)
    made = ladder.schedule_variant("yinsh", rng=random.Random(3), depth=3)
    assert new.pk in {p for m in made for p in (m.white_id, m.black_id)}
    assert old.pk not in {p for m in made for p in (m.white_id, m.black_id)}


@pytest.mark.django_db
def test_a_rejected_new_version_leaves_the_old_one_active(user: Any) -> None:
    old = make_version(user, "evolving")
    bad = services.add_version(
        user, old.bot, upload(packed(TEST_BOTS / "protocol" / "illegal_move"), "b.tar.gz")
    )
    admission.check_version(bad.pk)
    old.refresh_from_db()
    bad.refresh_from_db()
    assert (old.status, bad.status) == (V.ACTIVE, V.REJECTED)


@pytest.mark.django_db
def test_the_sweeper_requeues_a_check_whose_worker_died(
    user: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    v = submit(user, "slowpoke", zipped_folder(BOTS / "random"), "r.zip")
    BotVersion.objects.filter(pk=v.pk).update(
        status=V.CHECKING, attempts=1, heartbeat_at=timezone.now() - timedelta(hours=1)
    )
    with django_capture_on_commit_callbacks() as sent:
        report = claims.sweep()
    assert report["bots.botversion"].requeued == [v.pk]
    assert BotVersion.objects.get(pk=v.pk).status == V.PENDING
    assert len(sent) == 1


# ----------------------------------------------------------------------------- the machine fails


def _sandbox_breaks(monkeypatch: Any) -> None:
    def launch(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise SandboxUnavailable("the sandbox's state folder cannot be reached")

    monkeypatch.setattr(Sandbox, "launch", launch)


@pytest.mark.django_db
def test_a_check_the_machine_cannot_run_waits_and_is_never_a_rejection(
    user: Any, monkeypatch: Any, settings: Any, caplog: Any
) -> None:
    settings.MATCH_MAX_ATTEMPTS = 2
    v = submit(user, "patient", zipped_folder(BOTS / "random"), "p.zip")
    _sandbox_breaks(monkeypatch)
    with pytest.raises(InfrastructureError):
        admission.check_version(v.pk)
    v.refresh_from_db()
    assert v.status == V.PENDING and v.attempts == 1  # queued again
    with pytest.raises(InfrastructureError):
        admission.check_version(v.pk)
    v.refresh_from_db()
    assert v.status == V.HELD and "could not run the check" in v.reason
    assert "SandboxUnavailable" in v.reason
    assert any("held until an operator" in r.getMessage() for r in caplog.records)
    assert admission.check_version(v.pk) == "not pending"  # the task's retry does nothing
    # Mended: the operator checks it again, and it passes.
    monkeypatch.undo()
    assert services.recheck([v.pk]) == 1
    assert admission.check_version(v.pk) == "active"


@pytest.mark.django_db
def test_a_defect_during_a_check_puts_the_version_back_instead_of_stranding_it(
    user: Any, monkeypatch: Any
) -> None:
    from arena.games import runner

    v = submit(user, "unlucky", zipped_folder(BOTS / "random"), "u.zip")

    def broken(version: Any) -> Any:
        raise UnicodeEncodeError("utf-8", "\udce9", 0, 1, "surrogates not allowed")

    monkeypatch.setattr(runner, "unpack_spec", broken)
    with pytest.raises(InfrastructureError):
        admission.check_version(v.pk)
    v.refresh_from_db()
    assert v.status == V.PENDING and v.reason == ""


@pytest.mark.django_db
def test_the_sweeper_holds_a_check_whose_workers_keep_dying(user: Any, settings: Any) -> None:
    from datetime import timedelta

    from django.utils import timezone

    settings.MATCH_MAX_ATTEMPTS = 1
    v = submit(user, "jinxed", zipped_folder(BOTS / "random"), "j.zip")
    BotVersion.objects.filter(pk=v.pk).update(
        status=V.CHECKING, attempts=1, heartbeat_at=timezone.now() - timedelta(hours=1)
    )
    report = claims.sweep()
    assert report["bots.botversion"].given_up == [v.pk]
    assert BotVersion.objects.get(pk=v.pk).status == V.HELD


@pytest.mark.django_db
def test_a_sandbox_that_cannot_start_programs_rejects_no_version(
    user: Any,
    system_user: Any,
    settings: Any,
    monkeypatch: Any,
    breakable_sandbox: Callable[[], tuple[Sandbox, Callable[[], None]]],
) -> None:
    """The deployment mistake that once rejected every upload, the built-in bots included:
    the sandbox's state folder unreachable by the slot uids. Now every check waits."""
    from arena.games import runner
    from arena.referee import Referee

    settings.MATCH_MAX_ATTEMPTS = 2
    sandbox, break_it = breakable_sandbox()
    referee = Referee(
        sandbox,
        startup_timeout_s=settings.BOT_STARTUP_SECONDS,
        end_grace_s=settings.BOT_EXIT_SECONDS,
    )
    monkeypatch.setattr(runner, "referee", lambda: referee)
    break_it()
    (builtin,) = services.register_builtin_bots(names=["random"])
    upload = submit(user, "innocent", zipped_folder(BOTS / "greedy"), "i.zip")
    for version in (builtin, upload):
        for _ in range(2):
            with pytest.raises(InfrastructureError):
                admission.check_version(version.pk)
        version.refresh_from_db()
        assert version.status == V.HELD, version.reason
        assert "SandboxUnavailable" in version.reason and version.stderr_tail == ""
    assert not BotVersion.objects.filter(status=V.REJECTED).exists()
    assert not Match.objects.exists()
