"""The type of JSON data: what ``json.loads`` gives and ``json.dumps`` and a JSONField take.

A leaf module (standard library only), so every part of the arena may use it.
"""

from __future__ import annotations

from typing import TypeAlias

#: Any JSON value.
JSON: TypeAlias = dict[str, "JSON"] | list["JSON"] | str | int | float | bool | None
#: A JSON object.
JSONObject: TypeAlias = dict[str, JSON]
