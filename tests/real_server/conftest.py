"""The real OpenAI-compatible server for tests marked ``real_server`` (started by ``.ci/real_server.sh``).

Where it is: ``$AUTORATER_REAL_SERVER_URL`` (+ ``$AUTORATER_REAL_SERVER_MODEL``, default ``smollm2``) when set,
else the state file the script writes (``$AUTORATER_REAL_SERVER_HOME/state``, default
``~/.cache/autorater-pipelines/real-server/state``). While the script is still building, the fixture waits for
it (at most ``$AUTORATER_REAL_SERVER_WAIT_S`` seconds, default 1800). A server that is not there makes the tests
fail under ``CI=true`` and skip elsewhere.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from autorater_pipelines.models._structured import MODES

STATE_HOME = Path(
    os.environ.get("AUTORATER_REAL_SERVER_HOME")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "autorater-pipelines" / "real-server"
)


@dataclasses.dataclass(frozen=True)
class RealServer:
    """A running OpenAI-compatible server: its URL, the model name it serves, its ``/v1/models`` entry."""

    url: str
    model: str
    models: dict[str, Any]

    def params(self, **overrides: Any) -> dict[str, Any]:
        """GenerateConfig parameters for this server: one call at a time, greedy, generous timeouts."""
        values: dict[str, Any] = {
            "base_url": self.url,
            "temperature": 0.0,
            "seed": 0,
            "max_concurrency": 1,  # llama-cpp-python serves one request at a time; more would only queue
            "timeout_s": 600.0,  # a loaded 2-core machine
            "progress": False,
        }
        values.update(overrides)
        return values


def _read_state() -> dict[str, str]:
    try:
        lines = (STATE_HOME / "state").read_text().splitlines()
    except OSError:
        return {}
    return dict(line.split("=", 1) for line in lines if "=" in line)


def _unavailable(reason: str) -> None:
    log = STATE_HOME / "server.log"
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:]) if log.exists() else "(no log)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"real server unavailable in CI: {reason}\n{tail}", pytrace=False)
    pytest.skip(f"no real server ({reason}); start one with `bash .ci/real_server.sh`")


def _models(url: str) -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(f"{url}/v1/models", timeout=10) as answer:
            return json.loads(answer.read())
    except (OSError, ValueError):
        return None


@pytest.fixture(scope="session")
def real_server() -> RealServer:
    """The server, waiting for ``.ci/real_server.sh`` to finish building it when needed."""
    url = os.environ.get("AUTORATER_REAL_SERVER_URL")
    model = os.environ.get("AUTORATER_REAL_SERVER_MODEL", "smollm2")
    deadline = time.monotonic() + float(os.environ.get("AUTORATER_REAL_SERVER_WAIT_S", "1800"))
    while not url:
        state = _read_state()
        if state.get("status") == "ready":
            url, model = state["url"], state.get("model") or model
            if state.get("pid") and not Path(f"/proc/{state['pid']}").exists():
                _unavailable(f"the server process {state['pid']} is gone (it died after answering its readiness check)")
        elif state.get("status") == "building" and time.monotonic() < deadline:
            time.sleep(5)
        else:
            _unavailable(state.get("reason") or f"state {state.get('status', 'missing')!r} in {STATE_HOME / 'state'}")
    models = _models(url)
    if models is None:
        _unavailable(f"GET {url}/v1/models did not answer")
    return RealServer(url=url, model=model, models=models or {})


@pytest.fixture(autouse=True)
def _fresh_structured_modes():
    """Each test finds out the endpoint's structured-output mode itself."""
    MODES.reset()
    yield
    MODES.reset()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run the real-server tests last, so that a server still building in the background has the most time."""
    items.sort(key=lambda item: item.get_closest_marker("real_server") is not None)
