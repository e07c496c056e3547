"""The model-call layer against a real OpenAI-compatible server: what reaches it and what comes back."""

from __future__ import annotations

import pytest

from autorater_pipelines.models import ErrorKind, GenerateConfig, ModelRequest, get_model

pytestmark = pytest.mark.real_server

FILLER = "Here is some background that the answer does not need. " * 12  # ~670 characters


def test_answers_depend_on_the_prompt_and_the_server_read_all_of_it(real_server) -> None:
    model = get_model(f"openai/{real_server.model}", GenerateConfig(**real_server.params(max_output_tokens=12)))
    questions = ["What is the capital of France?", "Name a large animal that lives in the sea."]
    short = model.generate([ModelRequest(parts=(q,)) for q in questions])
    assert all(o.ok for o in short), [o.error for o in short]
    assert short[0].text != short[1].text, "greedy answers to different questions differ: the server saw them"
    long = model.generate([ModelRequest(parts=(FILLER + questions[0],))])[0]
    assert long.ok, long.error
    # The server counted the filler too (a server that dropped list-form content counted ~12 tokens).
    assert long.usage.input_tokens >= short[0].usage.input_tokens + len(FILLER) // 8
    print(f"\nprompt tokens: short {short[0].usage.input_tokens}, with filler {long.usage.input_tokens}")


def test_max_output_tokens_is_honoured(real_server) -> None:
    config = GenerateConfig(**real_server.params(max_output_tokens=5))
    [out] = get_model(f"openai/{real_server.model}", config).generate(
        [ModelRequest(parts=("Write a long story about a dragon and a knight.",))]
    )
    assert out.ok and 0 < out.usage.output_tokens <= 5 and out.finish_reason == "max_tokens"


def test_a_truncated_structured_answer_says_so(real_server) -> None:
    schema = {"type": "object", "properties": {"story": {"type": "string"}}, "required": ["story"]}
    config = GenerateConfig(**real_server.params(max_output_tokens=8))
    [out] = get_model(f"openai/{real_server.model}", config).generate(
        [ModelRequest(parts=("Tell a long story about a dragon, as JSON.",), response_schema=schema)]
    )
    assert out.error is not None and out.error.kind is ErrorKind.BLOCKED
    assert out.error.message.startswith("truncated at 8 tokens (finish reason: length, max_output_tokens=8)")
    assert out.attempts == 1


def test_logprobs_come_back_for_every_generated_token(real_server) -> None:
    config = GenerateConfig(**real_server.params(max_output_tokens=6, logprobs=3))
    [out] = get_model(f"openai/{real_server.model}", config).generate(
        [ModelRequest(parts=("Answer with one letter, A or B: which comes first in the alphabet?",))]
    )
    assert out.ok and out.logprobs is not None
    assert len(out.logprobs) == out.usage.output_tokens
    assert all(lp.logprob <= 0.0 and 1 <= len(lp.top) <= 3 for lp in out.logprobs)


def test_a_prompt_longer_than_the_context_is_one_fatal_attempt(real_server) -> None:
    config = GenerateConfig(**real_server.params(max_output_tokens=4, max_retries=4))
    prompt = "Summarize this text. " + "The cat sat on the mat and looked at the door. " * 400  # ~19,000 chars
    [out] = get_model(f"openai/{real_server.model}", config).generate([ModelRequest(parts=(prompt,))])
    assert out.error is not None and out.error.kind is ErrorKind.FATAL
    assert out.error.reason == "context_length_exceeded" and out.attempts == 1
    print(f"\ncontext error from the server: {out.error.message[:200]}")
