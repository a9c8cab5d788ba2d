"""A person plays a remote bot's side by hand on its match page (play.js): the browser is the
bot's client. Whole games of Blitz YINSH through the real web server (the live server) and a
real Celery worker in threads on the remote queue, against the random example bot in the
sandbox: every action chosen on the board by clicks (or taps), or with the keyboard alone.

The worker starts once the page is open and its panel asks for work, so the browser answers
the game's hello well within the start-up timeout.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

import engine
from arena.bots import services as bots
from arena.bots.models import Bot
from arena.games import remote
from arena.games import services as games
from arena.games.models import Match, MatchRecord, RemoteLine
from arena.jobs import claims
from arena.referee import protocol
from tests.arena.conftest import QUEUE, celery_worker, make_version
from tests.browser import accessibility_violations, assert_fits_the_screen

#: A game long enough for Playwright's clicks on a busy machine: its clock never matters.
TIME_CONTROL = "600+5"
#: How long one wait for the next request (or the end) may take: the worker's start, the
#: sandboxed bot's start and its move, on a busy machine.
TURN_MS = 180_000
#: The phone the brief names is narrower than the fixture's (390 px).
PHONE_WIDTH = 375

#: The next request or the end of the game: the panel is the person's to act (a request newer
#: than the one answered last) or is gone (the finished game's page replaced it).
NEXT = """(last) => {
  const panel = document.querySelector("[data-play]");
  if (!panel) return "over";
  const seq = panel.querySelector("select").getAttribute("data-seq");
  return panel.classList.contains("play-mine") && seq && seq !== last ? seq : false;
}"""


def person_match(owner: Any, opponent_owner: Any, *, color: str = "white") -> Match:
    """A queued game of Blitz YINSH from the empty board between ``owner``'s remote bot
    ``by-hand`` (playing ``color``) and a sandboxed random bot of someone else."""
    mine = bots.create_remote_bot(owner, "by-hand", variants=["blitz"])
    theirs = make_version(opponent_owner, "boxed-random")
    white, black = (mine, theirs) if color == "white" else (theirs, mine)
    match = Match.objects.create(
        variant="blitz",
        kind=Match.Kind.CHALLENGE,
        status=Match.Status.PENDING,
        white=white,
        black=black,
        time_control=TIME_CONTROL,
        seed=11,
        opening="",
        rated=False,
    )
    assert games.queue_pending([match.pk]) == 1
    return match


@contextmanager
def remote_worker(worker_env: dict[str, str], tmp_path: Path) -> Iterator[Callable[[], str]]:
    """A real worker on this run's remote queue, in threads (as ``runarena`` starts it)."""
    with celery_worker(
        worker_env, tmp_path / "remote.log", [f"{QUEUE}.remote"], pool="threads"
    ) as tail:
        yield tail


def open_panel(page: Page, site: str, match: Match) -> None:
    page.goto(f"{site}/matches/{match.pk}/")
    expect(page.locator("[data-play] .play-status")).to_have_text("Waiting for the game to start.")
    expect(page.locator(".yinsh-live")).to_have_attribute("data-replay-state", "ready")


def click_action(page: Page, token: str) -> None:
    """Play ``token`` on the board: its point, a ring then its destination, a marker of its
    row (then the row, if the marker is in several), a ring."""
    board = page.locator(".yinsh-live svg.yr-board")

    def point(name: str) -> None:
        board.locator(f'.play-target[data-point="{name}"]').click()

    if token.startswith("x") and "-" in token:
        start, end = token[1:].split("-")
        point(start)
        choices = page.locator(".play-rows")
        if choices.is_visible():
            choices.get_by_role("button", name=f"Remove {start} to {end}").click()
    elif token.startswith("x"):
        point(token[1:])
    elif "-" in token:
        start, end = token.split("-")
        point(start)
        expect(board.locator(".play-target.play-selected")).to_have_attribute("data-point", start)
        point(end)
    else:
        point(token)


def keyboard_action(page: Page, actions: list[str], rng: random.Random) -> str:
    """Choose an action from the list with the arrow keys and play it with Enter; the focus
    starts on the list and ends on the Play button."""
    select = page.locator("[data-play] select")
    expect(select).to_be_focused()
    page.keyboard.press("Home")
    for _ in range(rng.randrange(min(len(actions), 6))):
        page.keyboard.press("ArrowDown")
    chosen = select.input_value()
    assert chosen in actions
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Play", exact=True)).to_be_focused()
    page.keyboard.press("Enter")
    return chosen


def play_whole_game(
    page: Page,
    choose: Callable[[list[str]], str],
    log: Callable[[], str],
    *,
    until: int | None = None,
) -> list[str]:
    """Answer every request of the game until its end (or, given ``until``, until that many
    actions were played and the next request came); the actions played, in order."""
    played: list[str] = []
    last = ""
    while True:
        try:
            handle = page.wait_for_function(NEXT, arg=last, timeout=TURN_MS)
        except Exception:
            pytest.fail(f"no request and no end after {played}; worker log:\n{log()}")
        got = handle.json_value()
        if got == "over":
            return played
        last = str(got)
        actions = page.locator("[data-play] select option").evaluate_all(
            "(options) => options.map((o) => o.value)"
        )
        assert actions and "pass" not in actions
        expect(page.locator("[data-play] .play-status")).to_contain_text("Your move")
        expect(page.locator("[data-play] .play-clock")).to_contain_text("Your clock: ")
        if len(played) == until:
            return played
        played.append(choose(actions))


def check_record(match: Match, color: str, played: list[str], player: str) -> None:
    """The game ended by the rules, the person's actions are its own, in order, and every line
    but the last (end) was answered."""
    match.refresh_from_db()
    assert match.status == "finished", (match.reason, match.detail)
    assert match.termination in ("rows", "pool-exhausted", "no-moves"), match.reason
    transcript: Any = MatchRecord.objects.get(match=match).transcript
    assert transcript["players"][color]["ready"]["name"] == player
    moves = transcript["moves"]
    asked = [m for m in moves if m["color"] == color and not (m.get("forced") or m.get("opening"))]
    assert [m["action"] for m in asked] == played
    lines = RemoteLine.objects.filter(game__match=match).order_by("pk")
    assert all(line.answer is not None for line in lines[: lines.count() - 1])


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_person_plays_a_whole_game_by_clicking_the_board(
    page: Page,
    screen: str,
    site: str,
    user: Any,
    other_user: Any,
    log_in: Any,
    worker_env: dict[str, str],
    tmp_path: Path,
) -> None:
    if screen == "phone":
        page.set_viewport_size({"width": PHONE_WIDTH, "height": 812})
    match = person_match(user, other_user, color="white")
    log_in(user)
    open_panel(page, site, match)
    assert_fits_the_screen(page)
    rng = random.Random(7)
    kinds: set[str] = set()

    def choose(actions: list[str]) -> str:
        token = rng.choice(actions)
        if not kinds:  # the panel with its list and the board its targets, at the first request
            assert_fits_the_screen(page)
            assert accessibility_violations(page) == []
        kinds.add(("x" if token.startswith("x") else "") + ("-" if "-" in token else "."))
        click_action(page, token)
        return token

    with remote_worker(worker_env, tmp_path) as log:
        played = play_whole_game(page, choose, log)
    check_record(match, "white", played, user.username)
    assert {".", "-"} <= kinds  # placements and moves, at least, by clicks
    # The live board became the finished game's replay, with its result.
    expect(page.locator(".yinsh-replay .yr-result")).to_contain_text("wins")
    expect(page.locator("[data-play]")).to_have_count(0)


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_person_starts_a_game_on_a_bots_page_and_plays_it_to_the_end(
    page: Page,
    site: str,
    user: Any,
    other_user: Any,
    log_in: Any,
    worker_env: dict[str, str],
    tmp_path: Path,
) -> None:
    """People at the board (arena.games.people): the game a person starts from a bot's page is
    played on its match page, through the person's seat."""
    version = make_version(other_user, "friendly-random")
    Bot.objects.filter(pk=version.bot_id).update(people=True)
    log_in(user)
    page.goto(f"{site}/bots/friendly-random/")
    form = page.get_by_role("region", name="Play friendly-random")
    form.get_by_label("Variant").select_option("blitz")
    form.get_by_label("Time").select_option("600+5")
    form.get_by_label("Your colour").select_option("black")
    form.get_by_role("button", name="Play").click()
    expect(page.locator("[data-play] .play-status")).to_have_text("Waiting for the game to start.")
    match = Match.objects.get(kind=Match.Kind.PERSON)
    assert page.url.endswith(f"/matches/{match.pk}/")
    expect(page.get_by_role("region", name="You play Black")).to_be_visible()
    rng = random.Random(5)

    def choose(actions: list[str]) -> str:
        token = rng.choice(actions)
        click_action(page, token)
        return token

    with remote_worker(worker_env, tmp_path) as log:
        played = play_whole_game(page, choose, log)
    check_record(match, "black", played, user.username)
    # Its result, whichever it is (the bot's seed is the game's own: a draw may come too).
    expect(page.locator(".yinsh-replay .yr-result")).to_contain_text(f"{match.score} · ")


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_person_plays_a_whole_game_with_the_keyboard_alone(
    page: Page,
    site: str,
    user: Any,
    other_user: Any,
    log_in: Any,
    worker_env: dict[str, str],
    tmp_path: Path,
) -> None:
    match = person_match(user, other_user, color="black")
    log_in(user)
    open_panel(page, site, match)
    # Tab from the top of the page to the list of actions.
    for _ in range(300):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.matches('[data-play] select')"):
            break
    else:
        pytest.fail("Tab never reaches the list of actions")
    rng = random.Random(3)

    def choose(actions: list[str]) -> str:
        if page.evaluate("document.activeElement.matches('[data-play] .play-submit')"):
            page.keyboard.press("Shift+Tab")  # back from Play to the list
        return keyboard_action(page, actions, rng)

    with remote_worker(worker_env, tmp_path) as log:
        played = play_whole_game(page, choose, log)
    check_record(match, "black", played, user.username)


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_resigning_ends_the_game_and_the_person_loses(
    page: Page,
    site: str,
    user: Any,
    other_user: Any,
    log_in: Any,
    worker_env: dict[str, str],
    tmp_path: Path,
) -> None:
    match = person_match(user, other_user, color="white")
    log_in(user)
    open_panel(page, site, match)
    asked: list[str] = []

    def answer(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.accept()

    def first(actions: list[str]) -> str:
        click_action(page, actions[0])
        return actions[0]

    with remote_worker(worker_env, tmp_path) as log:
        # A placement first, then Resign at the next request.
        played = play_whole_game(page, first, log, until=1)
        page.once("dialog", answer)
        page.get_by_role("button", name="Resign").click()
        expect(page.locator("[data-play]")).to_have_count(0, timeout=TURN_MS)
    assert asked == ["Resign this game? boxed-random v1 wins it."]
    match.refresh_from_db()
    assert (match.status, match.result, match.termination, match.fault) == (
        "finished",
        "black",
        "resignation",
        "",
    ), match.reason
    assert match.reason == "white resigned at ply 3"
    moves: Any = MatchRecord.objects.get(match=match).transcript["moves"]
    assert [m["action"] for m in moves if m["color"] == "white"] == [*played, "resign"]
    expect(page.locator(".yinsh-replay .yr-result")).to_contain_text("Black wins")


@pytest.mark.django_db(transaction=True)
def test_only_the_bots_owner_is_given_the_panel(
    page: Page, site: str, user: Any, other_user: Any, log_in: Any
) -> None:
    match = person_match(user, other_user)
    for viewer in (None, other_user):
        if viewer is not None:
            log_in(viewer)
        page.goto(f"{site}/matches/{match.pk}/")
        expect(page.locator(".yinsh-live")).to_have_attribute("data-replay-state", "ready")
        expect(page.locator("[data-play]")).to_have_count(0)
        assert "/api/remote/" not in page.content()
    log_in(user)
    open_panel(page, site, match)
    panel = page.get_by_role("region", name="You play White")
    expect(panel.get_by_role("status")).to_have_text("Waiting for the game to start.")
    play = panel.get_by_role("button", name="Play", exact=True)
    expect(play).to_have_attribute("aria-disabled", "true")
    play.focus()
    page.keyboard.press("Enter")
    expect(panel.get_by_role("alert")).to_have_text("It is not your move yet.")
    assert_fits_the_screen(page)


@pytest.mark.django_db(transaction=True)
def test_a_marker_in_two_rows_asks_which_and_a_refused_answer_is_said(
    page: Page,
    site: str,
    user: Any,
    other_user: Any,
    log_in: Any,
    settings: Any,
    page_errors: list[str],
) -> None:
    """The referee's side is its real transport (what the worker runs), driven by the test: a
    request whose two rows share a marker; then one that another client answers first."""
    settings.REMOTE_WAIT_S = 25  # the page's poll waits: only a new line wakes it
    history, state = rows_sharing_a_marker()
    rows = [str(a) for a in state.legal_actions()]
    [point] = shared(*rows)
    mine = bots.create_remote_bot(user, "by-hand", variants=["blitz"])
    match = Match.objects.create(
        variant="blitz",
        kind=Match.Kind.CHALLENGE,
        status=Match.Status.QUEUED,
        white=mine,
        black=make_version(other_user, "boxed-random"),
        time_control=TIME_CONTROL,
        seed=11,
        rated=False,
    )
    attempt = claims.claim(Match, match.pk)
    assert attempt is not None
    side = remote.RemoteTransport(match, attempt, "white", mine.bot_id, line_limit=1 << 16)
    log_in(user)
    page.goto(f"{site}/matches/{match.pk}/")
    expect(page.locator(".yinsh-live")).to_have_attribute("data-replay-state", "ready")
    try:
        side.send(protocol.encode(protocol.Hello("blitz", "white", 600_000, 5_000)), 0)
        ready = json.loads(side.receive(time.monotonic() + 60))
        assert ready == {"type": "ready", "name": user.username}

        request = protocol.RequestEncoder(history).encode(rows, state.to_json(), 59_000, 60_000)
        side.send(request, 0)
        panel = page.locator("[data-play]")
        expect(panel.get_by_role("status")).to_have_text("Your move: remove a row")
        expect(panel.locator("select option")).to_have_count(2)
        expect(panel.locator(".play-rows")).to_be_hidden()
        page.locator(f'.play-target[data-point="{point}"]').click()
        expect(panel.locator(".play-rows")).to_contain_text(f"The marker on {point} is in 2 rows")
        first, last = rows[1][1:].split("-")
        panel.get_by_role("button", name=f"Remove {first} to {last}").click()
        answer = json.loads(side.receive(time.monotonic() + 60))
        assert answer == {"type": "action", "action": rows[1]}
        expect(panel.locator(".play-rows")).to_be_hidden()
        expect(panel.get_by_role("status")).to_have_text("Waiting for boxed-random v1.")

        # Another client (a second tab) answers the next request before this page does.
        side.send(request, 0)
        expect(panel.get_by_role("status")).to_have_text("Your move: remove a row")
        seq = RemoteLine.objects.filter(game=side.game).latest("pk").pk
        remote.answer(mine.bot, side.game.pk, seq, json.dumps({"type": "resign"}))
        panel.locator("select").select_option(rows[0])
        panel.get_by_role("button", name="Play", exact=True).click()
        expect(panel.get_by_role("alert")).to_have_text(
            f"Your move {rows[0]} was refused: line {seq} of game {side.game.pk} was answered "
            "already"
        )
        expect(panel.get_by_role("status")).to_have_text("Waiting for boxed-random v1.")
        refused = f"409 {site}/api/remote/by-hand/games/{side.game.pk}/answer/"
        assert refused in page_errors and all("409" in e for e in page_errors), page_errors
        page_errors.clear()  # the refusal was the point
    finally:
        page.goto("about:blank")
        side.send(protocol.encode(protocol.End("black", "test over")), 0)  # wakes the poll
        side.kill()


def rows_sharing_a_marker() -> tuple[list[str], engine.State]:
    """A game of Blitz YINSH played at random until the player to act may remove either of two
    rows that share a marker: its history and the state."""
    for seed in range(10_000):
        rng = random.Random(seed)
        state = engine.State("blitz")
        history: list[str] = []
        while not state.is_over():
            rows = [str(a) for a in state.legal_actions() if str(a).startswith("x")]
            rows = [r for r in rows if "-" in r]
            if len(rows) == 2 and shared(*rows):
                return history, state
            action = rng.choice(state.legal_actions())
            history.append(str(action))
            state.push(action)
    raise AssertionError("no two rows sharing a marker in 10,000 games")


def shared(first: str, second: str) -> set[str]:
    """The points two row removals share."""
    return set(row_points(first)) & set(row_points(second))


def row_points(token: str) -> list[str]:
    """The points of a row removal ``xa-b``: a row runs straight, so column (letter) and
    number change by equal steps from one end to the other."""
    (c0, r0), (c1, r1) = ((ord(p[0]), int(p[1:])) for p in token[1:].split("-"))
    steps = max(abs(c1 - c0), abs(r1 - r0))
    dc, dr = (c1 - c0) // steps, (r1 - r0) // steps
    return [f"{chr(c0 + k * dc)}{r0 + k * dr}" for k in range(steps + 1)]
