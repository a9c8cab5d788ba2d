"""Browser tests' fixtures and measures: Playwright for Python driving Debian's Chromium.

A pytest plugin (``tests/conftest.py`` loads it). Nothing is downloaded: the browser is the
system's Chromium (``$CHROMIUM``, else ``chromium`` on ``PATH``), given to Playwright as its
``executable_path``; one browser serves the whole session and each test gets a fresh context.
Where Chromium is missing the browser tests skip and say how to install it; where the full
sandbox is required (``ARENA_REQUIRE_FULL_SANDBOX=1``, as on CI) they fail instead.

Every test that asks for ``page`` runs twice, on a desktop screen (1280 px) and on a phone's
(390 px, touch). The site is pytest-django's live server (``site``); a failing test leaves a
screenshot under ``var/test-results`` (pytest-playwright's ``--screenshot`` and ``--output``,
set in pyproject.toml). ``page`` fails a test whose page logged a JavaScript error or got an
error response.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from playwright.sync_api import expect

# Playwright's synchronous API keeps an event loop in the main thread for the rest of the
# session once a browser test started; tests still talk to the database synchronously, which
# Django allows only when told so.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
# The browser is the system's: Playwright must never fetch one of its own.
os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")

#: How long an action waits for its element, and ``expect`` for its condition, on a busy machine.
TIMEOUT_MS = 15_000
expect.set_options(timeout=TIMEOUT_MS)

INSTALL_HINT = (
    "the browser tests need Chromium: on Debian or Ubuntu run `apt-get install -y chromium` "
    "(or set CHROMIUM=/path/to/chromium); ./dev test installs it when it runs as root"
)

#: The two screens every page is seen on.
SCREENS: dict[str, dict[str, Any]] = {
    "desktop": {"viewport": {"width": 1280, "height": 900}},
    "phone": {
        "viewport": {"width": 390, "height": 844},
        "device_scale_factor": 2,
        "is_mobile": True,
        "has_touch": True,
    },
}


def find_chromium() -> str | None:
    """The Chromium executable: ``$CHROMIUM``, else the usual names on ``PATH``."""
    given = os.environ.get("CHROMIUM")
    if given:
        return given if os.access(given, os.X_OK) else shutil.which(given)
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that drives the browser is marked ``browser`` (``./dev test --fast`` leaves
    them out)."""
    for item in items:
        if "page" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    from tests.conftest import skip_unless_required

    executable = find_chromium()
    if executable is None:
        skip_unless_required(INSTALL_HINT)
    return {
        **browser_type_launch_args,
        "executable_path": executable,
        # Root in a container has no user namespaces for Chromium's own sandbox; the pages
        # are the test's own.
        "args": ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    }


@pytest.fixture(params=list(SCREENS))
def screen(request: pytest.FixtureRequest) -> str:
    """``desktop`` or ``phone``: every test using ``page`` runs on both."""
    return str(request.param)


@pytest.fixture
def browser_context_args(browser_context_args: dict[str, Any], screen: str) -> dict[str, Any]:
    return {**browser_context_args, **SCREENS[screen]}


def guessed_icon(url: str) -> bool:
    """A page without an icon link makes Chromium guess /favicon.ico: not the page's error."""
    return url.endswith("/favicon.ico")


@pytest.fixture
def page_errors() -> list[str]:
    """What the page logged as errors; a test that expects one reads and clears it."""
    return []


@pytest.fixture
def page(page: Any, page_errors: list[str]) -> Iterator[Any]:
    """Playwright's page; the test fails if the page logged a JavaScript error or got an
    error response (see ``page_errors``)."""
    errors = page_errors
    page.on("pageerror", lambda e: errors.append(str(e)))

    def on_console(message: Any) -> None:
        if message.type == "error" and not guessed_icon(message.location.get("url", "")):
            errors.append(message.text)

    def on_response(response: Any) -> None:
        if response.status >= 400 and not guessed_icon(response.url):
            errors.append(f"{response.status} {response.url}")

    page.on("console", on_console)
    page.on("response", on_response)
    page.set_default_timeout(TIMEOUT_MS)
    yield page
    assert errors == [], f"the page logged errors: {errors}"


@pytest.fixture
def site(live_server: Any) -> str:
    """The live server's base URL (no trailing slash)."""
    return str(live_server.url)


@pytest.fixture
def log_in(page: Any, site: str) -> Callable[[Any], None]:
    """``log_in(user)``: the browser carries that user's session from then on."""

    def log_in(user: Any) -> None:
        client = Client()
        client.force_login(user)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME]
        page.context.add_cookies(
            [{"name": cookie.key, "value": cookie.value, "url": site, "httpOnly": True}]
        )

    return log_in


# --------------------------------------------------------------------------- measures


def page_width(page: Any) -> int:
    """How wide the document is, in CSS pixels (wider than the screen: it scrolls sideways).
    Measured once the document is parsed: right after a click that navigates, the new document
    may have no root element yet."""
    page.wait_for_load_state("domcontentloaded")
    return int(page.evaluate("document.documentElement.scrollWidth"))


def fits_the_screen(page: Any) -> bool:
    """Whether the page is no wider than the screen (nothing scrolls sideways)."""
    return page_width(page) <= int(page.viewport_size["width"])


#: The innermost elements whose right edge lies beyond the screen (not counting those inside
#: an element that scrolls or clips them), as ``tag.class: right edge``.
_STICKING_OUT_JS = """
() => {
  const limit = document.documentElement.clientWidth;
  const clipped = (e) => {
    for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== "visible") return true;
    }
    return false;
  };
  const right = (e) => {  // an element's text may overflow it, unless it scrolls or clips
    const box = e.getBoundingClientRect();
    return getComputedStyle(e).overflowX === "visible"
      ? Math.max(box.right, box.left + e.scrollWidth) : box.right;
  };
  const out = Array.from(document.body.querySelectorAll("*")).filter((e) => {
    const box = e.getBoundingClientRect();
    return right(e) > limit + 0.5 && box.width > 0 && !clipped(e);
  });
  return out
    .filter((e) => !out.some((o) => o !== e && e.contains(o)))
    .slice(0, 8)
    .map((e) => {
      const name = e.className && typeof e.className === "string"
        ? "." + e.className.trim().split(/\\s+/).join(".") : "";
      return `${e.tagName.toLowerCase()}${name}: right edge at ${Math.round(right(e))} px`;
    });
}
"""


def sticking_out(page: Any) -> list[str]:
    """What sticks out of the screen sideways (empty when the page fits): the innermost
    elements whose right edge is beyond it, to say in a failing test what to mend."""
    if fits_the_screen(page):
        return []
    return [f"page {page_width(page)} px wide"] + list(page.evaluate(_STICKING_OUT_JS))


def assert_fits_the_screen(page: Any) -> None:
    """Fail, saying what sticks out, when the page scrolls sideways."""
    out = sticking_out(page)
    assert not out, f"{page.url} scrolls sideways: " + "; ".join(out)


#: The WCAG 2 contrast ratio of an element's text against what it is drawn on, from the
#: computed styles: the backgrounds of the element and its ancestors are laid over white from
#: the outermost in (a translucent one blends with what is under it), then the text colour
#: over that.
_CONTRAST_JS = """
(el) => {
  const parse = (s) => {
    const n = (s.match(/[\\d.]+/g) || ["0", "0", "0", "0"]).map(Number);
    return {rgb: n.slice(0, 3), a: n.length > 3 ? n[3] : 1};
  };
  const over = (top, under) => top.rgb.map((v, i) => v * top.a + under[i] * (1 - top.a));
  const lum = (rgb) => {
    const c = rgb.map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const layers = [];
  for (let e = el; e; e = e.parentElement) layers.push(parse(getComputedStyle(e).backgroundColor));
  let bg = [255, 255, 255];
  for (const layer of layers.reverse()) bg = over(layer, bg);
  const style = getComputedStyle(el);
  const fg = over(parse(style.color), bg);
  const a = lum(fg), b = lum(bg);
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}
"""

#: What counts as a button: buttons, submit inputs and links drawn as buttons.
BUTTONS = "button, input[type=submit], input[type=button], .button, [role=button]"


def contrast(locator: Any) -> float:
    """The contrast ratio (1 to 21) of an element's text against the background it is drawn
    on: at least 4.5 for normal text (WCAG AA)."""
    return float(locator.evaluate(_CONTRAST_JS))


def button_contrasts(page: Any) -> dict[str, float]:
    """Every visible button on the page, by its label, with its text's contrast ratio."""
    found: dict[str, float] = {}
    buttons = page.locator(BUTTONS)
    for k in range(buttons.count()):
        button = buttons.nth(k)
        if not button.is_visible():
            continue
        label = (
            button.get_attribute("aria-label")
            or button.get_attribute("value")
            or button.inner_text().strip()
            or f"button {k}"
        )
        found[label] = round(contrast(button), 2)
    return found


def low_contrast_buttons(page: Any, least: float = 4.5) -> dict[str, float]:
    """The visible buttons whose label falls short of ``least`` (WCAG AA: 4.5)."""
    return {label: ratio for label, ratio in button_contrasts(page).items() if ratio < least}


#: The impacts axe-core rates a violation at that fail a page.
GRAVE = ("serious", "critical")


#: Rules that fail a page whatever impact axe-core gives them: landmarks told apart by their
#: names.
ALWAYS = ("landmark-unique",)


def accessibility_violations(page: Any, exclude: list[str] | None = None) -> list[str]:
    """What axe-core (bundled by ``axe-playwright-python``) finds wrong with the page at its
    serious or critical impacts (or by a rule of :data:`ALWAYS`), as ``rule (impact): what it
    says, at selectors``; empty when nothing. ``exclude``: CSS selectors of parts drawn by
    someone else's code, not checked. axe is given to the page through Playwright's
    ``evaluate``, which the site's Content-Security-Policy does not govern (it refuses inline
    script tags)."""
    from axe_playwright_python.base import AXE_SCRIPT

    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE_SCRIPT)
    found = page.evaluate(
        "(exclude) => axe.run({exclude: exclude.map((s) => [s])}, {resultTypes: ['violations']})",
        exclude or [],
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']}, at "
        + ", ".join(" ".join(map(str, node["target"])) for node in v["nodes"][:5])
        for v in found["violations"]
        if v["impact"] in GRAVE or v["id"] in ALWAYS
    ]
