"""Requests a server refuses with 429 every time never stall the others (issue 19, item 1).

The server answers every row except two, which it refuses with HTTP 429 and ``Retry-After: 0`` every time:
as OpenAI does for a request larger than the per-minute token limit ("Request too large …"), as Gemini's
RESOURCE_EXHAUSTED does for a per-request quota, or as a plain 429 (OpenAI with ``Retry-After: 0``, Gemini without a
hint) that never stops for those two requests.
Default retry settings, ``max_concurrency`` 4, 12 rows judged in both orders.
"""

from __future__ import annotations

import json
import time

import pytest

from autorater_pipelines import autosxs
from autorater_pipelines.testing import ModelEmulator, Refusal
from autorater_pipelines.testing.judges import length_judge

TASK = "question_answering@001"
REFUSED = ("question 3?", "question 8?")
TOO_LARGE = (
    "Request too large for gpt-4o in organization org-emulated on tokens per min (TPM): Limit 30000, Requested "
    "41230. The input or output tokens must be reduced in order to run successfully."
)
GEMINI_PER_REQUEST = "Resource has been exhausted: the request's input tokens exceed the per-request token quota."
PLAIN = "Rate limit reached for gpt-4o on requests per min (RPM): Limit 500, Used 500, Requested 1."


def _refusing(refusal: Refusal):
    def respond(request):
        if any(marker in request.prompt_text for marker in REFUSED):
            raise refusal
        return length_judge(request)

    return respond


CASES = {
    "openai-request-too-large": (
        "openai/gpt-4o",
        Refusal(429, TOO_LARGE, retry_after_s=0, fields={"type": "tokens", "code": "rate_limit_exceeded"}),
        "the request alone exceeds the server's rate limit, so it can never be accepted",
    ),
    "gemini-per-request-quota": (
        "gemini-2.5-flash",
        Refusal(
            429,
            GEMINI_PER_REQUEST,
            retry_after_s=0,
            fields={
                "details": [
                    {
                        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                        "violations": [
                            {
                                "quotaMetric": "generativelanguage.googleapis.com/generate_content_input_tokens",
                                "quotaId": "GenerateContentInputTokensPerRequest",
                            }
                        ],
                    }
                ]
            },
        ),
        "the request alone exceeds the server's rate limit, so it can never be accepted",
    ),
    "plain-429-forever": (
        "openai/gpt-4o",
        Refusal(429, PLAIN, retry_after_s=0, fields={"type": "requests", "code": "rate_limit_exceeded"}),
        "while {url}/v1 answered other requests: a limit of this request",
    ),
    "gemini-resource-exhausted-forever": (  # no wait hint, as Vertex AI often answers
        "gemini-2.5-flash",
        Refusal(429, "Resource has been exhausted (e.g. check quota)."),
        "while {url} answered other requests: a limit of this request",
    ),
    # A wait hint on the refused requests is their own wait, not the endpoint's: the others are never paused.
    "openai-retry-after-forever": (
        "openai/gpt-4o",
        Refusal(429, "Rate limit reached for requests", retry_after_s=6, fields={"type": "requests"}),
        "while {url}/v1 answered other requests: a limit of this request",
    ),
    "gemini-retry-info-forever": (
        "gemini-2.5-flash",
        Refusal(
            429,
            "Resource has been exhausted (e.g. check quota).",
            fields={"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "6s"}]},
        ),
        "while {url} answered other requests: a limit of this request",
    ),
}
STALL_S = {  # the budget (default 60 s)
    "plain-429-forever": 10.0,
    "gemini-resource-exhausted-forever": 10.0,
    "openai-retry-after-forever": 10.0,
    "gemini-retry-info-forever": 10.0,
}


@pytest.mark.parametrize("case", list(CASES))
def test_two_rows_refused_every_time_end_as_errors_and_the_others_are_judged_at_full_pace(
    tmp_path, case, qa_examples
) -> None:
    spec, refusal, reason = CASES[case]
    examples = qa_examples(12)
    with ModelEmulator(_refusing(refusal), latency_s=0.05) as emulator:
        url = emulator.url
        started = time.monotonic()
        judgments, errors, summary = autosxs.judge_examples(
            examples=examples,
            task=TASK,
            id_columns=["id"],
            autorater_model=spec,
            autorater_parameters={
                "base_url": emulator.url,
                "cache_dir": "off",
                "progress": False,
                "max_concurrency": 4,
                "max_stall_s": STALL_S.get(case, 60.0),
            },
        )
        elapsed = time.monotonic() - started
        answered = [r for r in emulator.requests if r.status == 200]
        refused = [r for r in emulator.requests if r.status == 429]
    assert elapsed < STALL_S.get(case, 0.0) + 10.0, elapsed  # at once, or once max_stall_s is used up
    by_id = {j["id"]: j for j in judgments}
    assert list(by_id) == [f"q{i}" for i in range(12)]  # every row, in order
    judged = [i for i in by_id if by_id[i]["choice"] != "ERROR"]
    assert sorted(judged) == sorted(f"q{i}" for i in range(12) if i not in (3, 8))
    assert all(
        len(by_id[i]["samples"]) == 2 and all(s.get("error") is None for s in by_id[i]["samples"]) for i in judged
    )
    assert len(answered) == 20  # the 10 other rows in both orders, each answered once
    for row in ("q3", "q8"):
        assert by_id[row]["choice"] == "ERROR"
        for sample in by_id[row]["samples"]:
            assert reason.format(url=url) in sample["error"]
            assert refusal.message in sample["error"]  # the server's own words
    assert summary.error_count == 2 and not summary.stopped  # the run was not stopped
    assert len(errors) == 4 and {e["id"] for e in errors} == {"q3", "q8"}  # error_messages: both orders
    if case not in STALL_S:
        assert len(refused) == 4  # not retryable: one attempt per refused request
    else:
        assert 4 < len(refused) <= 4 * 9  # a bounded budget of its own: max_retries (8) retries at most
    # The healthy rows went at full pace: all 20 answered within a few latencies of each other.
    times = sorted(r.received_at for r in answered)
    assert times[-1] - times[0] < 5.0, times[-1] - times[0]


def test_the_run_summary_shows_the_servers_own_429_message(tmp_path, capsys, qa_examples) -> None:
    from autorater_pipelines.commands.run import _print_error_reasons

    spec, refusal, _ = CASES["openai-request-too-large"]
    with ModelEmulator(_refusing(refusal), latency_s=0.01) as emulator:
        url = emulator.url
        _, errors, _ = autosxs.judge_examples(
            examples=qa_examples(4)[3:],
            task=TASK,
            id_columns=["id"],
            autorater_model=spec,
            autorater_parameters={"base_url": emulator.url, "cache_dir": "off", "progress": False},
        )
    path = tmp_path / "error_messages.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in errors), encoding="utf-8")
    _print_error_reasons(str(path))
    printed = capsys.readouterr().out
    assert f"HTTP 429 from {url}/v1: {TOO_LARGE[:100]}" in printed  # the server's words, not the SDK's class
    assert "RateLimitError" not in printed
