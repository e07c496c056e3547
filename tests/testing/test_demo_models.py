"""The emulator's demo modes answer each request by what it asks, over real HTTP.

Found by the newcomer trial: ``--judge length`` answered the generation requests of models A/B with the judge's
JSON, so every documented parameter set that generates responses "worked" with nonsense responses
(``compare_models``: 100 % ties), and the emulator had no Gecko mode.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from autorater_pipelines import gecko
from autorater_pipelines.cli import main
from autorater_pipelines.gecko.generation import parse_generated_rubric
from autorater_pipelines.gecko.prompts import RUBRIC_SCHEMAS, RUBRIC_TEMPLATES
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.demo_models import gecko_model, length_judge_and_models

REPO = Path(__file__).resolve().parents[2]
JUDGE_PROMPT = (
    "Which response is better?\n<<<BEGIN RESPONSE A x>>>\nA long and careful answer.\n<<<END RESPONSE A x>>>\n"
    "<<<BEGIN RESPONSE B x>>>\nNo.\n<<<END RESPONSE B x>>>"
)
QA_PROMPT = (
    "What is the boiling point of water at sea level?\n"
    "CONTEXT: At sea level, pure water boils at 100 degrees Celsius (212 degrees Fahrenheit)."
)


def _chat(url: str, model: str, prompt: str, schema: dict | None = None) -> str:
    body: dict = {"model": model, "messages": [{"role": "user", "content": prompt}]}
    if schema is not None:
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
    request = urllib.request.Request(
        url + "/v1/chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())["choices"][0]["message"]["content"]


def _cli(mode: str) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "autorater_pipelines.testing.emulator", "--port", "0", "--judge", mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    return process, process.stdout.readline().split()[-1]


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    assert process.wait(timeout=10) == 0
    process.stdout.close()


def test_length_mode_judges_judge_requests_and_answers_generation_requests_with_text():
    process, url = _cli("length")
    try:
        assert json.loads(_chat(url, "judge", JUDGE_PROMPT))["choice"] == "A"  # the longer response
        a, b = _chat(url, "text-bison@002", QA_PROMPT), _chat(url, "tuned_bison", QA_PROMPT)
        for answer in (a, b):
            assert "pure water boils at 100 degrees Celsius" in answer  # drawn from the prompt's statement
            assert "CONTEXT" not in answer and "?" not in answer and not answer.lstrip().startswith("{")
        assert a != b  # two models word it differently
        assert _chat(url, "text-bison@002", QA_PROMPT) == a  # reproducible
    finally:
        _stop(process)


def test_gecko_mode_writes_a_valid_rubric_for_the_prompt_and_answers_in_the_format_asked():
    process, url = _cli("gecko")
    try:
        for media_type in ("image", "video"):
            prompt = RUBRIC_TEMPLATES[media_type].replace("{{ prompt }}", "Two brown dogs sleeping on a blue sofa")
            prompt = prompt.replace('{{ question_types | join(", ") }}', "object, color, counting")
            text = _chat(url, "generator", prompt, RUBRIC_SCHEMAS[media_type])
            rubric = parse_generated_rubric(text, media_type=media_type)  # the pipeline's own parser accepts it
            assert rubric["keywords"] == "{1}[Two] {2}[brown] {3}[dogs] {4}[sleeping] on a {5}[blue] {6}[sofa]"
            assert len(rubric["qas"]) == 6
            types = [qa["question_type"] for qa in rubric["qas"]]
            assert types == ["counting", "color", "object", "activity", "color", "object"]
            if media_type == "video":
                assert all(len(qa["choices"]) == 4 for qa in rubric["qas"])
                assert all(qa["answer"] in qa["choices"] for qa in rubric["qas"])
            else:
                assert all(qa["choices"] == ["yes", "no"] and qa["answer"] == "yes" for qa in rubric["qas"])
        every = (
            "Look at the image.\n\n[q1] Is there a dog? Answer yes or no.\n"
            "[q2] What color is the sofa? Options: a) red; b) blue; c) green\n"
            'Reply with one JSON object and nothing else:\n{"answers": [{"question_id": "<id>", "answer": "…"}]}'
        )
        answers = json.loads(_chat(url, "validator", every))["answers"]
        assert [a["question_id"] for a in answers] == ["q1", "q2"]
        assert answers[0]["answer"] in ("yes", "no") and answers[1]["answer"] in ("a", "b", "c")
        one = "Look carefully at the image.\n\nQuestion: Is there a dog?\nReply with the single word yes or no."
        assert _chat(url, "validator", one) in ("yes", "no")
        letter = "Question: What color?\nOptions: a) red; b) blue\nReply with the option's letter only."
        assert _chat(url, "validator", letter) in ("a", "b")
        assert "pure water" in _chat(url, "model", QA_PROMPT)  # anything else: a generated response
    finally:
        _stop(process)


@pytest.mark.pipeline
@pytest.mark.parametrize("questions_per_call", [0, 1])
def test_the_gecko_quickstart_runs_against_the_gecko_mode(tmp_path, monkeypatch, capsys, questions_per_call):
    monkeypatch.chdir(REPO)
    params = json.loads((REPO / "examples/gecko_quickstart/params.json").read_text())
    params.update(rubric_generation_model="gemini-2.5-flash", validator_model="gemini-2.5-flash")
    params["validator_parameters"] = {"questions_per_call": questions_per_call, "sampling_count": 1}
    path = tmp_path / "params.json"
    path.write_text(json.dumps(params))
    with ModelEmulator(gecko_model) as emulator:
        monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", emulator.url)
        code = main(["run", "gecko", "--params", str(path), "--output-dir", str(tmp_path / "out"), "--quiet"])
    assert code == 0, capsys.readouterr().err
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert (metrics["rows_scored"], metrics["rows_unscored"], metrics["parse_failures"]) == (3, 0, 0)
    assert 0 < metrics["mean_final_score"] < 1  # mostly "yes", one question in five "no"
    results = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert results[0]["keywords"] == "A {1}[red] {2}[circle] on a {3}[white] {4}[background]"


@pytest.mark.pipeline
def test_compare_models_against_the_length_mode_compares_generated_responses_and_says_once_why_no_evaluation(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(REPO)
    with ModelEmulator(length_judge_and_models) as emulator:
        monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", emulator.url)
        code = main(
            [
                "run",
                "autosxs",
                "--params",
                "examples/autosxs_docs/compare_models.json",
                "--output-dir",
                str(tmp_path / "out"),
                "--quiet",
            ]
        )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    judgments = [json.loads(line) for line in (tmp_path / "out" / "judgments.jsonl").read_text().splitlines()]
    for j in judgments:
        for side in ("a", "b"):
            assert not j[f"response_{side}"].lstrip().startswith("{"), j[f"response_{side}"]  # text, not JSON
        assert j["response_a"] != j["response_b"]
    assert {j["choice"] for j in judgments} != {"TIE"}
    both = captured.out + captured.err
    assert both.count("DefaultCredentialsError") == 1, both
    assert "no Application Default Credentials to import it with" in both
    assert gecko  # the package imports without kfp (used above through the CLI)
