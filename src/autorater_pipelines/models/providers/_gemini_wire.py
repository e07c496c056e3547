"""The Gemini ``generateContent`` wire format: request pieces and response reading, without the SDK.

Request side: :func:`model_path` (the resource path google-genai builds) and :func:`wire_part` (one
content part in the JSON the SDK sends). Response side: :func:`read_response` builds the
:class:`~autorater_pipelines.models.ModelOutput` of a ``GenerateContentResponse`` in its JSON form
(online answers and batch output lines alike), :func:`batch_job` the state of a batch prediction job.
Used by :class:`~autorater_pipelines.models.providers.vertex.GeminiProvider`.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from google.genai import types

from autorater_pipelines.errors import InputError
from autorater_pipelines.models._batch import BatchJob
from autorater_pipelines.models._logprobs import LogprobsError, gemini_logprobs
from autorater_pipelines.models._types import (
    ErrorKind,
    MediaPart,
    ModelError,
    ModelOutput,
    Usage,
    token_count,
)

__all__ = ["batch_job", "model_path", "read_response", "wire_part"]


def model_path(name: str, *, vertex: bool) -> str:
    """Resource path of a model as google-genai builds it (``_transformers.t_model``)."""
    if not name or ".." in name or "?" in name or "&" in name:
        raise InputError(f"invalid Gemini model name {name!r}", source="model spec")
    if vertex:
        if name.startswith(("projects/", "models/", "publishers/")):
            return name
        if "/" in name:
            publisher, model_id = name.split("/", 1)
            return f"publishers/{publisher}/models/{model_id}"
        return f"publishers/google/models/{name}"
    return name if name.startswith(("models/", "tunedModels/")) else f"models/{name}"


def wire_part(part: str | MediaPart) -> dict[str, Any]:
    if isinstance(part, MediaPart):
        if part.data is not None:
            data = base64.urlsafe_b64encode(part.data).decode("ascii")
            return {"inlineData": {"data": data, "mime_type": part.mime_type}}
        if part.uri is not None:
            return {"fileData": {"file_uri": part.uri, "mime_type": part.mime_type}}
        raise InputError(f"media part {part!r} has neither data nor uri")
    return {"text": str(part)}


def read_response(response: Mapping[str, Any]) -> ModelOutput:
    """Build the output from a ``GenerateContentResponse`` in its JSON form (camelCase keys)."""
    candidates = response.get("candidates") or []
    candidate = candidates[0] if candidates and isinstance(candidates[0], Mapping) else None
    finish = None
    feedback = response.get("promptFeedback") or {}
    if candidate is not None and candidate.get("finishReason") is not None:
        finish = str(candidate["finishReason"]).lower()
    elif feedback.get("blockReason") is not None:
        finish = f"blocked_{str(feedback['blockReason']).lower()}"
    meta = response.get("usageMetadata") or {}
    where = "the Gemini endpoint"
    usage = Usage(
        input_tokens=token_count(meta.get("promptTokenCount"), "usageMetadata.promptTokenCount", where),
        output_tokens=token_count(meta.get("candidatesTokenCount"), "usageMetadata.candidatesTokenCount", where)
        + token_count(meta.get("thoughtsTokenCount"), "usageMetadata.thoughtsTokenCount", where),
    )
    raw = dict(response)
    text = _text(candidate)
    if text is None:
        return ModelOutput(
            text=None,
            finish_reason=finish,
            usage=usage,
            raw=raw,
            error=ModelError(ErrorKind.BLOCKED, f"the model returned no text (finish reason: {finish or 'none'})"),
        )
    logprobs, problem = None, None
    try:
        logprobs = gemini_logprobs((candidate or {}).get("logprobsResult"), "candidates[0].logprobsResult")
    except LogprobsError as exc:
        problem = str(exc)
    return ModelOutput(
        text=text, finish_reason=finish, usage=usage, raw=raw, logprobs=logprobs, logprobs_problem=problem
    )


def _text(candidate: Mapping[str, Any] | None) -> str | None:
    """Concatenated text parts, skipping thought summaries; None when there are none."""
    parts = ((candidate or {}).get("content") or {}).get("parts") or []
    texts = [p["text"] for p in parts if isinstance(p, Mapping) and p.get("text") is not None and not p.get("thought")]
    return "".join(texts) if texts else None


def batch_job(job: types.BatchJob) -> BatchJob:
    state = job.state.value if isinstance(job.state, types.JobState) else str(job.state or "JOB_STATE_UNSPECIFIED")
    info = getattr(job, "output_info", None)
    stats = job.completion_stats
    error = None
    if job.error is not None:
        error = f"{job.error.message or 'no message'} (code {job.error.code})"
    return BatchJob(
        name=job.name or "",
        state=state,
        output_directory=info.gcs_output_directory if info is not None else None,
        error=error,
        successful_count=stats.successful_count if stats is not None else None,
        failed_count=stats.failed_count if stats is not None else None,
    )
