"""``autorater run autosxs`` against wrong and slow endpoints: a wrong base_url fails at once, --quiet still reports."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from autorater_pipelines.cli import main
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.judges import length_judge

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"


def _params(**overrides) -> dict:
    params = json.loads((QUICKSTART / "params.json").read_text())
    params["evaluation_dataset"] = str(QUICKSTART / "dataset.jsonl")
    params.update(overrides)
    return params


def _run(params: dict, tmp_path: Path) -> tuple[int, Path]:
    params_path = tmp_path / "params.json"
    params_path.write_text(json.dumps(params))
    out = tmp_path / "out"
    return main(["run", "autosxs", "--params", str(params_path), "--output-dir", str(out), "--quiet"]), out


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens once closed


@pytest.mark.parametrize("spec", ["openai/judge", "gemini-2.5-flash"])
def test_a_wrong_base_url_fails_before_the_run_naming_the_url(tmp_path, capsys, spec: str) -> None:
    port = _closed_port()
    url = f"http://user:secret@127.0.0.1:{port}"
    code, out = _run(_params(autorater_model=spec, autorater_parameters={"base_url": url}), tmp_path)
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    [line] = [line for line in err.splitlines() if line.startswith("error:")]
    assert f"cannot connect to http://127.0.0.1:{port}" in line and f"(model {spec!r})" in line
    assert "Fix: check `base_url`" in line and "secret" not in err and "Traceback" not in err


def test_a_wrong_base_url_of_model_a_fails_before_the_run(tmp_path, capsys) -> None:
    params = _params(
        autorater_model=f"replay/{QUICKSTART / 'replay.jsonl'}",
        response_column_a="",
        model_a="openai/generator",
        model_a_prompt_parameters={"prompt": {"column": "question"}},
        model_a_parameters={"base_url": f"http://127.0.0.1:{(port := _closed_port())}"},
    )
    code, out = _run(params, tmp_path)
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert f"cannot connect to http://127.0.0.1:{port}/v1 (model 'openai/generator')" in err
    assert "Traceback" not in err


@pytest.mark.pipeline
def test_quiet_run_still_prints_heartbeats(tmp_path, capsys) -> None:
    with ModelEmulator(length_judge, latency_s=0.25) as emulator:
        params = _params(
            autorater_model="openai/judge",
            autorater_parameters={
                "base_url": emulator.url,
                "cache_dir": "off",
                "max_concurrency": 1,
                "heartbeat_s": 0.5,
            },
        )
        code, _ = _run(params, tmp_path)
    assert code == 0
    captured = capsys.readouterr()
    beats = [
        line for line in captured.err.splitlines() if line.startswith("[autorater progress] judging (openai/judge): ")
    ]
    assert len(beats) >= 2 and " of 12 done, 0 failed, " in beats[-1]
    assert "[autorater progress]" not in captured.out
