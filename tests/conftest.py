"""Fixtures shared by every test: an offline environment and the shared public data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
_CLOUD_ENV_PREFIXES = ("GOOGLE_", "GEMINI_", "OPENAI_")


@pytest.fixture(autouse=True)
def _offline_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No credentials, keys or endpoints from the developer's shell; a private response cache."""
    for name in list(os.environ):
        if name.startswith(_CLOUD_ENV_PREFIXES):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AUTORATER_CACHE_DIR", str(tmp_path / "response-cache"))


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data`` next to the repository (public data with recorded outputs); skip if absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA} (it sits next to the repository in CI)")
    return SHARED_DATA
