"""AutoSxS judged live by a real OpenAI-compatible server (llama-cpp-python + SmolLM2-135M-Instruct).

These tests check the machinery, not the quality of a 135M-parameter judge: every row ends judged or with a
specific reason, tokens are counted, a re-run is served from the cache, the structured-output mode the server
accepts is found once, a prompt longer than the context is one error after at most one attempt, and no row
ends in a retryable ("transient", "rate_limit") or budget error.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from autorater_pipelines.autosxs import judge_examples, prepare_examples
from autorater_pipelines.autosxs.inference import fill_missing_responses
from autorater_pipelines.models import ErrorKind
from autorater_pipelines.models._structured import MODES

pytestmark = pytest.mark.real_server

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"
RETRYABLE = ("transient:", "rate_limit:", "budget:")
CALL_ERRORS = {kind.value for kind in ErrorKind}  # "blocked: ...", "fatal: ...": the call failed, nothing cached
JUDGE_LIMIT = 160  # output tokens of one judgment: room for a short explanation and the choice


def _check_rows(judgments: list[dict], errors: list[dict], ids: list[str], id_column: str) -> None:
    """Every row is judged or has a specific reason; none failed as if the server were busy."""
    assert [j[id_column] for j in judgments] == ids, "one judgment per row, in input order"
    by_id = {}
    for error in errors:
        by_id.setdefault(error[id_column], []).append(error["error"])
    for judgment in judgments:
        assert judgment["choice"] in ("A", "B", "TIE", "ERROR")
        reasons = by_id.get(judgment[id_column], [])
        if judgment["choice"] == "ERROR":
            assert reasons, f"row {judgment[id_column]} is ERROR without a reason"
        for reason in reasons:
            assert reason and not reason.startswith(RETRYABLE), f"row {judgment[id_column]}: {reason}"
        for sample in judgment["samples"]:
            assert sample["attempts"] <= 1 or sample["cached"], sample  # nothing was retried as if busy


def test_quickstart_judged_live_then_from_the_cache(real_server, tmp_path, caplog) -> None:
    caplog.set_level(logging.INFO, logger="autorater_pipelines.models")
    params = json.loads((QUICKSTART / "params.json").read_text())
    examples = prepare_examples(
        evaluation_dataset=str(QUICKSTART / "dataset.jsonl"),
        task=params["task"],
        id_columns=params["id_columns"],
        autorater_prompt_parameters=params["autorater_prompt_parameters"],
        response_column_a=params["response_column_a"],
        response_column_b=params["response_column_b"],
        human_preference_column=params["human_preference_column"],
    )
    autorater_parameters = real_server.params(
        sampling_count=2, flip=True, max_output_tokens=JUDGE_LIMIT, cache_dir=str(tmp_path / "cache")
    )

    def judge() -> tuple:
        return judge_examples(
            examples=examples,
            task=params["task"],
            id_columns=params["id_columns"],
            autorater_model=f"openai/{real_server.model}",
            autorater_parameters=autorater_parameters,
        )

    judgments, errors, summary = judge()
    ids = [e["question_id"] for e in examples]
    _check_rows(judgments, errors, ids, "question_id")
    assert summary.evaluation_count == 6 and summary.model_calls >= 12 and summary.retries == 0
    assert summary.input_tokens > 12 * 500, "each judge prompt is over 3,000 characters: the server read them"
    assert summary.output_tokens > 0
    judged = [j for j in judgments if j["choice"] != "ERROR"]
    assert all(j["input_token_count"] > 0 for j in judged)
    endpoint = ("openai", f"{real_server.url}/v1", real_server.model)
    detected = MODES.detected(endpoint)
    assert detected is not None, "the structured-output mode was found"
    modes_logged = [r.getMessage() for r in caplog.records if "structured output mode" in r.getMessage()]
    assert len(modes_logged) == len(set(modes_logged)), "each mode change is logged once"
    print(f"\nquickstart live: {summary}; mode {detected.value}; errors {[e['error'][:80] for e in errors]}")

    # Answers are cached (parseable or not); failed calls (e.g. truncated JSON) are not, and are made again.
    samples = [s for j in judgments for s in j["samples"]]
    failed_calls = sum(1 for s in samples if s["error"] and s["error"].split(":")[0] in CALL_ERRORS)
    again, _, cached = judge()
    assert cached.cache_hits == len(samples) - failed_calls and cached.model_calls == failed_calls
    assert all(s["cached"] for j in again for s in j["samples"] if (s["error"] or "").split(":")[0] not in CALL_ERRORS)
    assert [j["choice"] for j in again] == [j["choice"] for j in judgments]


def _llmbar_rows(shared_data: Path) -> list[dict]:
    """19 short LLMBar MT-Bench rows and the longest one (its judge prompt exceeds the server's 1,536 tokens)."""
    items = json.loads((shared_data / "llmbar-mtbench" / "dataset.json").read_text())
    rows = [{"id": f"mtbench-{i}", **item} for i, item in enumerate(items)]
    by_length = sorted(rows, key=lambda r: len(r["input"]) + len(r["output_2"]))
    return [*by_length[:19], by_length[-1]]


def test_twenty_llmbar_rows_model_a_generated_and_judged_live(real_server, shared_data, tmp_path) -> None:
    rows = _llmbar_rows(shared_data)
    dataset = tmp_path / "llmbar20.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    examples = prepare_examples(
        evaluation_dataset=str(dataset),
        task="question_answering@001",
        id_columns=["id"],
        autorater_prompt_parameters={"inference_instruction": {"column": "input"}},
        response_column_a="",
        response_column_b="output_2",
        model_a=f"openai/{real_server.model}",
        model_a_prompt_parameters={"prompt": {"column": "input"}},
    )
    model_a_parameters = {k: v for k, v in real_server.params(max_output_tokens=48).items() if k not in ("progress",)}
    counts = fill_missing_responses(
        examples,
        id_columns=["id"],
        models={"a": f"openai/{real_server.model}", "b": ""},
        parameters={"a": model_a_parameters},
    )
    assert counts == {"generated_count": 20, "failed_count": 0}
    answers = [e["response_a"] for e in examples]
    assert all(a and a.strip() for a in answers)
    assert len(set(answers)) >= 15, "answers depend on the prompt: the server saw each question"

    judgments, errors, summary = judge_examples(
        examples=examples,
        task="question_answering@001",
        id_columns=["id"],
        autorater_model=f"openai/{real_server.model}",
        autorater_parameters=real_server.params(
            sampling_count=1, max_output_tokens=JUDGE_LIMIT, cache_dir=str(tmp_path / "cache")
        ),
    )
    _check_rows(judgments, errors, [r["id"] for r in rows], "id")
    longest = judgments[-1]
    assert longest["choice"] == "ERROR"
    [reason] = [e["error"] for e in errors if e["id"] == longest["id"]]
    assert reason.startswith("fatal: the prompt is longer than the model's context window"), reason
    assert [s["attempts"] for s in longest["samples"]] == [1]
    judged = [j for j in judgments if j["choice"] != "ERROR"]
    # Every other row reached the server and was answered: a 135M judge's rows end judged or with an error of the
    # model's own (a parse error, e.g. a copy of the prompt's format line; an answer truncated at max_output_tokens;
    # a prompt over its 1,536-token context), never a failed call.
    model_errors = ("parse_error:", "blocked: truncated at", "fatal: the prompt is longer than the model's context")
    reasons = {e["id"]: e["error"] for e in errors}
    for judgment in judgments[:-1]:
        if judgment["choice"] == "ERROR":
            assert reasons[judgment["id"]].startswith(model_errors), reasons[judgment["id"]]
    assert summary.input_tokens > 0 and summary.retries == 0
    print(f"\nLLMBar 20 live: {summary}; judged {len(judged)}; errors {sorted({e['error'][:60] for e in errors})}")
