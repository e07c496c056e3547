"""A known secret is redacted however an endpoint echoes it (issue 14 item 4, break-it trial), and nothing else is.

The echoes come from a real endpoint emulator where an endpoint produces them (OpenAI and Gemini protocols,
:func:`autorater_pipelines.testing.judges.leaky_length_judge`); the unit tests pin each spelling.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import urllib.parse

import pytest

from autorater_pipelines import autosxs
from autorater_pipelines.redaction import REDACTED, RedactionFilter, redact, register_secret
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.judges import ECHO_FORMS, echo_mark, leaky_length_judge

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

KEY = "Tq8Xv3Jm/5Lw2+rTn7pKd4=sHc6yB9Qz"  # no known key shape; '/', '+', '=' change under URL and JSON encoding
KEY_RUNS = ("tq8xv3jm", "rtn7pkd4", "shc6yb9qz")  # its letter-digit runs, lower-cased
KEY_HEX_RUNS = ("5471385876334a6d", "72546e37704b6434", "73486336794239517a")  # the hex of its runs as written
KEY_BASE64 = (
    "VHE4WHYzSm0vNUx3MityVG43cEtkND1zSGM2eUI5UX",
    "RxOFh2M0ptLzVMdzIrclRuN3BLZDQ9c0hjNnlCOVF6",
    "UcThYdjNKbS81THcyK3JUbjdwS2Q0PXNIYzZ5QjlRe",
)
"""The base64 of KEY at each offset modulo 3, without the characters it shares with its neighbours."""


@pytest.fixture()
def key(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_API_KEY", KEY)
    return KEY


def _leaks(text: str) -> list[str]:
    """Every part of KEY still readable in ``text``: a letter-digit run in any case, or its base64."""
    lowered = text.lower()
    runs = [run for run in KEY_RUNS + KEY_HEX_RUNS if run in lowered]
    return runs + [b for b in KEY_BASE64 if b in text]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("API key not valid: TQ8XV3JM/5LW2+RTN7PKD4=SHC6YB9QZ.", f"API key not valid: {REDACTED}."),
        ("key tq8xv3jm/5lw2+rtn7pkd4=shc6yb9qz!", f"key {REDACTED}!"),
        ("GET /v1?key=Tq8Xv3Jm%2F5Lw2%2BrTn7pKd4%3DsHc6yB9Qz&alt=json", f"GET /v1?key={REDACTED}&alt=json"),
        ("GET /v1?key=Tq8Xv3Jm/5Lw2%2brTn7pKd4%3dsHc6yB9Qz", f"GET /v1?key={REDACTED}"),  # '/' kept, lower hex
        ("next=%2Fcb%3Fk%3DTq8Xv3Jm%252F5Lw2%252BrTn7pKd4%253DsHc6yB9Qz", f"next=%2Fcb%3Fk%3D{REDACTED}"),
        ('{"key": "Tq8Xv3Jm\\/5Lw2\\u002brTn7pKd4\\u003DsHc6yB9Qz"}', f'{{"key": "{REDACTED}"}}'),
        (
            "{'body': '{\"key\": \"Tq8Xv3Jm\\\\/5Lw2+rTn7pKd4=sHc6yB9Qz\"}'}",
            f"{{'body': '{{\"key\": \"{REDACTED}\"}}'}}",
        ),
        ("<td>Tq8Xv3Jm/5Lw2&#43;rTn7pKd4&#x3d;sHc6yB9Qz</td>", f"<td>{REDACTED}</td>"),
        ("Authorization: BEARER TQ8XV3JM/5LW2+RTN7PKD4=SHC6YB9QZ", f"Authorization: BEARER {REDACTED}"),
        ("{'Authorization': 'Bearer Tq8Xv3Jm/5Lw2+rTn7pKd4=sHc6yB9Qz'}", f"{{'Authorization': 'Bearer {REDACTED}'}}"),
    ],
)
def test_a_known_secret_is_redacted_in_any_case_and_encoding(key, text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [  # base64 of "apikey:" + KEY, "ab:" + KEY + ":x", KEY (without and with padding), "x:" + KEY
        (
            "Authorization: Basic YXBpa2V5OlRxOFh2M0ptLzVMdzIrclRuN3BLZDQ9c0hjNnlCOVF6",
            f"Authorization: Basic {REDACTED}",
        ),
        ("auth=YWI6VHE4WHYzSm0vNUx3MityVG43cEtkND1zSGM2eUI5UXo6eA==;", f"auth={REDACTED};"),
        ("tok VHE4WHYzSm0vNUx3MityVG43cEtkND1zSGM2eUI5UXo end", f"tok {REDACTED} end"),
        ("tok VHE4WHYzSm0vNUx3MityVG43cEtkND1zSGM2eUI5UXo= end", f"tok {REDACTED} end"),
        ('{"creds": "eDpUcThYdjNKbS81THcyK3JUbjdwS2Q0PXNIYzZ5QjlReg=="}', f'{{"creds": "{REDACTED}"}}'),
    ],
)
def test_the_base64_of_a_text_holding_a_secret_is_redacted_whole(key, text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Incorrect API key provided: Tq8Xv3Jm/5Lw... (see docs)",
            f"Incorrect API key provided: {REDACTED} (see docs)",
        ),
        ("key TQ8XV3JM/5LW2+RTN7P… refused", f"key {REDACTED} refused"),
        ("key Tq8Xv3Jm/5Lw2+rTn7pKd4=sHc6yB9*** refused", f"key {REDACTED} refused"),
        ("key Tq8Xv3Jm/5Lw2\\u2026 refused", f"key {REDACTED} refused"),
        ("body cut at 40 chars: Tq8Xv3Jm/5Lw2+r\nnext line", f"body cut at 40 chars: {REDACTED}\nnext line"),
        ("body cut at 40 chars: Tq8Xv3Jm/5Lw2+r", f"body cut at 40 chars: {REDACTED}"),
    ],
)
def test_a_prefix_of_twelve_characters_or_more_cut_off_by_an_ellipsis_is_redacted(key, text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("key: Tq8Xv3Jm/5Lw2+rT\nn7pKd4=sHc6yB9Qz end", f"key: {REDACTED} end"),
        ("key: Tq8Xv3Jm/5Lw2+rT\r\nn7pKd4=sHc6yB9Qz end", f"key: {REDACTED} end"),
        ('{"e": "key: Tq8Xv3Jm/5Lw2+rT\\nn7pKd4=sHc6yB9Qz"}', f'{{"e": "key: {REDACTED}"}}'),  # JSON-escaped
        ('{"e": "key: Tq8Xv3\\r\\n    Jm/5Lw2+rTn7pKd4=sHc6yB9Qz"}', f'{{"e": "key: {REDACTED}"}}'),
        ("key:\n  Tq8X\n  v3Jm/5Lw2+rTn7pKd4\n  =sHc6yB9Qz\n", f"key:\n  {REDACTED}\n"),  # wrapped, indented
        ("key: TQ8XV3JM/5LW2+RTN7PKD4=\r\n\tSHC6YB9QZ.", f"key: {REDACTED}."),
    ],
)
def test_a_secret_broken_over_lines_is_redacted_whole(key, text, expected):
    """Break-it trial: a real newline left the second half, ``\r\n`` or an escaped ``\n`` left all of it."""
    assert redact(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Invalid key Tq8Xv3Jm/5Lw2+rTn7pK (truncated) provided", f"Invalid key {REDACTED} provided"),
        ("Invalid key Tq8Xv3Jm/5Lw [truncated] provided", f"Invalid key {REDACTED} provided"),
        ("Invalid key Tq8Xv3Jm/5Lw\u2026(truncated)", f"Invalid key {REDACTED}(truncated)"),
        ("Invalid key Tq8Xv3Jm/5Lw2+ (TRUNCATED), retry", f"Invalid key {REDACTED}, retry"),
        ("key Tq8Xv3Jm/5Lw2<cut>", f"key {REDACTED}"),
        ("key Tq8Xv3Jm/5Lw2+rT was refused", f"key {REDACTED} was refused"),  # 16 characters, then anything
        ("key Tq8Xv3Jm/5Lw2+rTn7pKd4=sHc6yB9Qxx refused", f"key {REDACTED}xx refused"),  # all but the last
        ("k=Tq8Xv3Jm%2F5Lw2%2BrTn7pKdX", f"k={REDACTED}X"),  # encoded prefix
    ],
)
def test_a_prefix_cut_off_by_a_word_or_sixteen_characters_followed_by_anything_are_redacted(key, text, expected):
    """Break-it trial: "Invalid key <20 characters> (truncated) provided" kept them."""
    assert redact(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("key ending ...Kd4=sHc6yB9Qz was refused", f"key ending {REDACTED} was refused"),  # 12 after an ellipsis
        ("key ending \u2026 Kd4=sHc6yB9Qz.", f"key ending {REDACTED}."),  # 13
        ("key ending in rTn7pKd4=sHc6yB9Qz.", f"key ending in {REDACTED}."),  # 16, after anything
        ("key ending with 7pKd4=sHc6yB9Qz, ...4=sHc6yB9Qz", "key ending with 7pKd4=sHc6yB9Qz, ...4=sHc6yB9Qz"),
        ("spelled out: T q 8 X v 3 J m / 5 L w 2 + r T n 7 p K d 4 = s H c 6 y B 9 Q z.", f"spelled out: {REDACTED}."),
    ],
)
def test_a_suffix_and_a_key_spelled_out_with_spaces_are_redacted(key, text, expected):
    """Break-it trial: "key ending ...<last 12 characters>" and the key with a space between its characters."""
    assert redact(text) == expected


def test_a_secret_whose_every_character_is_escaped_is_redacted(key):
    """Break-it trial: every character escaped (``\\u0054``) (also inside a JSON string) or an HTML reference."""
    escaped = "".join(f"\\u{ord(c):04x}" for c in KEY)
    assert redact(f"key {escaped} end") == f"key {REDACTED} end"
    assert redact(json.dumps({"k": escaped})) == json.dumps({"k": REDACTED})
    assert redact("".join(f"&#{ord(c)};" for c in KEY) + "<br>") == f"{REDACTED}<br>"
    assert redact("&#84;&#113;&#56;&#88; and \\u0054\\u0071") == "&#84;&#113;&#56;&#88; and \\u0054\\u0071"


@pytest.mark.parametrize(
    "text",
    [
        "bad key hex 5471385876334a6d2f354c77322b72546e37704b64343d73486336794239517a",
        "BAD KEY HEX 5471385876334A6D2F354C77322B72546E37704B64343D73486336794239517A",
        "hex 5471385876334a6d2f354c77322b72546e37704b64 (prefix of 22 bytes)",
        '{"e": "5471385876334a6d2f354c77322b7254\\n6e37704b64343d73486336794239517a"}',
    ],
)
def test_the_hex_of_a_secret_or_of_its_prefix_is_redacted(key, text):
    redacted = redact(text)
    assert REDACTED in redacted and "5471385876334a6d" not in redacted.lower(), redacted
    assert redacted.startswith(text[:4])


@pytest.mark.parametrize(
    "text",
    [
        "Incorrect API key provided: Tq8Xv3Jm/5L... (11 characters are what providers show)",
        "Tq8Xv3Jm/5Lw2+r is not followed by an ellipsis",  # 15 characters inside text, not a cut-off echo
        "Tq8Xv3Jm/5Lw2 cutlery and truncation-free Tq8Xv3Jm/5Lw2+ text",  # words that only start like cut marks
        "Tq8Xv3Jm/5Lw2+r\tTn7 and a tab (no line break)",
        "hex 5471385876334a6d2f354c77322b72ff of 15 bytes of the key's hex, then other bytes",
        "served on http://127.0.0.1:18931/v1 at 10:30, port 8080, 12345678 rows",
        "the bearer should sign the basic instructions; Basic understanding of tokens",
        "Tq8Xv3Jm plus rTn7pKd4 as separate words",
    ],
)
def test_text_that_is_not_the_secret_is_left_alone(key, text):
    assert redact(text) == text


def test_a_bearer_word_is_a_token_in_an_authorization_header():
    assert redact("Authorization: Bearer letmein") == f"Authorization: Bearer {REDACTED}"
    assert redact('{"authorization": "bearer swordfish"}') == f'{{"authorization": "bearer {REDACTED}"}}'
    assert redact("the bearer should sign") == "the bearer should sign"


def test_short_and_numeric_values_are_not_secrets(monkeypatch):
    """Values under 8 characters and numbers in credential-named variables would replace words and counts."""
    monkeypatch.setenv("SHORT_TOKEN", "Abc123x")
    monkeypatch.setenv("MAX_TOKENS_LIMIT", "100000000")
    register_secret("2024")
    text = "Abc123x judged 100000000 tokens in 2024 on port 18931"
    assert redact(text) == text


def test_non_ascii_characters_are_matched_json_escaped(monkeypatch):
    monkeypatch.setenv("PORTAL_PASSWORD", "pässwörd-Geheim-7")
    assert redact('{"pw": "p\\u00e4ssw\\u00f6rd-Geheim-7"}') == f'{{"pw": "{REDACTED}"}}'
    assert redact("pw=p%C3%A4ssw%C3%B6rd-Geheim-7") == f"pw={REDACTED}"
    assert redact("PÄSSWÖRD-GEHEIM-7") == REDACTED


def test_a_long_token_and_a_long_prefix_of_it_are_redacted(monkeypatch):
    token = "eyJhbGciOiJSUzI1NiJ9." + "QWxhZGRpbjpvcGVuIHNlc2FtZQ-_" * 40  # a 1,141-character JWT-like token
    monkeypatch.setenv("SERVICE_ACCESS_TOKEN", token)
    assert redact(f"token {token} expired") == f"token {REDACTED} expired"
    assert redact(f"token {token[:500]}... expired") == f"token {REDACTED} expired"


def test_a_secret_containing_another_is_replaced_whole(monkeypatch):
    monkeypatch.setenv("OUTER_TOKEN", "outer-Tq8Xv3Jm-inner-secret-9")
    monkeypatch.setenv("INNER_TOKEN", "inner-secret-9")
    assert redact("got OUTER-TQ8XV3JM-INNER-SECRET-9 and inner-secret-9") == f"got {REDACTED} and {REDACTED}"


def test_the_logging_filter_redacts_messages_arguments_and_tracebacks(key):
    records: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(self.format(record))

    handler = Collect()
    handler.addFilter(RedactionFilter())
    log = logging.getLogger("autorater_pipelines.tests.redaction")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning("refused: %s", urllib.parse.quote(KEY, safe=""))
        try:
            raise ValueError(f"bad key {KEY.upper()}")
        except ValueError:
            log.exception("call failed")
    finally:
        log.removeHandler(handler)
    assert records[0] == f"refused: {REDACTED}"
    assert records[1].startswith("call failed\nTraceback") and f"ValueError: bad key {REDACTED}" in records[1]
    assert not _leaks("\n".join(records))


def _echo_examples(tmp_path, forms):
    rows = [{"id": "ok", "question": "Capital of France?", "a": "Paris is the capital.", "b": "Lyon"}]
    rows += [
        {"id": form, "question": f"Capital of Italy? {echo_mark(form)}", "a": "Rome", "b": "Milan"} for form in forms
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


ECHO_TEXT = {  # what each echo says besides the key: proves the server's message was kept
    "upper": "API key not valid",
    "lower": "API key not valid",
    "url": "no project for GET /v1/models?key=",
    "json": "invalid credentials in request headers",
    "basic": "Authorization: Basic",
    "prefix": "Incorrect API key provided",
    "bearer": "unauthorized request; headers were",
    "split_lf": "key rejected:",
    "split_crlf": "key rejected:",
    "split_escaped": "key rejected",
    "truncated": "Invalid key",
    "hex": "bad key hex",
}


@pytest.mark.parametrize(
    ("protocol", "variable", "model"),
    [("gemini", "GEMINI_API_KEY", "gemini-2.5-flash"), ("openai", "OPENAI_API_KEY", "openai/judge")],
)
def test_every_echo_form_of_the_endpoint_reaches_no_output(protocol, variable, model, monkeypatch, tmp_path, caplog):
    """One judge step against an endpoint that echoes the key in each form; every output is checked."""
    from autorater_pipelines.report import write_report

    assert sorted(ECHO_TEXT) == sorted(ECHO_FORMS)
    monkeypatch.setenv(variable, KEY)
    out = tmp_path / "out"
    with caplog.at_level(logging.DEBUG), ModelEmulator(leaky_length_judge) as emu:
        base_url = emu.url + ("/v1" if protocol == "openai" else "")
        judgments, errors, _ = autosxs.judge_examples(
            examples=_echo_examples(tmp_path, list(ECHO_TEXT)),
            task="question_answering@001",
            id_columns=["id"],
            autorater_model=model,
            autorater_parameters={"base_url": base_url, "cache_dir": "off", "progress": False, "max_retries": 0},
            judgments_path=str(out / "judgments.jsonl"),
            error_messages_path=str(out / "error_messages.jsonl"),
        )
        sent = {r.headers.get("x-goog-api-key") or r.headers.get("authorization") for r in emu.requests}
    assert sent == {KEY if protocol == "gemini" else f"Bearer {KEY}"}  # the server did receive it
    autosxs.aggregate_judgments(judgments=judgments, metrics_path=str(out / "metrics.json"))
    write_report(str(out))
    by_id = {j["id"]: j for j in judgments}
    assert by_id["ok"]["choice"] == "A"
    by_error = {e["id"]: e["error"] for e in errors}
    for form, said in ECHO_TEXT.items():
        assert by_id[form]["choice"] == "ERROR", form
        assert said in by_error[form] and REDACTED in by_error[form], (form, by_error[form])
    for name in ("judgments.jsonl", "error_messages.jsonl", "metrics.json", "report.html"):
        text = (out / name).read_text(encoding="utf-8")
        assert not _leaks(text), (name, _leaks(text))
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "Incorrect API key provided" in report and "no project for GET" in report
    assert not _leaks(caplog.text) and "failed: fatal" in caplog.text and REDACTED in caplog.text


def test_a_key_echoed_in_answers_reaches_neither_the_cache_nor_the_outputs(monkeypatch, tmp_path):
    """The model repeats the key in its judgment (every form): the response cache files, ``judgments.jsonl`` and
    the report hold none of it; a re-run is answered from the cache, whose answers hold it redacted."""
    from autorater_pipelines.report import write_report

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    rows = [
        {"id": form, "question": f"Capital of Italy? {echo_mark(form, in_answer=True)}", "a": "Rome!", "b": "Milan"}
        for form in ECHO_FORMS
    ]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    examples = autosxs.prepare_examples(
        evaluation_dataset=str(tmp_path / "data.jsonl"),
        task="question_answering@001",
        id_columns=["id"],
        autorater_prompt_parameters={"inference_instruction": {"column": "question"}},
        response_column_a="a",
        response_column_b="b",
    )
    cache, runs = tmp_path / "cache", []
    with ModelEmulator(leaky_length_judge) as emu:
        for run in ("first", "again"):
            out = tmp_path / run
            judgments, _, _ = autosxs.judge_examples(
                examples=examples,
                task="question_answering@001",
                id_columns=["id"],
                autorater_model="openai/judge",
                autorater_parameters={"base_url": f"{emu.url}/v1", "cache_dir": str(cache), "progress": False},
                judgments_path=str(out / "judgments.jsonl"),
            )
            autosxs.aggregate_judgments(judgments=judgments, metrics_path=str(out / "metrics.json"))
            write_report(str(out))
            runs.append({j["id"]: j["explanation"] for j in judgments})
            for name in ("judgments.jsonl", "report.html"):
                assert not _leaks((out / name).read_text(encoding="utf-8")), (run, name)
        calls = len(emu.requests)
    assert calls == 2 * len(ECHO_FORMS)  # the first run only: the second was answered from the cache
    assert sorted(runs[0]) == sorted(runs[1]) == sorted(ECHO_FORMS)
    assert all(_leaks(said) for said in runs[0].values())  # the model did repeat the key (kept in memory only)
    for said in runs[1].values():  # answered from the cache: redacted there
        assert "Request headers:" in said and REDACTED in said and not _leaks(said), said
    entries = [path for path in cache.rglob("*") if path.is_file()]
    assert len(entries) == calls
    for path in entries:
        text = path.read_text(encoding="utf-8")
        assert REDACTED in text and not _leaks(text), (path.name, _leaks(text))


@pytest.mark.pipeline
def test_autorater_run_prints_and_writes_no_echo_form(tmp_path):
    """``autorater -v run`` (the pipeline in its own process) against an OpenAI-compatible endpoint that
    echoes the key in every form: not on stdout/stderr (logs included), not in any output file."""
    rows = [{"id": "ok", "question": "Capital of France?", "a": "Paris is the capital.", "b": "Lyon"}]
    rows += [{"id": f, "question": f"Capital of Italy? {echo_mark(f)}", "a": "Rome", "b": "Milan"} for f in ECHO_TEXT]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_", "OPENAI_"))}
    with ModelEmulator(leaky_length_judge) as emu:
        params = {
            "evaluation_dataset": str(tmp_path / "data.jsonl"),
            "task": "question_answering@001",
            "id_columns": ["id"],
            "autorater_prompt_parameters": {"inference_instruction": {"column": "question"}},
            "response_column_a": "a",
            "response_column_b": "b",
            "autorater_model": "openai/judge",
            "autorater_parameters": {"base_url": f"{emu.url}/v1", "max_retries": 0, "cache_dir": "off"},
        }
        (tmp_path / "params.json").write_text(json.dumps(params))
        argv = ["-v", "run", "autosxs", "--params", str(tmp_path / "params.json"), "--output-dir", str(out)]
        proc = subprocess.run(
            [sys.executable, "-m", "autorater_pipelines.cli", *argv, "--max-failed-share", "1"],
            env={**env, "OPENAI_API_KEY": KEY},
            capture_output=True,
            timeout=1500,
        )
        assert {r.headers.get("authorization") for r in emu.requests} == {f"Bearer {KEY}"}
    printed = (proc.stdout + proc.stderr).decode("utf-8", errors="replace")
    assert proc.returncode == 0, printed[-3000:]
    assert not _leaks(printed), _leaks(printed)
    assert "failed: fatal" in printed and REDACTED in printed  # the echoes were logged, redacted
    errors = [json.loads(line) for line in (out / "error_messages.jsonl").read_text().splitlines()]
    assert {e["id"] for e in errors} == set(ECHO_TEXT) and all(REDACTED in e["error"] for e in errors)
    for path in out.iterdir():
        assert not _leaks(path.read_text(encoding="utf-8")), path.name


def test_submit_dry_run_prints_no_form_of_a_known_key(key, tmp_path, capsys):
    """A key written into the parameters (URL-encoded in a ``base_url``, upper-cased, as Basic credentials)."""
    from autorater_pipelines.cli import main
    from autorater_pipelines.pipelines import compile_pipelines

    compile_pipelines(str(tmp_path), image="us-central1-docker.pkg.dev/my-project/autorater/autorater-pipelines:abc1")
    params = {
        "evaluation_dataset": "gs://b/x.jsonl",
        "id_columns": ["id"],
        "task": "summarization@001",
        "autorater_prompt_parameters": {"inference_context": {"column": "x"}, "inference_instruction": {"column": "y"}},
        "response_column_a": "a",
        "response_column_b": "b",
        "autorater_parameters": {
            "base_url": "https://proxy.example/v1?k=Tq8Xv3Jm%2F5Lw2%2BrTn7pKd4%3DsHc6yB9Qz",
            "batch_staging_uri": "gs://bWU6VHE4WHYzSm0vNUx3MityVG43cEtkND1zSGM2eUI5UXo=",
        },
        "encryption_spec_key_name": KEY.upper(),
    }
    (tmp_path / "params.json").write_text(json.dumps(params))
    vertex = ["--project", "my-project", "--location", "us-central1", "--pipeline-root", "gs://my-bucket/root"]
    argv = ["submit", *vertex, "autosxs", "--params", str(tmp_path / "params.json")]
    code = main([*argv, "--template", str(tmp_path / "autosxs.yaml"), "--dry-run"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    spec = json.loads(captured.out)["runtimeConfig"]["parameterValues"]
    assert spec["autorater_parameters"]["base_url"] == f"https://proxy.example/v1?k={REDACTED}"
    assert REDACTED in spec["autorater_parameters"]["batch_staging_uri"]
    assert spec["encryption_spec_key_name"] == REDACTED
    assert not _leaks(captured.out + captured.err)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"key part {KEY[4:28]} refused", f"key part {REDACTED} refused"),  # 24 characters from the middle
        (f"part: {KEY[1:17]}.", f"part: {REDACTED}."),  # 16, neither a prefix nor a suffix
        (f"({KEY[3:30]})", f"({REDACTED})"),
        (f"q={urllib.parse.quote(KEY[4:28], safe='')}&x=1", f"q={REDACTED}&x=1"),  # percent-encoded
        (f"part\n{KEY[4:12]}\n{KEY[12:28]} end", f"part\n{REDACTED} end"),  # wrapped
        ("groups " + "-".join(KEY[i : i + 4] for i in range(0, len(KEY), 4)), f"groups {REDACTED}"),
        ("groups " + " ".join(KEY[i : i + 4] for i in range(0, len(KEY), 4)), f"groups {REDACTED}"),
        ("zw " + "\u200b".join(KEY[i : i + 6] for i in range(0, len(KEY), 6)) + " end", f"zw {REDACTED} end"),
        ("zw " + "\u2060".join(KEY[i : i + 3] for i in range(0, len(KEY), 3)), f"zw {REDACTED}"),
        (json.dumps({"e": "\u200b".join(KEY[i : i + 6] for i in range(0, len(KEY), 6))}), json.dumps({"e": REDACTED})),
        ("dashed part " + "-".join(KEY[i : i + 4] for i in range(4, 28, 4)), f"dashed part {REDACTED}"),
    ],
)
def test_a_middle_part_dashed_groups_and_invisible_separators_are_redacted(key, text, expected):
    """Hostile trial (issue 25): a 24-character middle part of a key, the key in dashed groups of 4, and the key
    with U+200B every 6 characters were left as they were."""
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        f"only {KEY[5:20]} of it",  # 15 characters from the middle: not enough to be the key
        f"two runs {KEY[2:10]} and {KEY[14:22]}",
        "a-b-c-d-e-f-g-h and ab\u200bcd words",
    ],
)
def test_short_middle_runs_and_ordinary_hyphenation_are_left_alone(key, text):
    assert redact(text) == text


def test_a_middle_part_of_a_long_token_is_redacted_whole(monkeypatch):
    """A token longer than 128 characters has a middle run every 8 characters, each taking up to 7 before it."""
    import random
    import string

    rng = random.Random(25)
    token = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(600))
    monkeypatch.setenv("LONG_ACCESS_TOKEN", token)
    for start, end in ((5, 595), (101, 124), (250, 290)):
        assert redact(f"<{token[start:end]}>") == f"<{REDACTED}>", (start, end)


def test_a_short_secret_without_middle_runs_is_redacted(monkeypatch):
    monkeypatch.setenv("SHORT_API_KEY", "test-key")
    assert redact("a test-key b TEST-KEY") == f"a {REDACTED} b {REDACTED}"
