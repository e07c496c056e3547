"""Shared fixtures of the model-call tests: an offline environment and a running emulator."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from autorater_pipelines.models import GenerateConfig
from autorater_pipelines.testing import ModelEmulator

_CLOUD_ENV_PREFIXES = ("GOOGLE_", "GEMINI_", "OPENAI_")


@pytest.fixture(autouse=True)
def offline_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """No credentials, keys or endpoints from the developer's shell; a private cache directory."""
    for name in list(os.environ):
        if name.startswith(_CLOUD_ENV_PREFIXES):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AUTORATER_CACHE_DIR", str(tmp_path / "default-cache"))


@pytest.fixture
def emulator() -> Iterator[ModelEmulator]:
    with ModelEmulator() as emu:
        yield emu


@pytest.fixture
def make_config(emulator: ModelEmulator) -> Callable[..., GenerateConfig]:
    """GenerateConfig pointed at the emulator: no cache, no progress bar, tiny backoffs."""

    def make(**overrides: Any) -> GenerateConfig:
        values: dict[str, Any] = {
            "base_url": emulator.url,
            "progress": False,
            "cache_dir": "off",
            "initial_backoff_s": 0.01,
            "max_backoff_s": 0.05,
            "timeout_s": 10.0,
        }
        values.update(overrides)
        return GenerateConfig(**values)

    return make


def pytest_configure(config: pytest.Config) -> None:
    # google-genai 3.x subclasses aiohttp.ClientSession; aiohttp warns about it on every client.
    config.addinivalue_line(
        "filterwarnings", "ignore:Inheritance class AiohttpClientSession from ClientSession:DeprecationWarning"
    )
