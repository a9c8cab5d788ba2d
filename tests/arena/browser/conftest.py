"""Browser tests of the site's pages: Playwright for Python driving Debian's Chromium.

Nothing is downloaded: the browser is the system's Chromium (``$CHROMIUM``, else ``chromium``
on ``PATH``), given to Playwright as its ``executable_path``. Every test that asks for
``page`` runs twice, at desktop width and at a phone's (390 px, touch); a failing test leaves
a screenshot under ``var/test-results`` (pytest-playwright's ``--screenshot``, set in
pyproject.toml). The site is Django's live server on the test database.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

# Playwright's synchronous API runs an event loop in the test's thread; the test still talks
# to the database synchronously, which Django allows only when told so.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

INSTALL_HINT = (
    "the browser tests need Chromium: on Debian or Ubuntu run `apt-get install -y chromium` "
    "(or set CHROMIUM=/path/to/chromium); ./dev test installs it when it can"
)

#: The two screens every page is seen on.
SCREENS: dict[str, dict[str, Any]] = {
    "desktop": {"viewport": {"width": 1280, "height": 900}},
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
}


def find_chromium() -> str | None:
    given = os.environ.get("CHROMIUM")
    if given:
        return given if os.access(given, os.X_OK) else shutil.which(given)
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    executable = find_chromium()
    if executable is None:
        pytest.fail(INSTALL_HINT, pytrace=False)
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


@pytest.fixture
def page(page: Any) -> Iterator[Any]:
    """Playwright's page; the test fails if the page logged a JavaScript error."""
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on(
        "response",
        lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None,
    )
    page.set_default_timeout(15_000)
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


def fits_the_screen(page: Any) -> bool:
    """Whether the page is no wider than the screen (nothing scrolls sideways)."""
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"))


#: The contrast ratio of an element's text against its background (WCAG 2), in the page.
_CONTRAST_JS = """
(el) => {
  const rgb = (s) => s.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = ([r, g, b]) => {
    const c = [r, g, b].map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  let bg = el, colour = "rgba(0, 0, 0, 0)";
  while (bg) {
    colour = getComputedStyle(bg).backgroundColor;
    if (!/rgba\\(.*, 0\\)$/.test(colour)) break;
    bg = bg.parentElement;
  }
  if (!bg) colour = "rgb(255, 255, 255)";
  const a = lum(rgb(getComputedStyle(el).color)), b = lum(rgb(colour));
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}
"""


def contrast(locator: Any) -> float:
    """The contrast ratio (1 to 21) of an element's text against the background it is drawn
    on: at least 4.5 for normal text (WCAG AA)."""
    return float(locator.evaluate(_CONTRAST_JS))
