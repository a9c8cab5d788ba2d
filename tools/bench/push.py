"""How far behind the game a watching browser is: the time from a live move's row being written
to a match's page showing that action.

    ./dev bench push [--moves 40] [--every 0.4] [--server runserver|gunicorn]

It starts the site (``manage.py runserver``, as ``./dev start`` does, or gunicorn's threaded
workers, as the image does: the event streams run in their threads) on a free port of 127.0.0.1
against the configured database, makes a match of two versions of the built-in random bot (bots
named ``benchpush-*``) and claims it as a worker would, opens the match's page in Chromium
(Playwright driving ``$CHROMIUM``, else ``chromium`` (or ``chromium-browser``, ``google-
chrome``) on ``PATH``), then writes the game's actions one at a time as a worker's sidecar
writes them (:class:`arena.games.live.Moves`), every ``--every`` seconds. The page notes when
its board took each one (a ``MutationObserver`` on the widget's ``data-live-ply``, which it sets
once the board, the move list and the clocks are drawn), in the browser's clock: the same
machine's as the writer's. It prints the median, the 90th percentile and the largest delay, and
deletes what it made.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from django.utils import timezone
from playwright.sync_api import sync_playwright

import engine
from arena.bots import services as bots
from arena.bots.models import Bot, BotVersion
from arena.games import live
from arena.games.models import Match
from arena.jobs import claims
from arena.referee.game import Played
from tools import ToolError

PREFIX = "benchpush-"
ROOT = Path(__file__).resolve().parents[2]

#: Records the moment (the browser's ``Date.now()``) the widget first showed each ply.
OBSERVE = """() => {
  window.__seen = {};
  const widget = document.querySelector(".yinsh-replay");
  new MutationObserver(() => {
    const ply = widget.getAttribute("data-live-ply");
    if (!(ply in window.__seen)) window.__seen[ply] = Date.now();
  }).observe(widget, {attributes: true, attributeFilter: ["data-live-ply"]});
}"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="./dev bench push",
        description="Measure the time from a live move written to a watching browser showing it.",
    )
    parser.add_argument("--moves", type=int, default=40, help="actions written (default 40)")
    parser.add_argument(
        "--every", type=float, default=0.4, help="seconds between two actions (default 0.4)"
    )
    parser.add_argument(
        "--server",
        choices=SERVERS,
        default="runserver",
        help="the web server (default runserver)",
    )
    o = parser.parse_args(argv)
    if o.moves < 1 or o.every <= 0:
        raise ToolError("--moves must be 1 or more and --every above 0")
    delays = measure(o.moves, o.every, o.server)
    print(f"pushed: {len(delays)} actions, one every {o.every:g} s, served by {o.server}")
    print(f"delay, row written to page showing it: median {_ms(statistics.median(delays))},")
    print(f"  90th percentile {_ms(_percentile(delays, 0.9))}, largest {_ms(max(delays))}")
    return 0


def measure(moves: int, every: float, server: str = "runserver") -> list[float]:
    """The delays, in seconds, of ``moves`` actions written ``every`` seconds apart."""
    names = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
    chromium = os.environ.get("CHROMIUM") or next(filter(None, map(shutil.which, names)), None)
    if chromium is None:
        raise ToolError("no Chromium: install it (apt-get install chromium) or set CHROMIUM")
    # Playwright's synchronous API runs an event loop in this thread, which Django takes for
    # an asynchronous context; the writes here are synchronous all the same.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    _remove()
    try:
        match, attempt = _running_match()
        with _site(server) as base, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium)
            page = browser.new_page()
            page.goto(f"{base}/matches/{match.pk}/")
            page.wait_for_selector('.yinsh-replay[data-live-state="live"]', timeout=30_000)
            page.evaluate(OBSERVE)
            written = _play(match, attempt, moves, every)
            page.wait_for_function(
                f"() => window.__seen && {max(written)} in window.__seen", timeout=30_000
            )
            seen: dict[str, float] = page.evaluate("window.__seen")
            browser.close()
        return [(seen[str(ply)] / 1000 - at) for ply, at in written.items() if str(ply) in seen]
    finally:
        _remove()


def _play(match: Match, attempt: int, moves: int, every: float) -> dict[int, float]:
    """Write ``moves`` random legal actions, one every ``every`` seconds; when each was written
    (Unix time, after its ``INSERT`` returned: the database commits it as it returns)."""
    state = engine.State(match.variant)
    for token in match.opening_actions:
        state.play(token)
    writer = live.Moves(match.pk, attempt)
    rnd = random.Random(1)
    written: dict[int, float] = {}
    clocks = [600_000, 600_000]
    for _ in range(moves):
        if state.is_over():
            break
        color = state.turn.label
        action = rnd.choice(state.legal_actions())
        state.push(action)
        clocks[0 if color == "white" else 1] -= 50
        played = Played(
            ply=len(state.history),
            color=color,
            action=str(action),
            think_ms=50,
            clocks_ms=(clocks[0], clocks[1]),
            turn=state.turn.label,
            info="",
        )
        writer([live.timed(played)])
        written[played.ply] = time.time()
        time.sleep(every)
    return written


def _running_match() -> tuple[Match, int]:
    white, black = (
        bots.builtin_copy(f"{PREFIX}{name}", "random", BotVersion.Status.RETIRED)
        for name in ("a", "b")
    )
    match = Match.objects.create(
        variant="yinsh",
        kind=Match.Kind.TEST,
        status=Match.Status.QUEUED,
        white=white,
        black=black,
        time_control="600+0",
        queued_at=timezone.now(),
        rated=False,
    )
    attempt = claims.claim(Match, match.pk, "bench-push")
    if attempt is None:
        raise ToolError("the benchmark's match was claimed by someone else")
    return match, attempt


def _remove() -> None:
    versions = BotVersion.objects.filter(bot__name__startswith=PREFIX)
    Match.objects.filter(white__in=versions).delete()
    Bot.objects.filter(name__startswith=PREFIX).delete()


#: The web servers the site can be measured on, and their command (``{address}``: where).
SERVERS = {
    "runserver": ["manage.py", "runserver", "--noreload", "{address}"],
    "gunicorn": [
        "-m",
        "gunicorn",
        "arena.wsgi",
        "--bind",
        "{address}",
        "--workers",
        "1",
        "--worker-class",
        "gthread",
        "--threads",
        "8",
    ],
}


@contextmanager
def _site(kind: str) -> Iterator[str]:
    """The site on a free port, over plain HTTP (its static files served by WhiteNoise from
    the sources: debug on), until the block ends."""
    address = f"127.0.0.1:{free_port()}"
    env = dict(os.environ, ARENA_HTTPS="0", ARENA_DEBUG="1")
    server = subprocess.Popen(
        [sys.executable, *(part.format(address=address) for part in SERVERS[kind])],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://{address}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=5):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise ToolError("the site did not start") from None
                time.sleep(0.2)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"
