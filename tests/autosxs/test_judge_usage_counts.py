"""The server's prompt-token counts are information, not verdicts (issue 19, item 2).

A judge's instruction prefix is the same on every call: the case where a server's prompt cache reports only
the newly evaluated tokens. Such a server's answers are all used; a warning says so once per endpoint.
"""

from __future__ import annotations

import logging

from autorater_pipelines import autosxs
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.judges import length_judge

TASK = "question_answering@001"


def test_a_server_that_reports_3_prompt_tokens_after_its_first_answer_has_every_row_judged(caplog, qa_examples) -> None:
    answered = []

    def respond(request):
        answer = length_judge(request)
        answered.append(request)
        text = answer if isinstance(answer, str) else answer["text"]
        return {"text": text} if len(answered) == 1 else {"text": text, "input_tokens": 3}

    examples = qa_examples(12)
    caplog.set_level(logging.WARNING, logger="autorater_pipelines.models")
    with ModelEmulator(respond) as emulator:
        judgments, errors, summary = autosxs.judge_examples(
            examples=examples,
            task=TASK,
            id_columns=["id"],
            autorater_model="openai/judge",
            autorater_parameters={
                "base_url": emulator.url,
                "cache_dir": "off",
                "progress": False,
                "max_concurrency": 4,
            },
        )
        calls = emulator.call_count
    assert [j["choice"] for j in judgments].count("ERROR") == 0 and summary.error_count == 0 and errors == []
    assert len(judgments) == 12 and calls in (
        24,
        25,
    )  # both orders of every row (and a check, if a low count came first)
    warnings = [r.getMessage() for r in caplog.records if "reported 3 prompt tokens for a prompt of" in r.getMessage()]
    assert len(warnings) == 1 and "it reads the prompt" in warnings[0] and "(model 'judge')" in warnings[0]


def test_nonsense_prompt_token_counts_are_not_added_to_the_totals(caplog, qa_examples) -> None:
    for bogus in (-5, 10**30):
        caplog.clear()

        def respond(request, bogus=bogus):
            answer = length_judge(request)
            return {"text": answer if isinstance(answer, str) else answer["text"], "input_tokens": bogus}

        caplog.set_level(logging.WARNING, logger="autorater_pipelines.models")
        with ModelEmulator(respond) as emulator:
            judgments, _, summary = autosxs.judge_examples(
                examples=qa_examples(3),
                task=TASK,
                id_columns=["id"],
                autorater_model="openai/judge",
                autorater_parameters={"base_url": emulator.url, "cache_dir": "off", "progress": False},
            )
        assert summary.input_tokens == 0, (bogus, summary.input_tokens)  # not -30 or 6e30
        assert all(j["input_token_count"] == 0 for j in judgments)
        warned = [r.getMessage() for r in caplog.records if "not a token count" in r.getMessage()]
        assert len(warned) == 1 and f"usage.prompt_tokens = {bogus!r}" in warned[0], warned
        assert not any(j["choice"] == "ERROR" for j in judgments)  # every answer kept
