"""The API's JSON parser: DRF's, with one more way for a body to be malformed.

Python's ``json`` reads arrays and objects by recursion, so a body nested some thousands deep
(``[[[[...``) raises ``RecursionError``, which DRF's parser lets through as a server error.
Here it is a 400 that says why, like any other malformed body.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    def parse(
        self,
        stream: IO[Any],
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply") from None
