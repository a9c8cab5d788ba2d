"""Paging of the API's lists: ``limit`` and ``offset``, checked."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.views import APIView


class Pagination(LimitOffsetPagination):
    """DRF's limit/offset paging, except that a ``limit`` or ``offset`` that is not a whole
    number in range is refused with a 400 (DRF's own falls back to the defaults silently)."""

    max_limit = 1000

    def get_limit(self, request: Request) -> int | None:
        limit = self._number(request, self.limit_query_param, 1, self.max_limit)
        return self.default_limit if limit is None else limit

    def get_offset(self, request: Request) -> int:
        offset = self._number(request, self.offset_query_param, 0, None)
        return 0 if offset is None else offset

    @staticmethod
    def _number(request: Request, name: str, low: int, high: int | None) -> int | None:
        """The parameter's value, or None when the request does not give it."""
        text = request.query_params.get(name)
        if text is None:
            return None
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low or (high is not None and value > high):
            bounds = f"from {low} to {high}" if high is not None else f"of at least {low}"
            raise ValidationError({name: [f"a whole number {bounds}"]})
        return value

    # OpenAPI parameter objects, walked by key: DRF's own type for them.
    def get_schema_operation_parameters(self, view: APIView) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for p in parameters:
            if p["name"] == self.limit_query_param:
                p["schema"].update(minimum=1, maximum=self.max_limit)
            else:
                p["schema"].update(minimum=0)
        return parameters
