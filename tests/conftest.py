"""Fixtures shared by every test: an offline environment and the shared public data."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

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


@pytest.fixture(scope="session")
def third_party() -> ModuleType:
    """The launcher of third-party model servers (``.ci/third_party_servers.py``), once their venvs are installed.

    ``.ci/run`` installs them in the background; a test waits for that (at most ``$AUTORATER_THIRD_PARTY_WAIT_S``
    seconds, default 900). Not installed: the test fails under ``CI=true`` and skips elsewhere (install them with
    ``python3 .ci/third_party_servers.py install``).
    """
    spec = importlib.util.spec_from_file_location("third_party_servers", REPO / ".ci" / "third_party_servers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    state = module.wait_installed(float(os.environ.get("AUTORATER_THIRD_PARTY_WAIT_S", "900")))
    if state.get("status") != "ready":
        reason = state.get("reason") or f"state {state.get('status', 'missing')!r} in {module.STATE}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"third-party servers unavailable in CI: {reason}", pytrace=False)
        pytest.skip(f"third-party servers not installed ({reason}); run `python3 .ci/third_party_servers.py install`")
    return module


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
