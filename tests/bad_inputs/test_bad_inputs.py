"""Run the bad-input corpus (``bad_input_cases.py``): clear errors or error rows, never a traceback or partial output."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from bad_input_cases import REFUSED, REPLAY, ROWS, RefusedCase, RowCase

from autorater_pipelines.cli import main

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning")


def _materialize(files: dict[str, Any], params: Any, where: Path) -> Any:
    where.mkdir(parents=True, exist_ok=True)

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace("{dir}", str(where)).replace("{repo}", str(REPO))
        if isinstance(value, list):
            return [fill(v) for v in value]
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        return value

    for name, content in files.items():
        path = where / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, list):
            path.write_text("".join(json.dumps(fill(r), ensure_ascii=False) + "\n" for r in content), encoding="utf-8")
        else:
            path.write_text(content, encoding="utf-8")
    return fill(params)


def test_the_corpus_is_large_and_covers_both_pipelines() -> None:
    names = [c.name for c in REFUSED] + [c.name for c in ROWS]
    assert len(names) == len(set(names)) and len(names) >= 25
    assert {c.pipeline for c in REFUSED} == {"autosxs", "gecko"}
    assert any(c.entry.startswith("gecko") for c in ROWS) and any(c.entry.startswith("judge") for c in ROWS)


@pytest.mark.parametrize("case", REFUSED, ids=[c.name for c in REFUSED])
def test_refused_before_any_step(case: RefusedCase, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = {"replay.jsonl": REPLAY, **case.files} if case.pipeline == "autosxs" else case.files  # a valid default
    params = _materialize(files, case.params, tmp_path / "in")
    params_path = tmp_path / "params.json"
    params_path.write_text(params if isinstance(params, str) else json.dumps(params), encoding="utf-8")
    out = tmp_path / "out"
    code = main(["run", case.pipeline, "--params", str(params_path), "--output-dir", str(out), "--quiet"])
    captured = capsys.readouterr()
    err = captured.err
    assert code == 2, f"exit {code}; stderr: {err}"
    assert err.startswith("error: ") and "Traceback" not in err + captured.out, err
    assert re.search(case.message, err, re.DOTALL), f"{case.message!r} not in: {err}"
    assert not out.exists(), "no output directory for a refused run"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out")], "no staging leftovers"


def _judge(case: RowCase, params: dict[str, Any], where: Path) -> tuple[dict[str, dict], dict[str, list[str]]]:
    from autorater_pipelines import autosxs

    examples = autosxs.prepare_examples(
        evaluation_dataset=str(where / "data.jsonl"),
        task="question_answering@001",
        id_columns=["id"],
        autorater_prompt_parameters={"inference_instruction": {"column": "question"}},
        response_column_a="a",
        response_column_b="b",
    )
    judgments_path, errors_path = where / "judgments.jsonl", where / "errors.jsonl"
    kwargs: dict[str, Any] = {
        "examples": examples,
        "task": "question_answering@001",
        "id_columns": ["id"],
        "judgments_path": str(judgments_path),
        "error_messages_path": str(errors_path),
    }
    if case.entry == "judge_emulator":
        from autorater_pipelines.testing import ModelEmulator
        from autorater_pipelines.testing.judges import length_judge

        with ModelEmulator(length_judge, max_input_tokens=100_000) as emu:
            model_params = {**params["autorater_parameters"], "base_url": emu.url, "cache_dir": "off"}
            judgments, errors, _ = autosxs.judge_examples(
                **kwargs, autorater_model="gemini-2.5-flash", autorater_parameters=model_params | {"progress": False}
            )
    else:
        judgments, errors, _ = autosxs.judge_examples(
            **kwargs,
            autorater_model=f"replay/{where / 'replay.jsonl'}",
            autorater_parameters=params["autorater_parameters"],
        )
    written = [json.loads(line) for line in judgments_path.read_text(encoding="utf-8").splitlines()]
    assert written == json.loads(json.dumps(judgments)), "the judgments file holds every row"
    assert len(written) == len(examples)
    rows = {j["id"]: j for j in judgments}
    by_row: dict[str, list[str]] = {}
    for error in errors:
        by_row.setdefault(error["id"], []).append(error["error"])
    for row_id, judgment in rows.items():
        if row_id in by_row and judgment["choice"] == "ERROR":
            by_row[row_id].append(judgment["explanation"])
    return rows, by_row


def _gecko(case: RowCase, params: dict[str, Any], where: Path) -> tuple[dict[str, dict], dict[str, list[str]]]:
    from autorater_pipelines.gecko import steps as gecko_steps

    rubrics, rubric_errors = where / "rubrics.jsonl", where / "rubric_errors.jsonl"
    common = {"id_columns": ["id"], "media_column": "image", "media_type": "image"}
    validator_model = f"replay/{REPO}/examples/gecko_quickstart/validator_replay.jsonl"
    rubric_step = {
        "prompt_column": "prompt",
        "rubric_generation_model": f"replay/{REPO}/examples/gecko_quickstart/rubric_replay.jsonl",
        "id_columns": ["id"],
        "media_type": "image",
        **params,
    }
    rows = where / "rows.jsonl"  # the pipeline's check step, then its rubric step
    check = {"evaluation_dataset": str(where / "data.jsonl"), "validator_model": validator_model, **common}
    gecko_steps.check_run({**check, **rubric_step}, str(rows))
    gecko_steps.rubrics_for_rows(
        rows_path=str(rows), rubrics_path=str(rubrics), errors_path=str(rubric_errors), **rubric_step
    )
    rows_out = [json.loads(line) for line in rubrics.read_text(encoding="utf-8").splitlines()]
    errors = [json.loads(line) for line in rubric_errors.read_text(encoding="utf-8").splitlines()]
    if case.entry == "gecko_validate":
        validations, validation_errors = where / "validations.jsonl", where / "validation_errors.jsonl"
        gecko_steps.validate_media(
            rubrics_path=str(rubrics),
            validator_model=validator_model,
            validator_parameters={"questions_per_call": 0, "sampling_count": 1},
            validations_path=str(validations),
            errors_path=str(validation_errors),
            **common,
        )
        rows_out = [json.loads(line) for line in validations.read_text(encoding="utf-8").splitlines()]
        errors += [json.loads(line) for line in validation_errors.read_text(encoding="utf-8").splitlines()]
    by_row: dict[str, list[str]] = {}
    for error in errors:
        by_row.setdefault(error["id"], []).append(json.dumps(error, ensure_ascii=False))
    return {r["id"]: r for r in rows_out}, by_row


@pytest.mark.parametrize("case", ROWS, ids=[c.name for c in ROWS])
def test_bad_rows_become_error_rows(
    case: RowCase, tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    params = _materialize(case.files, case.params, tmp_path)
    rows, errors = (_gecko if case.entry.startswith("gecko") else _judge)(case, params, tmp_path)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err + caplog.text
    for row_id, pattern in case.errors.items():
        assert row_id in errors, f"no error row for {row_id!r}; errors: {errors}"
        assert any(re.search(pattern, text) for text in errors[row_id]), f"{pattern!r} not in {errors[row_id]}"
        if row_id in rows and "choice" in rows[row_id]:
            assert rows[row_id]["choice"] == "ERROR"
    for row_id in case.ok:
        assert row_id in rows and row_id not in errors, f"{row_id!r} should be fine; errors: {errors.get(row_id)}"
        assert rows[row_id].get("choice", "A") != "ERROR"
    for row_id, choice in case.choices.items():
        assert rows[row_id]["choice"] == choice


def test_dead_endpoint_stops_with_a_clear_error_and_error_rows(tmp_path: Path) -> None:
    """A model that only fails trips the run's failure budget: one clear error, few calls.

    Either way (issue 13) the step writes every row, the unjudged ones as ERROR with the budget's reason; in
    strict mode (``autorater_parameters.strict``) it then raises, by default it does not.
    """
    from autorater_pipelines import autosxs, io
    from autorater_pipelines.errors import ModelCallError
    from autorater_pipelines.testing import ModelEmulator

    rows = [{"id": f"r{i}", "question": "q", "a": "x", "b": "yy"} for i in range(40)]
    _materialize({"data.jsonl": rows}, {}, tmp_path)
    examples = autosxs.prepare_examples(
        evaluation_dataset=str(tmp_path / "data.jsonl"),
        task="question_answering@001",
        id_columns=["id"],
        autorater_prompt_parameters={"inference_instruction": {"column": "question"}},
        response_column_a="a",
        response_column_b="b",
    )
    params = {
        "cache_dir": "off",
        "progress": False,
        "max_concurrency": 4,
        "max_retries": 2,
        "initial_backoff_s": 0.01,
        "max_consecutive_failures": 5,
    }
    strict_out = tmp_path / "strict.jsonl"
    with ModelEmulator(fault_rate=1.0, fault_status=503) as emu:
        with pytest.raises(
            ModelCallError, match=r"stopped calling 'gemini-2.5-flash' after 5 consecutive failed calls"
        ):
            autosxs.judge_examples(
                examples=examples,
                task="question_answering@001",
                id_columns=["id"],
                autorater_model="gemini-2.5-flash",
                autorater_parameters={**params, "base_url": emu.url, "strict": True},
                judgments_path=str(strict_out),
            )
        assert emu.call_count < 40, "the run must not keep calling a dead endpoint"
    assert {j["choice"] for j in io.read_jsonl(str(strict_out))} == {"ERROR"}

    out = tmp_path / "judgments.jsonl"
    with ModelEmulator(fault_rate=1.0, fault_status=503) as emu:
        autosxs.judge_examples(
            examples=examples,
            task="question_answering@001",
            id_columns=["id"],
            autorater_model="gemini-2.5-flash",
            autorater_parameters={**params, "base_url": emu.url},
            judgments_path=str(out),
        )
        assert emu.call_count < 40, "the run must not keep calling a dead endpoint"
    judgments = io.read_jsonl(str(out))
    assert [j["id"] for j in judgments] == [r["id"] for r in rows]
    assert {j["choice"] for j in judgments} == {"ERROR"}
