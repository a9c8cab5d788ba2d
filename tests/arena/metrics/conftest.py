"""Fixtures of the metrics tests: the endpoint's token, and a scrape parsed with
prometheus_client's own text parser."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

TOKEN = "a-scraper-token"

#: (sample name, sorted labels) -> value
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@pytest.fixture
def metrics_token(settings: Any) -> str:
    settings.METRICS_TOKEN = TOKEN
    return TOKEN


@pytest.fixture
def scrape(client: Client, metrics_token: str) -> Callable[[], Samples]:
    """``GET /metrics`` with the token, parsed: every sample by name and labels."""

    def run() -> Samples:
        response = client.get("/metrics", headers={"Authorization": f"Bearer {metrics_token}"})
        assert response.status_code == 200, response.content[:2000]
        assert response["Content-Type"].startswith("text/plain")
        samples: Samples = {}
        for family in text_string_to_metric_families(response.content.decode()):
            for sample in family.samples:
                samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
        return samples

    return run


@pytest.fixture
def families(client: Client, metrics_token: str) -> Callable[[], set[str]]:
    """``GET /metrics`` with the token: the names of the metric families it holds (a family
    without samples too)."""

    def run() -> set[str]:
        response = client.get("/metrics", headers={"Authorization": f"Bearer {metrics_token}"})
        assert response.status_code == 200
        return {f.name for f in text_string_to_metric_families(response.content.decode())}

    return run


def value(samples: Samples, name: str, **labels: str) -> float:
    """One sample's value; NaN when there is none (so that a missing one fails loudly in an
    ``==``)."""
    return samples.get((name, tuple(sorted(labels.items()))), math.nan)


def names(samples: Samples, name: str) -> list[dict[str, str]]:
    """The label sets of every sample called ``name``."""
    return [dict(labels) for (n, labels) in samples if n == name]
