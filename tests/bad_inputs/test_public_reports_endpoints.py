"""Public bug reports about quotas, faults, waits and re-runs, against a real HTTP endpoint (the protocol
emulator on 127.0.0.1, reached by the real google-genai client); see ``test_public_reports.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from public_report_runs import Run, run_autosxs

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# --- a real HTTP endpoint: quotas, faults, a key echoed back ---------------------------------------------

KEY = "AIzaSyD-public-reports-0123456789abcdefgh"
EMULATED_ROWS = [
    {"id": f"e{i}", "question": f"Question {i}?", "a": "word " * (1 + i % 4), "b": "word " * (4 - i % 4)}
    for i in range(20)
]
BLOCKED_MARK = "[blocked-by-safety-filter]"


def _longer(row: dict[str, str]) -> str:
    """The verdict of ``length_judge`` (the longer response wins), from the data alone."""
    return "A" if len(row["a"]) > len(row["b"]) else "B" if len(row["b"]) > len(row["a"]) else "TIE"


@pytest.fixture(scope="module")
def emulator_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, dict[str, Any]]:
    from autorater_pipelines.testing import ModelEmulator
    from autorater_pipelines.testing.judges import ECHO_MARK, leaky_length_judge

    where = tmp_path_factory.mktemp("emulator-run")
    rows = [
        *EMULATED_ROWS,
        {"id": "leak", "question": f"Echo {ECHO_MARK}?", "a": "x", "b": "yy"},
        {"id": "blocked", "question": f"Harmful {BLOCKED_MARK}?", "a": "x", "b": "yy"},
    ]

    def judge(request: Any) -> Any:
        if BLOCKED_MARK in request.prompt_text:
            return {"text": None, "finish_reason": "safety"}  # a blocked prompt: no text
        return leaky_length_judge(request)

    dataset = where / "data.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with ModelEmulator(judge, fault_rate=0.3, fault_status=(429, 503), seed=3) as emu:
        run = run_autosxs(
            where,
            dataset,
            None,
            env={"GEMINI_API_KEY": KEY},
            human_preference_column=None,
            autorater_model="gemini-2.5-flash",
            autorater_parameters={"base_url": emu.url, "sampling_count": 2, "flip": True, "initial_backoff_s": 0.01},
        )
        stats = emu.stats()
    return run, stats


def _check_no_row_lost_to_rate_limits(run: Run, stats: dict[str, Any]) -> None:
    # tatsu-lab/alpaca_eval#115: "n_total = 800" of 805 after rate-limit errors. Every row is written; the
    # only ERRORs are the rows the endpoint refuses for good (2 of 22: under the 10 % failure budget).
    judgments = run.judgments
    assert sorted(judgments) == sorted([r["id"] for r in EMULATED_ROWS] + ["leak", "blocked"])
    assert sorted(k for k, j in judgments.items() if j["choice"] == "ERROR") == ["blocked", "leak"]
    assert run.metrics["evaluation_count"] == 22 and run.metrics["error_count"] == 2 and run.code == 0


def _check_429_retried_not_recorded(run: Run, stats: dict[str, Any]) -> None:
    # mlflow/mlflow#24404: automatic evaluation had no retry, so 429s became failed assessments.
    assert stats["by_status"].get("429", 0) > 0 and stats["by_status"].get("503", 0) > 0, stats
    assert not [e for e in run.jsonl("error_messages.jsonl") if "429" in e["error"] or "503" in e["error"]]


def _check_verdicts_stay_with_their_rows(run: Run, stats: dict[str, Any]) -> None:
    # vibrantlabsai/ragas#956: with exceptions in some jobs the results came back in the wrong order;
    # vibrantlabsai/ragas#802: two rows blocked by Vertex AI's content filter shifted the scores of the
    # others. Here every row keeps the verdict its own responses call for, and the blocked row is an error.
    judgments = run.judgments
    assert {r["id"]: judgments[r["id"]]["choice"] for r in EMULATED_ROWS} == {
        r["id"]: _longer(r) for r in EMULATED_ROWS
    }


def _check_key_in_no_output(run: Run, stats: dict[str, Any]) -> None:
    # UKGovernmentBEIS/inspect_ai#623: the api_key was stored in the eval logs with the model args. Here the
    # endpoint even echoes it in its error body: it is in no output file and not on the terminal.
    from autorater_pipelines.redaction import REDACTED

    assert KEY not in run.printed
    for path in run.out.iterdir():
        assert KEY not in path.read_text(encoding="utf-8", errors="replace"), path.name
    assert any(REDACTED in e for e in run.errors["leak"])


EMULATOR_RUN_CHECKS = [
    ("tatsu-lab/alpaca_eval#115", _check_no_row_lost_to_rate_limits),
    ("mlflow/mlflow#24404", _check_429_retried_not_recorded),
    ("vibrantlabsai/ragas#956", _check_verdicts_stay_with_their_rows),
    ("vibrantlabsai/ragas#802", _check_verdicts_stay_with_their_rows),
    ("UKGovernmentBEIS/inspect_ai#623", _check_key_in_no_output),
]


@pytest.mark.pipeline
@pytest.mark.parametrize(("report", "check"), EMULATOR_RUN_CHECKS, ids=[r for r, _ in EMULATOR_RUN_CHECKS])
def test_emulated_endpoint_run_from_a_public_report(report: str, check: Any, emulator_run: tuple[Run, dict]) -> None:
    check(*emulator_run)


# --- the judging step on its own: waits and re-runs -------------------------------------------------------


def _judge(
    where: Path, rows: list[dict[str, Any]], params: dict[str, Any], model: str = "gemini-2.5-flash"
) -> dict[str, dict[str, Any]]:
    """The pipeline's judging step (``autosxs.judge_examples``) on ``rows``: judgments by id."""
    from autorater_pipelines import autosxs

    dataset = where / "data.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    examples = autosxs.prepare_examples(
        evaluation_dataset=str(dataset),
        task="question_answering@001",
        id_columns=["id"],
        autorater_prompt_parameters={"inference_instruction": {"column": "question"}},
        response_column_a="a",
        response_column_b="b",
    )
    judgments, _, _ = autosxs.judge_examples(
        examples=examples,
        task="question_answering@001",
        id_columns=["id"],
        autorater_model=model,
        autorater_parameters={"progress": False, "sampling_count": 2, "flip": True, **params},
        judgments_path=str(where / "judgments.jsonl"),
        error_messages_path=str(where / "errors.jsonl"),
    )
    return {j["id"]: j for j in judgments}


def test_a_retry_after_of_a_day_is_an_error_row_not_a_hang(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """UKGovernmentBEIS/inspect_ai#1753: retries waited 19,288 s (over 5 hours) despite a 30-minute cap.
    A server asking for a day's wait (``Retry-After: 86400``) gets an error row that says so, and the other
    rows are judged; nothing waits past ``max_retry_after_s`` (default 300 s)."""
    import threading

    from autorater_pipelines.testing import ModelEmulator
    from autorater_pipelines.testing.judges import length_judge

    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    rows = [{"id": "r1", "question": "Q?", "a": "x", "b": "yy"}]
    result: dict[str, Any] = {}
    with ModelEmulator(length_judge) as emu:
        emu.inject_failures(2, status=429, retry_after_s=86400)
        params = {"base_url": emu.url, "cache_dir": "off", "max_concurrency": 1}
        worker = threading.Thread(target=lambda: result.update(_judge(tmp_path, rows, params)), daemon=True)
        worker.start()
        worker.join(timeout=240)  # hang detection only (the product's cap is 300 s; a day is refused at once)
        assert not worker.is_alive(), "the judging step is waiting on Retry-After: 86400"
    judgment = result["r1"]
    assert judgment["choice"] == "ERROR"
    errors = [s["error"] for s in judgment["samples"] if s["error"]]
    assert errors and all("max_retry_after_s" in str(e) for e in errors), errors


def test_failed_and_unparseable_answers_are_asked_again_on_a_re_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tatsu-lab/alpaca_eval#340: annotations that failed were saved as null and, being cached, never
    retried ("n_total" stayed below 805). Here a call that failed is not cached, and an unparseable answer
    is asked again with ``retry_unparseable``: the re-run completes both rows and repeats no other call."""
    from autorater_pipelines.testing import ModelEmulator, Refusal
    from autorater_pipelines.testing.judges import length_judge, responses_in_prompt

    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    broken = {"down": True}

    def judge(request: Any) -> str:
        shown = responses_in_prompt(request.prompt_text)
        if broken["down"] and "flaky" in shown.values():
            raise Refusal(503, "The model is overloaded.")
        if broken["down"] and "garbled" in shown.values():
            return "I'd rather not say."
        return length_judge(request)

    rows = [
        {"id": "ok", "question": "Q1?", "a": "long answer", "b": "short"},
        {"id": "down", "question": "Q2?", "a": "flaky", "b": "the other answer"},
        {"id": "bad", "question": "Q3?", "a": "garbled", "b": "the other answer"},
    ]
    params: dict[str, Any] = {"cache_dir": str(tmp_path / "cache"), "max_retries": 0, "retry_unparseable": True}
    with ModelEmulator(judge) as emu:
        first = _judge(tmp_path, rows, {**params, "base_url": emu.url})
        assert [first[i]["choice"] for i in ("ok", "down", "bad")] == ["A", "ERROR", "ERROR"]
        calls = emu.call_count
        broken["down"] = False
        second = _judge(tmp_path, rows, {**params, "base_url": emu.url})
        assert [second[i]["choice"] for i in ("ok", "down", "bad")] == ["A", "B", "B"]
        assert emu.call_count - calls == 4, "only the 2 samples of each failed row are asked again"


def test_an_error_body_is_never_read_as_a_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """modelscope/evalscope#1575 (point 2): a failed judge request came back as an "[ERROR] ..." string that
    went through the score regex, so digits in the error text could become a score. Here the endpoint's
    error body holds a verdict-shaped "[[A]]": the row is an ERROR with the HTTP error as its reason."""
    from autorater_pipelines.testing import ModelEmulator, Refusal

    monkeypatch.setenv("GEMINI_API_KEY", "test-key")

    def judge(request: Any) -> str:
        raise Refusal(500, "[ERROR] upstream judge crashed after writing [[A]]")

    rows = [{"id": "r1", "question": "Q?", "a": "x", "b": "yy"}]
    params = {
        "base_url": "",
        "cache_dir": "off",
        "max_retries": 0,
        "verdict_pattern": r"\[\[(A|B|C)\]\]",
        "verdict_map": {"A": "A", "B": "B", "C": "TIE"},
    }
    with ModelEmulator(judge) as emu:
        judgment = _judge(tmp_path, rows, {**params, "base_url": emu.url})["r1"]
    assert judgment["choice"] == "ERROR"
    assert all(s["choice"] == "ERROR" and "500" in str(s["error"]) for s in judgment["samples"]), judgment


def test_an_edited_row_is_judged_again_not_served_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tatsu-lab/alpaca_farm#86: "Annotating 0 examples" — cached annotations were reused, and users could not
    tell whether their new outputs had been judged at all. Here the response cache is keyed by what the judge
    sees: a row whose response changed under the same id is asked again and gets the verdict its new text
    calls for; the unchanged row is served from the cache."""
    from autorater_pipelines.testing import ModelEmulator
    from autorater_pipelines.testing.judges import length_judge

    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    rows = [
        {"id": "same", "question": "Q1?", "a": "a long answer", "b": "short"},
        {"id": "edited", "question": "Q2?", "a": "a long answer", "b": "short"},
    ]
    params: dict[str, Any] = {"cache_dir": str(tmp_path / "cache")}
    with ModelEmulator(length_judge) as emu:
        first = _judge(tmp_path, rows, {**params, "base_url": emu.url})
        calls = emu.call_count
        rows[1]["b"] = "a much longer answer than the other one"
        second = _judge(tmp_path, rows, {**params, "base_url": emu.url})
        assert emu.call_count - calls == 2, "only the edited row's 2 samples are asked again"
    assert (first["same"]["choice"], first["edited"]["choice"]) == ("A", "A")
    assert (second["same"]["choice"], second["edited"]["choice"]) == ("A", "B")


def test_gecko_loses_no_row_to_rate_limits_and_server_errors(tmp_path: Path) -> None:
    """vibrantlabsai/ragas#1519 (and #554): under rate limits, jobs failed with TimeoutError and were skipped
    ("skipping over examples due to rate limiting seems to skew the results of the entire evaluation").
    Here a Gecko run (rubric generation, validation, scoring) against an endpoint that answers 30 % of the
    requests with 429 or 503 scores every row, and every row scores what its answers call for."""
    from autorater_pipelines import gecko
    from autorater_pipelines.testing import ModelEmulator
    from autorater_pipelines.testing.gecko_script import scripted_gecko_model, tiny_png

    image = tmp_path / "image.png"
    image.write_bytes(tiny_png())
    rubric = {
        "keywords": "A {1}[red] {2}[bicycle]",
        "qas": [
            {"keyword_id": 1, "question": "Is the bicycle red?", "question_type": "color", "answer": "yes"},
            {"keyword_id": 2, "question": "Is there a bicycle?", "question_type": "vehicle", "answer": "yes"},
        ],
    }
    rows = [{"uid": i, "prompt": f"A red bicycle, take {i}", "media": str(image)} for i in range(10)]
    gcp = {"project": "p", "location": "us-central1"}
    with ModelEmulator(scripted_gecko_model(rubric), fault_rate=0.3, fault_status=(429, 503), seed=5) as emu:
        settings = {"progress": False, "cache_dir": "off", "base_url": emu.url, "initial_backoff_s": 0.01}
        generator = gecko.RubricGenerator.of("gemini-2.5-flash", settings, **gcp)
        rubrics = gecko.generate_rubrics(
            rows, id_columns=["uid"], prompt_column="prompt", media_type="image", generator=generator
        )
        validator = gecko.Validator.of("gemini-2.5-flash", settings, **gcp)
        validated = gecko.validate(
            rubrics.rows, id_columns=["uid"], media_column="media", media_type="image", validator=validator
        )
        faults = emu.stats()["by_status"]
    assert faults.get("429", 0) > 0 and faults.get("503", 0) > 0, faults
    assert rubrics.errors == [] and validated.errors == []
    result = gecko.score(validated.rows, id_columns=["uid"])
    assert sorted(r["uid"] for r in result.results) == list(range(10))
    assert {r["final_score"] for r in result.results} == {1.0}


def test_a_verdict_from_an_answer_cut_off_mid_reasoning_is_not_the_conclusion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """eren23/openflipbook#142 and confident-ai/deepeval#929: a judge reply cut at max_tokens (before its
    verdict) was read as a verdict (0.0 / invalid JSON). Here an MT-Bench-style judge, asked to conclude with
    [[A]] / [[B]] / [[C]], is cut off mid-reasoning after naming "[[B]]" as a first impression: the concluding
    verdict never came, so the sample is an error saying it was truncated, not B."""
    from autorater_pipelines.testing import ModelEmulator

    monkeypatch.setenv("GEMINI_API_KEY", "test-key")

    def judge(request: Any) -> dict[str, Any]:
        return {"text": "At first sight [[B]] looks right, but checking the dates in A", "finish_reason": "max_tokens"}

    rows = [{"id": "r1", "question": "Q?", "a": "x", "b": "yy"}]
    params = {
        "cache_dir": "off",
        "verdict_pattern": r"\[\[(A|B|C)\]\]",
        "verdict_map": {"A": "A", "B": "B", "C": "TIE"},
    }
    with ModelEmulator(judge) as emu:
        judgment = _judge(tmp_path, rows, {**params, "base_url": emu.url})["r1"]
    assert judgment["choice"] == "ERROR", judgment
    assert all("truncated" in str(s["error"]) for s in judgment["samples"]), judgment["samples"]


ODD_ANSWERS = {
    # An OpenAI-compatible proxy that answers HTTP 200 with an error object and no choices.
    "error-object": {"error": {"message": "upstream overloaded", "type": "server_error"}},
    # A reasoning model (vLLM with a reasoning parser) that spent its whole budget thinking: no content.
    "all-thinking": {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "length",
                "message": {"role": "assistant", "content": None, "reasoning_content": "Let me compare [[A]] and"},
            }
        ],
    },
}


def _odd_server_judgment(tmp_path: Path, answer: dict[str, Any]) -> dict[str, Any]:
    """Judge one row with ``openai/m`` against a stdlib HTTP server on 127.0.0.1 that always sends ``answer``."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def _send(self, body: bytes) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:  # noqa: N802 - stdlib naming
            self.rfile.read(int(self.headers.get("content-length", 0)))
            self._send(json.dumps(answer).encode())

        def do_GET(self) -> None:  # noqa: N802 - stdlib naming
            self._send(b'{"object": "list", "data": [{"id": "m", "object": "model"}]}')

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        return _judge(
            tmp_path,
            [{"id": "r1", "question": "Q?", "a": "x", "b": "yy"}],
            {
                "base_url": f"http://127.0.0.1:{server.server_address[1]}/v1",
                "cache_dir": "off",
                "max_retries": 0,
                "max_consecutive_failures": 100,
            },
            model="openai/m",
        )["r1"]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_an_error_object_in_a_200_answer_is_reported_with_its_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """lm-sys/FastChat#3160 (and chatchat-space/Langchain-Chatchat#1904): an answer without 'choices' ended in
    "KeyError: 'choices'". Here it is an ERROR row (no traceback) whose reason carries the server's message (it
    used to say "blocked: the model returned no text (finish reason: none)")."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    judgment = _odd_server_judgment(tmp_path, ODD_ANSWERS["error-object"])
    assert judgment["choice"] == "ERROR"
    assert all("upstream overloaded" in str(s["error"]) for s in judgment["samples"]), judgment["samples"]


def test_a_judge_that_spent_its_tokens_thinking_is_told_to_raise_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """etalab-ia/evalap#139: a thinking model as judge "is always in failure": its observation was cut off in
    the middle of its reasoning. Here the ERROR row says the token limit was reached, not that the answer was
    blocked, and the reasoning's "[[A]]" is never read as a verdict (it used to say "blocked: the model returned
    no text (finish reason: max_tokens)")."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    judgment = _odd_server_judgment(tmp_path, ODD_ANSWERS["all-thinking"])
    assert judgment["choice"] == "ERROR"
    errors = [str(s["error"]) for s in judgment["samples"]]
    assert all("output-token limit was reached" in e and "raise max_output_tokens" in e for e in errors), errors
