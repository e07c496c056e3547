"""Credentials never reach error messages, logs or outputs: one redaction function, a test per output."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from autorater_pipelines import autosxs, io
from autorater_pipelines.models import ErrorKind, ModelError
from autorater_pipelines.redaction import REDACTED, redact, redact_value, register_secret
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.judges import ECHO_MARK, leaky_length_judge

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

KEY = "AIzaSyD-test-secret-0123456789abcdefghijk"  # the shape of a Google API key


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"API key not valid: {KEY}.", f"API key not valid: {REDACTED}."),
        ("Authorization: Bearer abc.def-ghi_jkl", f"Authorization: Bearer {REDACTED}"),
        ("GET https://h/v1/models?key=s3cr3tvalue&alt=json", f"GET https://h/v1/models?key={REDACTED}&alt=json"),
        ("token ya29.a0AfH6SMBx-long-oauth-token", f"token {REDACTED}"),
        ("openai says sk-proj-ABCDEFGHIJKLMNOPQRSTUV is wrong", f"openai says {REDACTED} is wrong"),
        ("a task-oriented answer; nothing secret here", "a task-oriented answer; nothing secret here"),
        ("POST https://me:hunter2pass@llm.local/v1/chat", f"POST https://me:{REDACTED}@llm.local/v1/chat"),
        ("mail me@example.com at 10:30", "mail me@example.com at 10:30"),
    ],
)
def test_credential_shapes_are_redacted(text, expected):
    assert redact(text) == expected


def test_values_of_credential_variables_and_registered_secrets_are_redacted(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "plain-looking-value-42")
    monkeypatch.setenv("HOME_DIRECTORY", "plain-looking-other-43")  # not a credential name
    register_secret("parameter-secret-7777")
    text = "got plain-looking-value-42 and plain-looking-other-43 and parameter-secret-7777"
    assert redact(text) == f"got {REDACTED} and plain-looking-other-43 and {REDACTED}"
    assert redact_value({"a": [text], "n": 3}) == {"a": [redact(text)], "n": 3}


def test_model_errors_are_recorded_redacted(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    assert ModelError(ErrorKind.FATAL, f"bad key {KEY}").message == f"bad key {REDACTED}"


def test_output_writers_redact(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    io.write_jsonl(str(tmp_path / "rows.jsonl"), [{"raw": "echo sk-test-0123456789abcdefghij"}])
    io.write_json(str(tmp_path / "one.json"), {"raw": "echo sk-test-0123456789abcdefghij"})
    for name in ("rows.jsonl", "one.json"):
        text = (tmp_path / name).read_text()
        assert "sk-test" not in text and REDACTED in text


def _examples(tmp_path: Path) -> list[dict]:
    rows = [
        {"id": "ok", "question": "Capital of France?", "a": "Paris is the capital.", "b": "Lyon"},
        {"id": "leak", "question": f"Capital of Italy? {ECHO_MARK}", "a": "Rome", "b": "Milan, surely"},
    ]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return autosxs.prepare_examples(
        evaluation_dataset=str(tmp_path / "data.jsonl"),
        task="question_answering@001",
        id_columns=["id"],
        autorater_prompt_parameters={"inference_instruction": {"column": "question"}},
        response_column_a="a",
        response_column_b="b",
    )


def test_a_key_echoed_by_the_endpoint_reaches_no_output_of_the_judge_step(monkeypatch, tmp_path, caplog):
    from autorater_pipelines.report import write_report

    monkeypatch.setenv("GEMINI_API_KEY", KEY)  # Gemini Developer API: the key travels in x-goog-api-key
    out = tmp_path / "out"
    examples = _examples(tmp_path)
    with caplog.at_level(logging.DEBUG), ModelEmulator(leaky_length_judge) as emu:
        judgments, errors, _ = autosxs.judge_examples(
            examples=examples,
            task="question_answering@001",
            id_columns=["id"],
            autorater_model="gemini-2.5-flash",
            autorater_parameters={"base_url": emu.url, "cache_dir": "off", "progress": False},
            judgments_path=str(out / "judgments.jsonl"),
            error_messages_path=str(out / "error_messages.jsonl"),
        )
        assert emu.requests[0].headers.get("x-goog-api-key") == KEY  # the server did receive it
    autosxs.aggregate_judgments(judgments=judgments, metrics_path=str(out / "metrics.json"))
    write_report(str(out))
    by_id = {j["id"]: j for j in judgments}
    assert by_id["leak"]["choice"] == "ERROR" and by_id["ok"]["choice"] == "A"
    assert REDACTED in by_id["leak"]["samples"][0]["error"]
    assert errors and all(REDACTED in e["error"] for e in errors)
    for name in ("judgments.jsonl", "error_messages.jsonl", "metrics.json", "report.html"):
        text = (out / name).read_text(encoding="utf-8")
        assert KEY not in text, name
    assert "API key not valid" in (out / "error_messages.jsonl").read_text()
    assert "API key not valid" in (out / "report.html").read_text()
    assert KEY not in caplog.text and "API key not valid" in caplog.text


def test_a_url_password_is_redacted_but_a_port_is_not():
    """Break-it trial: the URL-password shape replaced ports ("http://127.0.0.1:[REDACTED]/v1")."""
    assert redact("cannot connect to http://127.0.0.1:18931/v1?key=abcd1234efgh") == (
        f"cannot connect to http://127.0.0.1:18931/v1?key={REDACTED}"
    )
    assert redact("base_url http://user:SuperSecretPw99@127.0.0.1:18931/v1") == (
        f"base_url http://user:{REDACTED}@127.0.0.1:18931/v1"
    )
