"""``autorater run gecko`` probes each model's explicit base_url before the run, as ``autorater run autosxs`` does.

Hostile trial (issue 25): Gecko ``run`` did not probe ``base_url``; a wrong one passed the preflight and the run
stalled 20-26 s before it stopped. Now a port where nothing listens fails the preflight: exit 2, no output, one line
with the URL, the model and the fix.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from autorater_pipelines.cli import main

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "gecko_quickstart"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens once closed


def _params(**overrides) -> dict:
    params = json.loads((QUICKSTART / "params.json").read_text())
    params["evaluation_dataset"] = str(QUICKSTART / "dataset.jsonl")
    for key in ("rubric_generation_model", "validator_model"):
        params[key] = "replay/" + str(REPO / params[key].removeprefix("replay/"))
    params.update(overrides)
    return params


@pytest.mark.parametrize(
    ("stage", "spec"), [("validator", "openai/validator"), ("rubric_generation", "gemini-2.5-flash")]
)
def test_a_wrong_base_url_fails_before_the_run_naming_the_url(stage, spec, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    port = _closed_port()
    options = {**_params().get(f"{stage}_parameters", {}), "base_url": f"http://127.0.0.1:{port}"}
    params_path = tmp_path / "params.json"
    params_path.write_text(json.dumps(_params(**{f"{stage}_model": spec, f"{stage}_parameters": options})))
    out = tmp_path / "out"
    code = main(["run", "gecko", "--params", str(params_path), "--output-dir", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists(), err
    [line] = [line for line in err.splitlines() if line.startswith("error:")]
    assert line.startswith(f"error: {stage}_parameters: cannot connect to http://127.0.0.1:{port}"), line
    assert f"(model {spec!r})" in line and "Fix: check `base_url`" in line and "Traceback" not in err
