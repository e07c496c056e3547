"""Gecko's partial results, as AutoSxS's: when the model calls stop early, every row is written — scored, or in
``error_messages`` with the reason — and the answers already given are kept. The endpoint goes down after N calls
(``ModelEmulator(fail_after=N)``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from autorater_pipelines.cli import main
from autorater_pipelines.errors import ModelCallError
from autorater_pipelines.gecko import steps as gecko_steps
from autorater_pipelines.testing import ModelEmulator, Refusal
from autorater_pipelines.testing.gecko_script import scripted_gecko_model, tiny_png

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "gecko_quickstart"
IMAGE_RUBRIC = {
    "keywords": "A {1}[red] {2}[bicycle]",
    "qas": [
        {"keyword_id": 1, "question": "Is the bicycle red?", "question_type": "color", "answer": "yes"},
        {"keyword_id": 2, "question": "Is there a bicycle?", "question_type": "object", "answer": "yes"},
    ],
}
ROWS = 6
# One call at a time (the order of calls is the order of rows), no retries, and the run stops after 2 failed calls
# in a row: with the endpoint down after N calls, calls N+1 and N+2 fail and the rest are never made.
STOPS_AFTER_TWO_FAILURES = {
    "progress": False,
    "cache_dir": "off",
    "max_concurrency": 1,
    "max_retries": 0,
    "max_consecutive_failures": 2,
}


def _dataset(tmp_path: Path) -> Path:
    (tmp_path / "bike.png").write_bytes(tiny_png())
    rows = [{"uid": i, "prompt": f"A red bicycle, take {i}", "media": "bike.png"} for i in range(1, ROWS + 1)]
    path = tmp_path / "bikes.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _params(dataset: Path, generator_url: str, validator_url: str, **validator: object) -> dict:
    return {
        "evaluation_dataset": str(dataset),
        "id_columns": ["uid"],
        "prompt_column": "prompt",
        "media_column": "media",
        "rubric_generation_model": "gemini-2.5-flash",
        "rubric_generation_parameters": {**STOPS_AFTER_TWO_FAILURES, "base_url": generator_url},
        "validator_model": "gemini-2.5-flash",
        "validator_parameters": {**STOPS_AFTER_TWO_FAILURES, "base_url": validator_url, **validator},
        "project": "test-project",
        "location": "us-central1",
    }


def _run(params: dict, tmp_path: Path, capsys) -> tuple[int, Path, str]:
    path = tmp_path / "params.json"
    path.write_text(json.dumps(params))
    out = tmp_path / "out"
    argv = ["run", "gecko", "--params", str(path), "--output-dir", str(out), "--quiet", "--max-failed-share", "1"]
    code = main(argv)
    return code, out, capsys.readouterr().out


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.pipeline
def test_validator_stops_early_every_row_is_written_and_the_judged_ones_kept(tmp_path, capsys):
    with ModelEmulator(responder=scripted_gecko_model(IMAGE_RUBRIC), fail_after=ROWS + 2) as emulator:
        code, out, printed = _run(_params(_dataset(tmp_path), emulator.url, emulator.url), tmp_path, capsys)
        # 6 rubric calls and 2 validator calls answered, 2 failed, then the run stopped: 4 rows never called.
        assert emulator.stats()["by_status"] == {"200": ROWS + 2, "503": 2}
    assert code == 0
    results = _jsonl(out / "results.jsonl")
    errors = {e["uid"]: e for e in _jsonl(out / "error_messages.jsonl")}
    assert [(r["uid"], r["final_score"]) for r in results] == [(1, 1.0), (2, 1.0)]
    assert sorted([*(r["uid"] for r in results), *errors]) == list(range(1, ROWS + 1)), "a row was lost"
    for uid in (3, 4):  # called, failed: the scorer's missing_answer_policy (default error) lists them
        assert (errors[uid]["stage"], errors[uid]["error_kind"]) == ("validation", "transient")
        assert "down after 8 calls (HTTP 503)" in errors[uid]["error_message"]
    for uid in (5, 6):  # never called
        assert (errors[uid]["stage"], errors[uid]["error_kind"]) == ("validation", "budget")
        assert errors[uid]["error_message"].startswith("not called: ")
        assert "0 of 2 questions answered" in errors[uid]["error_message"]
    metrics = json.loads((out / "metrics.json").read_text())
    assert (metrics["rows_scored"], metrics["rows_unscored"], metrics["not_called_count"]) == (2, 4, 2)
    assert metrics["model_calls_stopped"] == errors[5]["error_message"]
    assert metrics["mean_final_score"] == 1.0
    assert "mean final_score   1.0000  95% CI [" in printed and "(stdev 0.0000)  over 2 of 6 rows" in printed, printed
    assert "model calls stopped early: 2 row(s) not called" in printed, printed
    assert [r["uid"] for r in _jsonl(out / "validations.jsonl")] == [1, 2, 3, 4]


@pytest.mark.pipeline
def test_rubric_generation_stops_early_every_row_is_written(tmp_path, capsys):
    responder = scripted_gecko_model(IMAGE_RUBRIC)
    with ModelEmulator(responder=responder, fail_after=2) as generator, ModelEmulator(responder=responder) as judge:
        code, out, printed = _run(_params(_dataset(tmp_path), generator.url, judge.url), tmp_path, capsys)
        assert generator.stats()["by_status"] == {"200": 2, "503": 2}
        assert judge.stats()["calls"] == 2, "the rows that got a rubric are validated"
    assert code == 0
    results = _jsonl(out / "results.jsonl")
    errors = {e["uid"]: e for e in _jsonl(out / "error_messages.jsonl")}
    assert [(r["uid"], r["final_score"]) for r in results] == [(1, 1.0), (2, 1.0)]
    assert {uid: (e["stage"], e["error_kind"]) for uid, e in errors.items()} == {
        3: ("rubric_generation", "transient"),
        4: ("rubric_generation", "transient"),
        5: ("rubric_generation", "budget"),
        6: ("rubric_generation", "budget"),
    }
    assert errors[5]["error_message"].startswith("not called: ")
    metrics = json.loads((out / "metrics.json").read_text())
    assert (metrics["rows_scored"], metrics["not_called_count"]) == (2, 2)
    assert "over 2 of 6 rows" in printed and "2 row(s) not called" in printed


def test_strict_validator_writes_every_row_then_fails(tmp_path):
    """``validator_parameters.strict``: the step fails (the task's retry policy retries it from the cache), after
    writing the rows it has."""
    dataset = _dataset(tmp_path)
    rows = [{**r, "keywords": IMAGE_RUBRIC["keywords"]} for r in _jsonl(dataset)]
    for row in rows:
        row["media"] = str(tmp_path / "bike.png")
        row["qas"] = [
            {**qa, "question_id": str(i), "choices": ["yes", "no"], "dependencies": []}
            for i, qa in enumerate(IMAGE_RUBRIC["qas"], start=1)
        ]
    rubrics = tmp_path / "rubrics.jsonl"
    rubrics.write_text("".join(json.dumps(r) + "\n" for r in rows))
    validations, errors = tmp_path / "validations.jsonl", tmp_path / "validation_errors.jsonl"
    with ModelEmulator(responder=scripted_gecko_model(IMAGE_RUBRIC), fail_after=1) as emulator:
        with pytest.raises(ModelCallError, match=r"validation stopped early \(strict\): 3 row\(s\) not called"):
            gecko_steps.validate_media(
                rubrics_path=str(rubrics),
                id_columns=["uid"],
                media_column="media",
                validator_model="gemini-2.5-flash",
                validator_parameters={**STOPS_AFTER_TWO_FAILURES, "base_url": emulator.url, "strict": True},
                project="test-project",
                location="us-central1",
                validations_path=str(validations),
                errors_path=str(errors),
            )
    assert [r["uid"] for r in _jsonl(validations)] == [1, 2, 3]
    assert [(e["uid"], e["error_kind"]) for e in _jsonl(errors)] == [(4, "budget"), (5, "budget"), (6, "budget")]


def _text_only(request) -> str:
    """An OpenAI-compatible text-only server: a request with an image is refused, as llama.cpp without --mmproj."""
    if request.media:
        raise Refusal(400, "image input not supported")
    return "yes"


def _quickstart_with_validator(validator_model: str, url: str, media_type: str = "image") -> dict:
    params = json.loads((QUICKSTART / "params.json").read_text())
    params.update(
        evaluation_dataset=str(QUICKSTART / "dataset.jsonl"),
        rubric_generation_model=f"replay/{QUICKSTART / 'rubric_replay.jsonl'}",
        validator_model=validator_model,
        validator_parameters={"base_url": url, "progress": False, "cache_dir": "off", "max_concurrency": 1},
        media_type=media_type,
    )
    return params


@pytest.mark.pipeline
def test_text_only_validator_found_at_its_first_refusal_fails_the_run_with_one_clear_error(tmp_path, capsys):
    with ModelEmulator(responder=_text_only) as emulator:
        url = emulator.url
        params = _quickstart_with_validator("openai/my-text-model", url)
        (tmp_path / "params.json").write_text(json.dumps(params))
        argv = ["run", "gecko", "--params", str(tmp_path / "params.json"), "--output-dir", str(tmp_path / "out")]
        code = main([*argv, "--quiet"])
        assert emulator.call_count == 1, "one refusal, then no call for the other rows"
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err
    # The failed step's log (printed under --quiet when a step fails) holds its error as one line; the run's
    # own last line names the step. Not one error per row.
    lines = [line.strip() for line in err.splitlines() if line.strip().startswith("error: validator_model: ")]
    assert len(lines) == 1, err
    assert err.rstrip().endswith("Inner task failed: 'score-gecko-validations'."), err
    assert f"model 'openai/my-text-model' at {url}" in lines[0]
    assert (
        "does not accept image or video input" in lines[0] and "image input not supported'" in lines[0]
    )  # the server's own reason
    assert "'gemini-2.5-flash'" in lines[0] and "--mmproj" in lines[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("model", "media_type", "message"),
    [
        ("openai/gpt-3.5-turbo", "image", r"'gpt-3.5-turbo' is a text-only OpenAI model"),
        ("openai/gpt-4o", "video", r"chat completions take images, not videos"),
    ],
)
def test_validator_known_to_refuse_the_media_fails_before_the_run(model, media_type, message, tmp_path, capsys):
    with ModelEmulator(responder=_text_only) as emulator:
        params = _quickstart_with_validator(model, emulator.url, media_type)
        (tmp_path / "params.json").write_text(json.dumps(params))
        argv = ["run", "gecko", "--params", str(tmp_path / "params.json"), "--output-dir", str(tmp_path / "out")]
        assert main(argv) == 2
        assert emulator.call_count == 0
    err = capsys.readouterr().err
    assert err.startswith(f"error: validator_model: '{model}' cannot be given the {media_type}s to validate: "), err
    assert re.search(message, err) and "e.g. 'gemini-2.5-flash'" in err and err.count("\n") == 1, err
