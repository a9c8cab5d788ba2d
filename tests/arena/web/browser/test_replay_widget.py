"""The replay widget in a real headless Chromium: what a visitor sees and can do, on a desktop
screen and on a phone's (every test runs on both; see tests/browser.py).

The shipped demo page, its data and board.js/board.css are served by the live server as the
site's static files; two pages made here (the data inline, a missing data file) are handed to
the browser by Playwright at addresses of that server. Every position shown is checked against
the engine's own replay of the game's actions.
"""

from __future__ import annotations

import functools
import html
import json
import random
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

import engine
from arena.games.replay import replay_frames
from engine import Record, State
from tests.browser import assert_fits_the_screen

STATIC = Path(__file__).resolve().parents[4] / "arena" / "static" / "arena"
ROOT = ".yinsh-replay"

pytestmark = pytest.mark.slow


# --------------------------------------------------------------------------- fixtures


@pytest.fixture
def demo_url(site: str) -> str:
    """The shipped demo page, as the site serves it."""
    return f"{site}/static/arena/replay-demo.html"


def serve(page: Page, url: str, body: str) -> None:
    """Have the browser receive ``body`` as the HTML page at ``url``."""
    page.route(url, lambda route: route.fulfill(body=body, content_type="text/html"))


def inline_page() -> str:
    """A widget whose data (with think times and a hostile-looking info) sits in the page."""
    record = random_record("blitz", 21)
    entries = [
        {"action": str(a), "think_ms": 1500 + k, "info": f"<b>eval</b> {k}"}
        for k, a in enumerate(record.actions)
    ]
    data = json.dumps(replay_frames(record, {"actions": entries})).replace("</", "<\\/")
    return (
        '<!doctype html><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="stylesheet" href="/static/arena/board.css">'
        '<div class="yinsh-replay" data-hash="game" data-start="start">'
        f'<script type="application/json">{data}</script></div>'
        '<script src="/static/arena/board.js"></script>'
    )


BROKEN_PAGE = (
    '<!doctype html><link rel="stylesheet" href="/static/arena/board.css">'
    '<div class="yinsh-replay" data-replay-url="/static/arena/missing.json"></div>'
    '<script src="/static/arena/board.js"></script>'
)


def random_record(variant: str, seed: int) -> Record:
    rng = random.Random(seed)
    s = State(variant)
    while not s.is_over():
        s.push(rng.choice(s.legal_actions()))
    return Record.from_state(s, White="alpha", Black="<beta>")


@functools.cache
def demo(name: str = "replay-demo.json") -> dict[str, Any]:
    return json.loads((STATIC / name).read_text(encoding="utf-8"))


def engine_state(data: dict[str, Any], ply: int) -> State:
    """The engine's own position after ``ply`` actions of a data file's game."""
    s = State(data["variant"])
    for frame in data["frames"][:ply]:
        s.play(frame["action"])
    return s


# --------------------------------------------------------------------------- reading the page

_SEEN = """(() => {
  const root = document.querySelector(ROOT);
  const all = (sel) => Array.from(root.querySelectorAll(sel));
  const points = (sel) => all(sel).map((e) => e.getAttribute("data-point")).sort();
  const text = (sel) => { const e = root.querySelector(sel); return e ? e.textContent : null; };
  const current = root.querySelector(".yr-moves [aria-current=step]");
  return {
    state: root.getAttribute("data-replay-state"),
    ply: Number(root.querySelector(".yr-slider").value),
    rings: {white: points(".yr-pieces .yr-ring.yr-white"),
            black: points(".yr-pieces .yr-ring.yr-black")},
    markers: {white: points(".yr-pieces .yr-marker.yr-white"),
              black: points(".yr-pieces .yr-marker.yr-black")},
    flipped: points(".yr-pieces .yr-flipped"),
    ghosts: all(".yr-ghosts .yr-ghost").length,
    highlights: all(".yr-highlights circle").map((e) => e.getAttribute("class")),
    cells: all(".yr-cell").length,
    lines: all(".yr-lines").length,
    turn: text(".yr-turnlabel"),
    toMove: text(".yr-tomove"),
    extra: text(".yr-extra"),
    moves: all(".yr-moves li").length,
    current: current ? current.textContent : null,
    score: {white: root.querySelector(".yr-score[data-color=white]").getAttribute("data-removed"),
            black: root.querySelector(".yr-score[data-color=black]").getAttribute("data-removed")},
    names: all(".yr-name").map((e) => e.textContent),
    disabled: all(".yr-btn").filter((b) => b.disabled).map((b) => b.getAttribute("aria-label")),
    hash: location.hash,
  };
})()"""


def seen(page: Page) -> dict[str, Any]:
    return dict(page.evaluate(_SEEN.replace("ROOT", json.dumps(ROOT))))


def open_page(page: Page, url: str, *, state: str = "ready") -> dict[str, Any]:
    """Load a page and wait until its widget is drawn (or has failed, ``state="error"``)."""
    page.goto(url)
    expect(page.locator(ROOT)).to_have_attribute("data-replay-state", state)
    return seen(page) if state == "ready" else {}


def at_ply(page: Page, ply: int) -> dict[str, Any]:
    """What the widget shows once it has reached ``ply`` (waiting for it to get there)."""
    expect(page.locator(f"{ROOT} .yr-slider")).to_have_value(str(ply))
    return seen(page)


def press(page: Page, key: str) -> None:
    page.locator(ROOT).press(key)


def assert_shows(view: dict[str, Any], s: State) -> None:
    """The rings and markers drawn are exactly the engine's, point by point."""
    g = s.geometry
    for c, label in ((0, "white"), (1, "black")):
        assert view["rings"][label] == sorted(g.bit_names(s.rings[c])), f"{label} rings"
        assert view["markers"][label] == sorted(g.bit_names(s.markers[c])), f"{label} markers"


# --------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("ply", [0, 1, 10, 11, 12, 45, 57, 80])
def test_a_linked_ply_shows_the_engines_position_there(page: Page, demo_url: str, ply: int):
    data = demo()
    view = open_page(page, f"{demo_url}?load={ply}#ply={ply}")
    assert view["ply"] == ply
    assert_shows(view, engine_state(data, ply))
    assert view["lines"] == 1 and view["cells"] == 0  # the hex board is drawn with lines
    s = engine_state(data, ply)
    assert view["score"] == {"white": str(s.removed[0]), "black": str(s.removed[1])}
    if ply:
        assert view["turn"] == data["frames"][ply - 1]["turn"]


def test_without_a_ply_in_the_url_the_final_position_is_shown(page: Page, demo_url: str):
    data = demo()
    view = open_page(page, demo_url)
    assert view["ply"] == len(data["frames"])
    assert_shows(view, engine_state(data, len(data["frames"])))
    assert view["score"] == {"white": "2", "black": "3"}
    assert "Black wins" in view["toMove"]
    assert set(view["disabled"]) == {"Next ply (Right arrow)", "Last position (End)"}


def test_the_next_button_steps_forward_and_updates_the_link(page: Page, demo_url: str):
    data = demo()
    before = open_page(page, f"{demo_url}?step#ply=20")
    page.locator(".yr-btn-next").click()
    after = at_ply(page, 21)
    assert after["hash"] == "#ply=21"
    assert_shows(after, engine_state(data, 21))
    assert (after["rings"], after["markers"]) != (before["rings"], before["markers"])
    page.locator(".yr-btn-prev").click()
    at_ply(page, 20)
    page.locator(".yr-btn-first").click()
    first = at_ply(page, 0)
    assert first["hash"] == "#ply=0"
    assert first["rings"] == first["markers"] == {"white": [], "black": []}
    assert set(first["disabled"]) == {"First position (Home)", "Previous ply (Left arrow)"}
    page.locator(".yr-btn-last").click()
    at_ply(page, len(data["frames"]))


def test_the_arrow_keys_step_through_plies_and_turns(page: Page, demo_url: str):
    data = demo()
    open_page(page, f"{demo_url}?keys#ply=30")
    press(page, "ArrowRight")
    assert_shows(at_ply(page, 31), engine_state(data, 31))
    press(page, "ArrowLeft")
    press(page, "ArrowLeft")
    at_ply(page, 29)
    # Turn 31 is c5-a3;xb3-b7xb2 (plies 31 to 33): Down goes to the end of the next turn.
    page.evaluate("location.hash = '#ply=30'")
    at_ply(page, 30)  # the widget follows a hash change
    press(page, "ArrowDown")
    at_ply(page, 33)
    press(page, "ArrowUp")
    at_ply(page, 30)
    press(page, "ArrowRight")  # into turn 31, at its first action
    at_ply(page, 31)
    press(page, "ArrowUp")
    at_ply(page, 30)  # back to the turn's start
    press(page, "ArrowRight")
    at_ply(page, 31)
    press(page, "ArrowDown")
    at_ply(page, 33)  # on to the turn's end
    press(page, "Home")
    at_ply(page, 0)
    press(page, "End")
    at_ply(page, len(data["frames"]))


def test_the_move_list_has_one_entry_per_turn_and_a_click_jumps_there(page: Page, demo_url: str):
    data = demo()
    turns = engine.split_turns(engine_state(data, len(data["frames"])).history)
    view = open_page(page, f"{demo_url}?list#ply=0")
    assert view["moves"] == len(turns) == 70
    assert view["current"] is None
    page.locator('.yr-moves [data-turn="30"]').click()
    view = at_ply(page, 33)  # the position after the whole turn
    assert view["current"] == view["turn"] == "31.c5-a3;xb3-b7xb2"
    assert_shows(view, engine_state(data, 33))
    assert view["score"]["white"] == "1"


def test_the_last_move_is_highlighted_with_its_flips_and_removals(page: Page, demo_url: str):
    data = demo()
    move = next(f for f in data["frames"] if f["kind"] == "move" and len(f["flipped"]) >= 2)
    view = open_page(page, f"{demo_url}?hl#ply={move['n']}")
    assert sorted(view["highlights"]) == ["yr-from", "yr-to"]
    assert view["flipped"] == sorted(move["flipped"])
    assert view["ghosts"] == 0
    row = next(f for f in data["frames"] if f["kind"] == "remove-row")
    view = open_page(page, f"{demo_url}?row#ply={row['n']}")
    assert view["ghosts"] == 5  # the row just taken off, drawn faded
    assert "remove a ring" in view["toMove"]
    ring = data["frames"][row["n"]]
    view = open_page(page, f"{demo_url}?ring#ply={ring['n']}")
    assert ring["kind"] == "remove-ring" and view["ghosts"] == 1


def test_play_advances_by_itself_until_paused(page: Page, demo_url: str):
    open_page(page, f"{demo_url}?play#ply=5")
    play = page.locator(".yr-btn-play")
    play.click()
    expect(play).to_have_attribute("aria-pressed", "true")
    expect(page.locator(".yr-slider")).not_to_have_value("5")
    assert seen(page)["ply"] >= 6
    play.click()
    expect(play).to_have_attribute("aria-label", "Play (Space)")
    expect(play).to_have_attribute("aria-pressed", "false")


def test_yangsh_is_drawn_on_a_chequered_8x8_board(page: Page, demo_url: str):
    data = demo("replay-demo-yangsh.json")
    for ply in (0, 10, 40, len(data["frames"])):
        view = open_page(page, f"{demo_url}?game=yangsh&p={ply}#ply={ply}")
        assert view["cells"] == 64 and view["lines"] == 0
        assert_shows(view, engine_state(data, ply))
    assert "White wins" in view["toMove"]
    assert view["moves"] == len(engine.split_turns(engine_state(data, ply).history, "yangsh"))


def test_the_widget_fits_the_screen_and_the_board_fills_a_phones_width(
    page: Page, demo_url: str, screen: str
):
    open_page(page, f"{demo_url}?fit#ply=40")
    assert_fits_the_screen(page)
    width = page.viewport_size["width"] if page.viewport_size else 0
    board = page.locator(".yr-board").bounding_box()
    assert board is not None
    assert board["height"] > 250
    if screen == "phone":
        assert width - 60 <= board["width"] <= width  # the board takes the phone's width
    else:
        assert 400 <= board["width"] <= width


def test_the_board_is_played_by_touch_with_finger_sized_buttons(
    page: Page, demo_url: str, screen: str
):
    data = demo()
    open_page(page, f"{demo_url}?touch#ply=20")
    buttons = page.locator(".yr-controls .yr-btn")
    assert buttons.count() == 5
    for k in range(5):
        box = buttons.nth(k).bounding_box()
        assert box is not None
        assert box["width"] >= 44 and box["height"] >= 44  # a finger's size, not a pointer's
    step = page.locator(".yr-btn-next")
    if screen == "phone":
        step.tap()
        page.locator('.yr-moves [data-turn="30"]').tap()
    else:
        step.click()
        page.locator('.yr-moves [data-turn="30"]').click()
    view = at_ply(page, 33)
    assert_shows(view, engine_state(data, 33))


def test_inline_data_with_think_times_and_info_shown_as_plain_text(page: Page, site: str):
    serve(page, f"{site}/inline.html", inline_page())
    view = open_page(page, f"{site}/inline.html")
    assert view["ply"] == 0  # data-start="start"
    assert view["names"] == ["alpha", "<beta>"]
    press(page, "ArrowRight")
    view = at_ply(page, 1)
    assert view["hash"] == "#game=1"  # data-hash names the key
    assert "Thought 1.50 s" in view["extra"]
    assert "<b>eval</b> 0" in view["extra"]  # as text, not markup
    assert page.locator(".yinsh-replay b").count() == 0
    assert html.escape("<beta>") not in view["names"]


def test_a_missing_data_file_shows_a_message_instead_of_a_board(
    page: Page, site: str, page_errors: list[str]
):
    serve(page, f"{site}/broken.html", BROKEN_PAGE)
    open_page(page, f"{site}/broken.html", state="error")
    alert = page.locator(".yinsh-replay [role=alert]")
    expect(alert).to_contain_text("could not be loaded")
    expect(alert).to_contain_text("404")
    # The only errors logged are the failed request itself.
    assert page_errors and all("404" in e for e in page_errors)
    page_errors.clear()


def test_buttons_have_labels_for_screen_readers(page: Page, demo_url: str):
    open_page(page, f"{demo_url}?a11y#ply=3")
    labels = page.locator(".yinsh-replay button").evaluate_all(
        "(bs) => bs.map((b) => b.getAttribute('aria-label') || b.textContent.trim())"
    )
    assert all(labels) and len(labels) == 5 + 70
    expect(page.locator(".yr-board")).to_have_attribute("role", "img")
    expect(page.locator(".yr-board title")).to_contain_text("after ply 3")


#: How much two icons overlap (0 to 1: the area both fill over the area either fills), drawn
#: from their SVG paths on a canvas.
_OVERLAP = """([a, b]) => {
  const fill = (d) => {
    const c = document.createElement("canvas");
    c.width = c.height = 96;
    const g = c.getContext("2d");
    g.scale(4, 4);
    g.fill(new Path2D(d));
    return g.getImageData(0, 0, 96, 96).data;
  };
  const x = fill(a), y = fill(b);
  let both = 0, either = 0;
  for (let i = 3; i < x.length; i += 4) {
    both += x[i] > 127 && y[i] > 127;
    either += x[i] > 127 || y[i] > 127;
  }
  return both / either;
}"""


def test_play_and_next_ply_have_their_own_icons_and_names(page: Page, demo_url: str):
    open_page(page, f"{demo_url}?icons#ply=3")
    play = page.get_by_role("button", name="Play (Space)")
    step = page.get_by_role("button", name="Next ply (Right arrow)")
    expect(play).to_have_count(1)
    expect(step).to_have_count(1)
    icons = [b.locator("path").get_attribute("d") for b in (play, step)]
    assert page.evaluate(_OVERLAP, icons) < 0.7  # told apart at a glance, not by a pixel
    drawn = page.locator(".yr-controls .yr-btn path").evaluate_all(
        "(ps) => ps.map((p) => p.getAttribute('d'))"
    )
    for k, a in enumerate(drawn):
        for b in drawn[k + 1 :]:
            assert page.evaluate(_OVERLAP, [a, b]) < 0.7


@pytest.mark.parametrize("key", ["Enter", " "])
def test_the_keys_still_work_after_a_button_is_pressed_from_the_keyboard(
    page: Page, demo_url: str, key: str
):
    open_page(page, f"{demo_url}?focus#ply=3")
    page.locator(".yr-btn-first").focus()
    page.keyboard.press(key)
    at_ply(page, 0)  # the button is now disabled: focus must not fall off the widget
    page.keyboard.press("ArrowRight")
    at_ply(page, 1)
    page.locator(".yr-btn-last").focus()
    page.keyboard.press(key)
    n = len(demo()["frames"])
    at_ply(page, n)
    page.keyboard.press("ArrowLeft")
    at_ply(page, n - 1)
    page.locator(".yr-btn-next").focus()
    page.keyboard.press(key)
    at_ply(page, n)
    page.keyboard.press("Home")
    at_ply(page, 0)
