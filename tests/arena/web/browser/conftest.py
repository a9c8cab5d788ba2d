"""Browser tests of the site's pages. Their fixtures (``page`` at desktop and phone width,
``site``, ``log_in``) and measures (``fits_the_screen``, ``contrast``) live in
``tests/browser.py``, shared with the replay widget's tests."""

from tests.browser import button_contrasts, contrast, fits_the_screen, page_width

__all__ = ["button_contrasts", "contrast", "fits_the_screen", "page_width"]
