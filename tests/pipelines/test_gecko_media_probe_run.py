"""``autorater run gecko`` with a validator that cannot see: TIFA's sample through a middleware that drops images.

Issue 19: through such middlewares TIFA's sample scored 0.06-0.07 (recorded answers: 0.8125) with exit 0. Here the
project's emulator answers the questions from the recorded VQA answers when it receives the image, and "no" when it
does not; ImageDroppingProxy sits in front of it as the middleware.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from autorater_pipelines.cli import main
from autorater_pipelines.gecko.answer_matching import choice_label
from autorater_pipelines.testing import ImageDroppingProxy, ModelEmulator

pytestmark = pytest.mark.pipeline

REPO = Path(__file__).resolve().parents[2]


def _public_data():
    spec = importlib.util.spec_from_file_location("gecko_public_data_probe", REPO / "examples" / "gecko_public_data.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


EMULATED = {"cache_dir": "off", "progress": False, "initial_backoff_s": 0.05, "max_backoff_s": 0.2}
GCP = {"project": "test-project", "location": "us-central1"}


@pytest.fixture
def tifa(shared_data, tmp_path):
    data = _public_data().convert_tifa_sample(shared_data, tmp_path / "tifa")
    expected = json.loads((shared_data / "tifa-sample" / "sample_evaluation_result.json").read_text())
    rows = [json.loads(line) for line in Path(data.dataset).read_text().splitlines() if line.strip()]
    images = {Path(r["image"]).read_bytes(): r["id"] for r in rows}
    qas = {r["id"]: {q["question_id"]: q for q in r["rubric"]["qas"]} for r in rows}
    details = expected["question_details"]

    def responder(request):
        ids = re.findall(r"^\[(\w+)\]", request.prompt_text, flags=re.M)
        seen = images.get(request.media[0][1]) if request.media else None
        answers = []
        for qid in ids:
            if seen is None:  # blind: "no" to everything
                answers.append({"question_id": qid, "answer": "no"})
                continue
            qa = qas[seen][qid]
            recorded = details[seen][qa["question"]]["multiple_choice_vqa"]
            answers.append({"question_id": qid, "answer": choice_label(qa["choices"], qa["choices"].index(recorded))})
        return json.dumps({"answers": answers})

    def params(url: str, **validator: object) -> dict:
        return {
            "evaluation_dataset": str(data.dataset),
            "id_columns": ["id"],
            "media_column": "image",
            "rubrics_column": "rubric",
            "validator_model": "gemini-2.5-flash",
            "validator_parameters": {**EMULATED, "base_url": url, **validator},
            **GCP,
        }

    return responder, params, expected


def _run(params: dict, tmp_path: Path, name: str) -> tuple[int, Path]:
    (tmp_path / f"{name}.json").write_text(json.dumps(params))
    out = tmp_path / name
    return main(["run", "gecko", "--params", str(tmp_path / f"{name}.json"), "--output-dir", str(out), "--quiet"]), out


def test_tifa_through_an_image_dropping_proxy_stops_the_run_naming_the_model_and_the_endpoint(tifa, tmp_path, capsys):
    responder, params, _ = tifa
    with ModelEmulator(responder=responder) as emu, ImageDroppingProxy(emu.url) as proxy:
        code, out = _run(params(proxy.url), tmp_path, "blind")
        assert emu.call_count == 0 and len(emu.probe_requests) == 3 and proxy.dropped == 2
        url = proxy.url
    assert code != 0
    err = capsys.readouterr().err
    assert f"the validator 'gemini-2.5-flash' at {url}" in err and "does not see the images it is sent" in err
    assert "media_probe to 'warn'" in err
    assert not (out / "results.jsonl").exists()


def test_warn_mode_scores_blind_with_the_warning_in_metrics_and_report(tifa, tmp_path, capsys):
    responder, params, _ = tifa
    with ModelEmulator(responder=responder) as emu, ImageDroppingProxy(emu.url) as proxy:
        code, out = _run(params(proxy.url, media_probe="warn"), tmp_path, "warned")
    assert code == 0
    printed = capsys.readouterr().out
    assert "WARNING media probe failed: the validator may not have seen the media" in printed
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["media_probe"]["status"] == "failed" and metrics["media_probe"]["mode"] == "warn"
    assert metrics["mean_final_score"] < 0.5  # scored blind
    assert "Media probe (warn): failed" in (out / "report.html").read_text()


def test_through_the_emulator_the_probe_passes_and_tifa_scores_0_8125(tifa, tmp_path):
    responder, params, expected = tifa
    with ModelEmulator(responder=responder) as emu:
        code, out = _run(params(emu.url), tmp_path, "seeing")
        assert emu.call_count == 2 and len(emu.probe_requests) == 3
    assert code == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["media_probe"]["status"] == "passed"
    assert metrics["mean_final_score"] == pytest.approx(expected["tifa_average"]) == pytest.approx(0.8125)
