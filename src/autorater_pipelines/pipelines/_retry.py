"""The retry policy of every pipeline step that calls a model (one place for both pipelines)."""

from __future__ import annotations

from typing import Any

__all__ = ["MODEL_STEP_RETRY", "retry_model_step"]

MODEL_STEP_RETRY: dict[str, Any] = {"num_retries": 2, "backoff_duration": "60s", "backoff_factor": 2.0}
"""KFP ``set_retry`` arguments: 2 retries, 60 s then 120 s apart. A retried step resumes from the response cache
(under a ``gs://`` pipeline root by default), so it only makes the calls that had not finished."""


def retry_model_step(task: Any) -> Any:
    """Give a model-calling ``PipelineTask`` the :data:`MODEL_STEP_RETRY` policy; returns the task."""
    return task.set_retry(**MODEL_STEP_RETRY)
