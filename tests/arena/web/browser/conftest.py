"""Browser tests of the site's pages. Their fixtures (``page`` at desktop and phone width,
``site``, ``log_in``) and measures (``fits_the_screen``, ``contrast``) live in
``tests/browser.py``, shared with the replay widget's tests."""

from typing import Any

import pytest

from tests.browser import button_contrasts, contrast, fits_the_screen, page_width

__all__ = ["button_contrasts", "contrast", "fits_the_screen", "page_width"]


@pytest.fixture(autouse=True)
def _short_streams(settings: Any) -> None:
    """The pages' event streams end every few seconds and say they are there every second: a
    stream notices that its page closed at its next write, so none outlives its test (and holds
    the test database) by more than a moment; the browser opens a stream again by itself."""
    settings.STREAM_LIFETIME_S = 5.0
    settings.STREAM_HEARTBEAT_S = 1.0
    # Likewise the long polls of a remote side played in the page (play.js): answered within
    # a second at the latest.
    settings.REMOTE_WAIT_S = 1
