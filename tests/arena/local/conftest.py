"""Fixtures of the local commands' tests."""

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def command_sandbox_dir(settings) -> Iterator[Path]:
    """Commands keep their sandbox state in a test folder of their own, reachable by the slot
    uids (pytest's own folders are not: any pytest starting on the host makes them 0700)."""
    directory = Path(tempfile.mkdtemp(prefix="yinsh-commands-"))
    directory.chmod(0o711)
    settings.SANDBOX_STATE_DIR = directory
    settings.BOT_BUILD_DIR = directory / "builds"
    yield directory
    shutil.rmtree(directory, ignore_errors=True)
