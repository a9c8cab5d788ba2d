"""Additions to the generated OpenAPI schema: the error responses every operation can give."""

from __future__ import annotations

from typing import Any

from drf_spectacular.generators import SchemaGenerator

from arena.referee.jsontypes import JSONObject

ERROR: JSONObject = {
    "type": "object",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
}
REFUSED: JSONObject = {
    "type": "object",
    "description": "What was wrong, by field (a list of messages), and in `detail` in a line.",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
    "additionalProperties": {},
}


def _response(description: str, component: str) -> JSONObject:
    ref: JSONObject = {"$ref": f"#/components/schemas/{component}"}
    return {"description": description, "content": {"application/json": {"schema": ref}}}


# The OpenAPI document is walked key by key: its values stay Any, as drf-spectacular passes
# it to hooks (as JSON every step would need a check).
def add_error_responses(
    result: dict[str, Any], generator: SchemaGenerator, **kwargs: object
) -> dict[str, Any]:
    """Document the errors of each operation unless its view did: 400 when it takes query
    parameters or a body, 415 for a body of another media type, 401 (no credentials or not valid
    ones), 403 (logged in but not allowed), 404 when its path names an object, 429 (a throttle:
    every operation has one). A drf-spectacular postprocessing hook."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas.setdefault("Error", ERROR)
    schemas.setdefault("Refused", REFUSED)
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            where = {p.get("in") for p in operation.get("parameters", [])}
            responses = operation.setdefault("responses", {})
            if "query" in where or "requestBody" in operation:
                responses.setdefault("400", _response("the request was refused", "Refused"))
            if "requestBody" in operation:
                responses.setdefault("415", _response("a body of a type not listed", "Error"))
            responses.setdefault(
                "401",
                _response("no credentials, or not valid ones (see WWW-Authenticate)", "Error"),
            )
            responses.setdefault("403", _response("logged in, but not allowed to do this", "Error"))
            if "path" in where:
                responses.setdefault("404", _response("no such object", "Error"))
            throttled = _response(
                "too many requests, or too many uploads, tests, challenges or tournaments: "
                "the Retry-After header says in how many seconds to try again",
                "Error",
            )
            responses.setdefault("429", throttled)
    return result
