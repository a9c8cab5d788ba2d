"""The API's JSON and form parsers: DRF's, with more ways for a body to be malformed.

Python's ``json`` reads arrays and objects by recursion, so a body nested some thousands deep
(``[[[[...``) raises ``RecursionError``, which DRF's parser lets through as a server error.
A form body that is not UTF-8 (raw or percent-encoded) is read by Django with every bad byte
replaced by U+FFFD, and saved so. Here both are a 400 that says why, like any other
malformed body.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import IO, Any
from urllib.parse import parse_qsl

from django.conf import settings
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


class FormParser(parsers.FormParser):
    def parse(
        self,
        stream: IO[Any],
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        raw = stream.read()
        try:
            parse_qsl(
                raw.decode("utf-8"),
                keep_blank_values=True,
                encoding="utf-8",
                errors="strict",
                max_num_fields=settings.DATA_UPLOAD_MAX_NUMBER_FIELDS,
            )
        except UnicodeDecodeError:
            raise ParseError("Form parse error - the body is not UTF-8") from None
        except ValueError:
            raise ParseError("Form parse error - too many fields") from None
        return super().parse(io.BytesIO(raw), media_type, parser_context)
