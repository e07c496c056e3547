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


@pytest.fixture(scope="session")
def storage_emulator():
    """One Cloud Storage emulator for the session (skips when gcp-storage-emulator is not installed)."""
    from autorater_pipelines.testing.cloud_emulators import GCS_TEST_BUCKET, StorageEmulator, missing_emulator

    reason = missing_emulator("gcs")
    if reason:
        pytest.skip(reason)
    with StorageEmulator(bucket=GCS_TEST_BUCKET) as emulator:
        yield emulator


@pytest.fixture
def bucket(storage_emulator, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest):
    """The emulator's bucket (google-cloud-storage Bucket) and a per-test ``gs://`` folder; env set."""
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    from autorater_pipelines.testing.cloud_emulators import GCS_TEST_BUCKET

    for name, value in storage_emulator.env.items():
        monkeypatch.setenv(name, value)
    client = storage.Client(project=None, credentials=AnonymousCredentials())
    folder = f"{request.node.module.__name__.rsplit('.', 1)[-1]}/{request.node.name}"
    return client.bucket(GCS_TEST_BUCKET), f"gs://{GCS_TEST_BUCKET}/{folder}"
