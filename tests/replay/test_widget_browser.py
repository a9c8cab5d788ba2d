"""The replay widget in a real headless Chromium: what a visitor sees and can do.

The shipped demo page, its data and board.js/board.css are copied to a temporary folder and
served by a local HTTP server; the browser is driven over the DevTools protocol (see browser.py).
Every position shown is checked against the engine's own replay of the game's actions.
"""

from __future__ import annotations

import functools
import html
import http.server
import json
import random
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import engine
from arena.replay import replay_frames
from engine import Record, State

from .browser import INSTALL_HINT, Browser, find_chromium

STATIC = Path(__file__).resolve().parents[2] / "arena" / "static" / "arena"
SHIPPED = [
    "board.js",
    "board.css",
    "replay-demo.html",
    "replay-demo.json",
    "replay-demo-yangsh.json",
]
ROOT = ".yinsh-replay"

pytestmark = pytest.mark.slow


# --------------------------------------------------------------------------- fixtures


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A local web server with the widget's files and a page holding its data inline."""
    root = tmp_path_factory.mktemp("site")
    for name in SHIPPED:
        shutil.copy(STATIC / name, root / name)
    (root / "inline.html").write_text(inline_page(), encoding="utf-8")
    (root / "broken.html").write_text(
        '<!doctype html><link rel="stylesheet" href="board.css">'
        '<div class="yinsh-replay" data-replay-url="missing.json"></div>'
        '<script src="board.js"></script>',
        encoding="utf-8",
    )
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = find_chromium()
    if executable is None:
        pytest.fail(INSTALL_HINT, pytrace=False)
    b = Browser(executable)
    b.send("Emulation.setDeviceMetricsOverride", desktop())
    try:
        yield b
    finally:
        b.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Browser]:
    """The browser, with the errors of earlier tests forgotten; no new error may appear."""
    browser.events.clear()
    yield browser
    assert browser.errors() == [], "the page logged errors"


def desktop() -> dict[str, Any]:
    return {"width": 1200, "height": 900, "deviceScaleFactor": 1, "mobile": False}


def inline_page() -> str:
    """A widget whose data (with think times and a hostile-looking info) sits in the page."""
    record = random_record("blitz", 21)
    entries = [
        {"action": str(a), "think_ms": 1500 + k, "info": f"<b>eval</b> {k}"}
        for k, a in enumerate(record.actions)
    ]
    data = json.dumps(replay_frames(record, {"actions": entries})).replace("</", "<\\/")
    return (
        '<!doctype html><meta charset="utf-8"><link rel="stylesheet" href="board.css">'
        '<div class="yinsh-replay" data-hash="game" data-start="start">'
        f'<script type="application/json">{data}</script></div>'
        '<script src="board.js"></script>'
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


def seen(b: Browser) -> dict[str, Any]:
    return b.evaluate(_SEEN.replace("ROOT", json.dumps(ROOT)))


def open_page(b: Browser, url: str) -> dict[str, Any]:
    """Load a page and wait until its widget is drawn (or has failed)."""
    b.goto(url)
    state = b.evaluate(
        """new Promise((resolve) => {
          const check = () => {
            const root = document.querySelector(ROOT);
            const state = root && root.getAttribute("data-replay-state");
            if (state && state !== "loading") resolve(state); else setTimeout(check, 10);
          };
          check();
        })""".replace("ROOT", json.dumps(ROOT)),
        await_promise=True,
    )
    assert state in ("ready", "error")
    return seen(b)


def assert_shows(view: dict[str, Any], s: State) -> None:
    """The rings and markers drawn are exactly the engine's, point by point."""
    g = s.geometry
    for c, label in ((0, "white"), (1, "black")):
        assert view["rings"][label] == sorted(g.bit_names(s.rings[c])), f"{label} rings"
        assert view["markers"][label] == sorted(g.bit_names(s.markers[c])), f"{label} markers"


# --------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("ply", [0, 1, 10, 11, 12, 45, 57, 80])
def test_a_linked_ply_shows_the_engines_position_there(page, site, ply):
    data = demo()
    view = open_page(page, f"{site}/replay-demo.html?load={ply}#ply={ply}")
    assert view["state"] == "ready"
    assert view["ply"] == ply
    assert_shows(view, engine_state(data, ply))
    assert view["lines"] == 1 and view["cells"] == 0  # the hex board is drawn with lines
    s = engine_state(data, ply)
    assert view["score"] == {"white": str(s.removed[0]), "black": str(s.removed[1])}
    if ply:
        assert view["turn"] == data["frames"][ply - 1]["turn"]


def test_without_a_ply_in_the_url_the_final_position_is_shown(page, site):
    data = demo()
    view = open_page(page, f"{site}/replay-demo.html")
    assert view["ply"] == len(data["frames"])
    assert_shows(view, engine_state(data, len(data["frames"])))
    assert view["score"] == {"white": "2", "black": "3"}
    assert "Black wins" in view["toMove"]
    assert set(view["disabled"]) == {"Next ply (Right arrow)", "Last position (End)"}


def test_the_next_button_steps_forward_and_updates_the_link(page, site):
    data = demo()
    before = open_page(page, f"{site}/replay-demo.html?step#ply=20")
    page.click(".yr-btn-next")
    after = seen(page)
    assert after["ply"] == 21
    assert after["hash"] == "#ply=21"
    assert_shows(after, engine_state(data, 21))
    assert (after["rings"], after["markers"]) != (before["rings"], before["markers"])
    page.click(".yr-btn-prev")
    assert seen(page)["ply"] == 20
    page.click(".yr-btn-first")
    first = seen(page)
    assert first["ply"] == 0 and first["hash"] == "#ply=0"
    assert first["rings"] == first["markers"] == {"white": [], "black": []}
    assert set(first["disabled"]) == {"First position (Home)", "Previous ply (Left arrow)"}
    page.click(".yr-btn-last")
    assert seen(page)["ply"] == len(data["frames"])


def test_the_arrow_keys_step_through_plies_and_turns(page, site):
    data = demo()
    open_page(page, f"{site}/replay-demo.html?keys#ply=30")
    page.evaluate(f"document.querySelector({json.dumps(ROOT)}).focus()")
    page.key("ArrowRight")
    view = seen(page)
    assert view["ply"] == 31
    assert_shows(view, engine_state(data, 31))
    page.key("ArrowLeft")
    page.key("ArrowLeft")
    assert seen(page)["ply"] == 29
    # Turn 31 is c5-a3;xb3-b7xb2 (plies 31 to 33): Down goes to the end of the next turn.
    page.evaluate("location.hash = '#ply=30'")
    assert page.evaluate("new Promise((r) => setTimeout(() => r(true), 50))", await_promise=True)
    assert seen(page)["ply"] == 30  # the widget follows a hash change
    page.key("ArrowDown")
    assert seen(page)["ply"] == 33
    page.key("ArrowUp")
    assert seen(page)["ply"] == 30
    page.key("ArrowRight")  # into turn 31, at its first action
    page.key("ArrowUp")
    assert seen(page)["ply"] == 30  # back to the turn's start
    page.key("ArrowRight")
    page.key("ArrowDown")
    assert seen(page)["ply"] == 33  # on to the turn's end
    page.key("Home")
    assert seen(page)["ply"] == 0
    page.key("End")
    assert seen(page)["ply"] == len(data["frames"])


def test_the_move_list_has_one_entry_per_turn_and_a_click_jumps_there(page, site):
    data = demo()
    turns = engine.split_turns(engine_state(data, len(data["frames"])).history)
    view = open_page(page, f"{site}/replay-demo.html?list#ply=0")
    assert view["moves"] == len(turns) == 70
    assert view["current"] is None
    page.click('.yr-moves [data-turn="30"]')
    view = seen(page)
    assert view["ply"] == 33  # the position after the whole turn
    assert view["current"] == view["turn"] == "31.c5-a3;xb3-b7xb2"
    assert_shows(view, engine_state(data, 33))
    assert view["score"]["white"] == "1"


def test_the_last_move_is_highlighted_with_its_flips_and_removals(page, site):
    data = demo()
    move = next(f for f in data["frames"] if f["kind"] == "move" and len(f["flipped"]) >= 2)
    view = open_page(page, f"{site}/replay-demo.html?hl#ply={move['n']}")
    assert sorted(view["highlights"]) == ["yr-from", "yr-to"]
    assert view["flipped"] == sorted(move["flipped"])
    assert view["ghosts"] == 0
    row = next(f for f in data["frames"] if f["kind"] == "remove-row")
    view = open_page(page, f"{site}/replay-demo.html?row#ply={row['n']}")
    assert view["ghosts"] == 5  # the row just taken off, drawn faded
    assert "remove a ring" in view["toMove"]
    ring = data["frames"][row["n"]]
    view = open_page(page, f"{site}/replay-demo.html?ring#ply={ring['n']}")
    assert ring["kind"] == "remove-ring" and view["ghosts"] == 1


def test_play_advances_by_itself_until_paused(page, site):
    open_page(page, f"{site}/replay-demo.html?play#ply=5")
    page.click(".yr-btn-play")
    assert (
        page.evaluate("document.querySelector('.yr-btn-play').getAttribute('aria-pressed')")
        == "true"
    )
    ply = page.evaluate(
        """new Promise((resolve) => {
          const slider = document.querySelector(".yr-slider");
          const check = () =>
            slider.value !== "5" ? resolve(Number(slider.value)) : setTimeout(check, 20);
          check();
        })""",
        await_promise=True,
    )
    assert ply == 6
    page.click(".yr-btn-play")
    assert (
        page.evaluate("document.querySelector('.yr-btn-play').getAttribute('aria-label')")
        == "Play (Space)"
    )


def test_yangsh_is_drawn_on_a_chequered_8x8_board(page, site):
    data = demo("replay-demo-yangsh.json")
    for ply in (0, 10, 40, len(data["frames"])):
        view = open_page(page, f"{site}/replay-demo.html?game=yangsh&p={ply}#ply={ply}")
        assert view["state"] == "ready"
        assert view["cells"] == 64 and view["lines"] == 0
        assert_shows(view, engine_state(data, ply))
    assert "White wins" in view["toMove"]
    assert view["moves"] == len(engine.split_turns(engine_state(data, ply).history, "yangsh"))


def test_the_widget_fits_a_phone_screen(page, site):
    page.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": 360, "height": 740, "deviceScaleFactor": 2, "mobile": True},
    )
    try:
        open_page(page, f"{site}/replay-demo.html?phone#ply=40")
        sizes = page.evaluate(
            """(() => {
              const board = document.querySelector(".yr-board").getBoundingClientRect();
              return {page: document.documentElement.scrollWidth, board: board.width,
                      height: board.height, window: window.innerWidth};
            })()"""
        )
    finally:
        page.send("Emulation.setDeviceMetricsOverride", desktop())
    assert sizes["window"] == 360
    assert sizes["page"] <= 360  # nothing sticks out sideways
    assert 280 <= sizes["board"] <= 360 and sizes["height"] > 250


def test_inline_data_with_think_times_and_info_shown_as_plain_text(page, site):
    view = open_page(page, f"{site}/inline.html")
    assert view["state"] == "ready"
    assert view["ply"] == 0  # data-start="start"
    assert view["names"] == ["alpha", "<beta>"]
    page.evaluate(f"document.querySelector({json.dumps(ROOT)}).focus()")
    page.key("ArrowRight")
    view = seen(page)
    assert view["hash"] == "#game=1"  # data-hash names the key
    assert "Thought 1.50 s" in view["extra"]
    assert "<b>eval</b> 0" in view["extra"]  # as text, not markup
    assert page.evaluate("document.querySelectorAll('.yinsh-replay b').length") == 0
    assert html.escape("<beta>") not in view["names"]


def test_a_missing_data_file_shows_a_message_instead_of_a_board(browser, site):
    browser.events.clear()
    view_state = browser.evaluate("1")  # the browser still answers
    assert view_state == 1
    browser.goto(f"{site}/broken.html")
    message = browser.evaluate(
        """new Promise((resolve) => {
          const check = () => {
            const p = document.querySelector(".yinsh-replay [role=alert]");
            if (p) resolve(p.textContent); else setTimeout(check, 10);
          };
          check();
        })""",
        await_promise=True,
    )
    assert "could not be loaded" in message and "404" in message
    # The only error logged is the failed request itself.
    assert all("404" in e for e in browser.errors())


def test_buttons_have_labels_for_screen_readers(page, site):
    open_page(page, f"{site}/replay-demo.html?a11y#ply=3")
    labels = page.evaluate(
        "Array.from(document.querySelectorAll('.yinsh-replay button'))"
        ".map((b) => b.getAttribute('aria-label') || b.textContent.trim())"
    )
    assert all(labels) and len(labels) == 5 + 70
    assert page.evaluate("document.querySelector('.yr-board').getAttribute('role')") == "img"
    title = page.evaluate("document.querySelector('.yr-board title').textContent")
    assert "after ply 3" in title
