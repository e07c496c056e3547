"""Fixtures of the emulator tests: an offline environment and a running emulator."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from autorater_pipelines.testing import ModelEmulator

_CLOUD_ENV_PREFIXES = ("GOOGLE_", "GEMINI_", "OPENAI_")


@pytest.fixture(autouse=True)
def offline_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No credentials, keys or endpoints from the developer's shell."""
    for name in list(os.environ):
        if name.startswith(_CLOUD_ENV_PREFIXES):
            monkeypatch.delenv(name)


@pytest.fixture
def emulator() -> Iterator[ModelEmulator]:
    with ModelEmulator() as emu:
        yield emu
