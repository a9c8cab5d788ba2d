"""The examples in the statistics' docstrings hold."""

import doctest
import importlib
import pkgutil

import pytest

import arena.stats

MODULES = ["arena.stats"] + [
    f"arena.stats.{m.name}" for m in pkgutil.iter_modules(arena.stats.__path__)
]


@pytest.mark.parametrize("name", MODULES)
def test_the_module_examples_hold(name: str) -> None:
    failures, tried = doctest.testmod(importlib.import_module(name))
    assert tried > 0 and failures == 0
