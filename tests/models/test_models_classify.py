"""Error bodies as real servers send them, and what each means (models/_classify.py, models/_context.py)."""

from __future__ import annotations

import pytest

from autorater_pipelines.models import ErrorKind
from autorater_pipelines.models._classify import Reason, RepeatedErrors, body_reason, classify_http_error
from autorater_pipelines.models._context import ContextWindow, window_from_models

BODIES = [
    # llama.cpp server (recent): HTTP 400 with a typed error
    (
        {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 9000,
                "n_ctx": 2048,
            }
        },
        Reason.CONTEXT_LENGTH,
    ),
    # llama.cpp server (older): HTTP 500 with a generic type
    (
        {"error": {"code": 500, "message": "Context size has been exceeded.", "type": "server_error"}},
        Reason.CONTEXT_LENGTH,
    ),
    # vLLM: top-level error object, generic type
    (
        {
            "object": "error",
            "message": "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },
        Reason.CONTEXT_LENGTH,
    ),
    # OpenAI
    (
        {
            "error": {
                "message": "...",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
        Reason.CONTEXT_LENGTH,
    ),
    (
        {
            "error": {
                "message": "Unsupported parameter: 'max_tokens' is not supported with this model.",
                "type": "invalid_request_error",
                "param": "max_tokens",
                "code": "unsupported_parameter",
            }
        },
        Reason.UNSUPPORTED_PARAMETER,
    ),
    (
        {
            "error": {
                "message": "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
                "type": "invalid_request_error",
                "param": "response_format",
                "code": None,
            }
        },
        Reason.RESPONSE_FORMAT,
    ),
    (
        {
            "error": {
                "message": "The model `gpt-x` does not exist",
                "type": "invalid_request_error",
                "code": "model_not_found",
            }
        },
        Reason.MODEL_NOT_FOUND,
    ),
    # FastAPI / pydantic validation error (llama-cpp-python)
    (
        {
            "detail": [
                {"type": "literal_error", "loc": ["body", "response_format", "type"], "msg": "Input should be 'text'"}
            ]
        },
        Reason.RESPONSE_FORMAT,
    ),
    ({"detail": [{"type": "missing", "loc": ["body", "messages"], "msg": "Field required"}]}, Reason.INVALID_REQUEST),
    # Ollama: the error is a plain string
    ({"error": 'model "llama9" not found, try pulling it first'}, Reason.MODEL_NOT_FOUND),
    # Gemini
    (
        {"error": {"code": 400, "message": 'Unknown name "responseJsonSchema"', "status": "INVALID_ARGUMENT"}},
        Reason.RESPONSE_FORMAT,
    ),
    (
        {"error": {"code": 400, "message": "Request contains an invalid argument.", "status": "INVALID_ARGUMENT"}},
        Reason.INVALID_REQUEST,
    ),
    # A busy server says nothing about the request
    ({"error": {"message": "Service Unavailable", "type": "server_error"}}, None),
    ("<html>502 Bad Gateway</html>", None),
    (None, None),
]


@pytest.mark.parametrize(("body", "reason"), BODIES)
def test_body_reason(body, reason) -> None:
    assert body_reason(body) is reason


def test_status_comes_first() -> None:
    context = {"error": {"message": "Context size has been exceeded.", "type": "server_error"}}
    assert classify_http_error(429, context, "m", 2.0).kind is ErrorKind.RATE_LIMIT  # a 429 stays a 429
    fatal = classify_http_error(500, context, "HTTP 500: Context size has been exceeded.")
    assert (fatal.kind, fatal.reason, fatal.status_code) == (ErrorKind.FATAL, "context_length_exceeded", 500)
    assert (
        fatal.message
        == "the prompt is longer than the model's context window: HTTP 500: Context size has been exceeded."
    )
    busy = classify_http_error(503, {"error": {"message": "busy"}}, "m")
    assert (busy.kind, busy.reason) == (ErrorKind.TRANSIENT, None)
    auth = classify_http_error(401, {"error": {"type": "invalid_request_error", "code": "invalid_api_key"}}, "m")
    assert (auth.kind, auth.reason) == (ErrorKind.FATAL, None)


def test_repeated_500_bodies() -> None:
    seen = RepeatedErrors(capacity=2)
    a, b = RepeatedErrors.fingerprint({"q": 1}), RepeatedErrors.fingerprint({"q": 2})
    assert not seen.seen_before(a, 500, {"error": "x"})
    assert not seen.seen_before(b, 500, {"error": "x"})  # another request
    assert seen.seen_before(a, 500, {"error": "x"})
    assert not seen.seen_before(a, 500, {"error": "y"})  # a different body
    assert not seen.seen_before(a, 503, {"error": "y"}) and not seen.seen_before(a, 503, {"error": "y"})
    repeated = classify_http_error(500, {"error": {"message": "boom"}}, "HTTP 500: boom", repeated=True)
    assert (repeated.kind, repeated.reason) == (ErrorKind.FATAL, "repeated_server_error")


def test_window_from_models() -> None:
    llama_cpp = {
        "object": "list",
        "data": [
            {"id": "smol", "object": "model", "owned_by": "llamacpp", "meta": {"n_ctx_train": 8192, "n_vocab": 49152}}
        ],
    }
    assert window_from_models(llama_cpp, "other-name") == ContextWindow(8192, "/v1/models meta.n_ctx_train")
    vllm = {"data": [{"id": "a", "max_model_len": 4096}, {"id": "b", "max_model_len": 32768}]}
    assert window_from_models(vllm, "b") == ContextWindow(32768, "/v1/models max_model_len")
    assert window_from_models(vllm, "c") is None  # several models, none of that name
    assert window_from_models({"data": [{"id": "x", "owned_by": "me"}]}, "x") is None
    assert window_from_models({"detail": "Not Found"}, "x") is None


TOO_LARGE_429 = [
    # OpenAI: a request above the per-minute token limit, same code as an ordinary rate limit
    {
        "error": {
            "message": "Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, "
            "Requested 41230. The input or output tokens must be reduced in order to run successfully.",
            "type": "tokens",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    },
    # the same numbers without the words: Requested > Limit and nothing "Used"
    {"error": {"message": "tokens per min (TPM): Limit 1000, Requested 1,500.", "code": "rate_limit_exceeded"}},
    # Google: RESOURCE_EXHAUSTED with a QuotaFailure of a per-request quota
    {
        "error": {
            "code": 429,
            "message": "Resource has been exhausted (e.g. check quota).",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [{"quotaId": "GenerateContentInputTokensPerRequest"}],
                }
            ],
        }
    },
]
ORDINARY_429 = [
    # OpenAI's ordinary token and request rate limits ("Used" is there: the bucket is full, not the request big)
    {
        "error": {
            "message": "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, "
            "Used 29000, Requested 2000. Please try again in 2s.",
            "type": "tokens",
            "code": "rate_limit_exceeded",
        }
    },
    {
        "error": {
            "code": 429,
            "message": "Resource has been exhausted (e.g. check quota).",
            "status": "RESOURCE_EXHAUSTED",
        }
    },
    # a per-minute Google quota
    {
        "error": {
            "code": 429,
            "message": "Quota exceeded for aiplatform.googleapis.com/generate_content_requests_per_minute_per_project.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [{"quotaId": "GenerateRequestsPerMinutePerProjectPerModel"}],
                }
            ],
        }
    },
    "Too Many Requests",
]


@pytest.mark.parametrize("body", TOO_LARGE_429)
def test_a_429_for_a_request_larger_than_the_limit_is_not_retryable(body) -> None:
    error = classify_http_error(429, body, "RateLimitError: 429", retry_after_s=0.0)
    assert error.kind is ErrorKind.FATAL and error.reason == Reason.REQUEST_TOO_LARGE.value
    assert error.message.startswith("the request alone exceeds the server's rate limit, so it can never be accepted")
    assert error.status_code == 429 and error.message.endswith("RateLimitError: 429")


@pytest.mark.parametrize("body", ORDINARY_429)
def test_an_ordinary_429_stays_a_rate_limit(body) -> None:
    error = classify_http_error(429, body, "RateLimitError: 429", retry_after_s=2.0)
    assert error.kind is ErrorKind.RATE_LIMIT and error.reason is None and error.retry_after_s == 2.0
