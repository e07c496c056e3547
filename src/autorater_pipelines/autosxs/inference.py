"""Generate model A / model B responses for AutoSxS when the dataset has no response column.

GCPC's ``autosxs-template`` runs batch prediction for ``model_a`` / ``model_b`` with
``model_*_prompt_parameters`` (``{"prompt": …}``, or Gemini's ``{"contents": …, "system_instruction": …}``;
see :mod:`autorater_pipelines.autosxs.sides`) and
``model_*_parameters`` (generation settings as strings, e.g. ``{"temperature": "0.2"}``). Here every
call goes through the one model-call layer (:mod:`autorater_pipelines.models`): Vertex AI Gemini
(publisher models, tuned endpoints), OpenAI-compatible servers (``openai/<model>``) and ``replay/``
recordings (key: id columns + ``model`` = ``"a"`` or ``"b"``), with its cache, retries and rate limits; the
generation call itself is :func:`autorater_pipelines.pairwise.responses.generate_responses` (shared with arena).
``model_*_parameters={"mode": "batch", "batch_staging_uri": "gs://..."}`` runs one Vertex AI batch
prediction job per side instead of online calls (:mod:`autorater_pipelines.models._batch`).

A row whose generation fails keeps ``response_<side>`` = None and gets ``inference_error_<side>`` =
``"<kind>: <message>"``; the judge step then records it as an ``ERROR`` judgment and in
``error_messages`` (stage ``inference``), so no row is lost.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

from autorater_pipelines.errors import InputError
from autorater_pipelines.models import GenerateConfig
from autorater_pipelines.pairwise.responses import ModelParameters, ResponseModel, generate_responses

__all__ = [
    "RESPONSE_COLUMN_CANDIDATES",
    "fill_missing_responses",
    "generate_missing",
    "generate_responses",
    "infer_response_column",
    "model_config",
]

logger = logging.getLogger(__name__)

RESPONSE_COLUMN_CANDIDATES = ("response", "responses", "prediction", "predictions", "content", "output", "text")
"""Column names tried, in order, when a response column must be inferred from a model's output."""


def infer_response_column(columns: Sequence[str], *, side: str) -> str:
    """Pick the response column of a model's output among :data:`RESPONSE_COLUMN_CANDIDATES`.

    Args:
        columns: Available column names.
        side: ``"a"`` or ``"b"``, for the error message.

    Raises:
        InputError: none or several candidates are present (the message lists them and says to set
            ``response_column_<side>``).
    """
    found = [c for c in RESPONSE_COLUMN_CANDIDATES if c in columns]
    if len(found) != 1:
        detail = f"found {found}" if found else f"none of {list(RESPONSE_COLUMN_CANDIDATES)} is a column"
        raise InputError(
            f"cannot infer the response column of model {side.upper()}: {detail}; set response_column_{side}",
            source=f"response_column_{side}",
        )
    return found[0]


def model_config(
    parameters: Mapping[str, Any] | ModelParameters | None, *, side: str, project: str = "", location: str = ""
) -> GenerateConfig:
    """Translate ``model_<side>_parameters`` into a :class:`GenerateConfig`.

    Every GenerateConfig setting is accepted (:class:`~autorater_pipelines.autosxs.params.ModelParameters`), with
    GCPC's Vertex names ``maxOutputTokens``/``max_tokens`` and ``topP``; strings such as ``"0.2"`` are converted
    and every number is checked against the shared bounds. ``mode`` = ``"batch"`` with ``batch_staging_uri``,
    ``batch_poll_interval_s``, ``batch_timeout_s`` runs Vertex AI batch prediction.

    Raises:
        InputError: an unknown key (listing the valid ones) or a bad value.
    """
    return ResponseModel.of(side, "", parameters, project=project, location=location).generate_config()


def fill_missing_responses(
    examples: Sequence[MutableMapping[str, Any]],
    *,
    id_columns: Sequence[str],
    models: Mapping[str, str],
    parameters: Mapping[str, Mapping[str, Any] | None],
    project: str = "",
    location: str = "",
) -> dict[str, int]:
    """The ``generate_pairwise_responses`` component's call: :func:`generate_missing` with each side's stage.

    Args:
        examples: Prepared examples (see :func:`autorater_pipelines.autosxs.prepare_examples`); modified in place.
        id_columns: Id columns.
        models: ``{"a": model_a, "b": model_b}`` specs.
        parameters: ``{"a": model_a_parameters, "b": model_b_parameters}``.
        project: Google Cloud project for Vertex AI models.
        location: Google Cloud region for Vertex AI models.

    Returns:
        ``{"generated_count": n, "failed_count": m}`` over both sides (0/0 when every response was given).
    """
    stages = [
        ResponseModel.of(side, models[side], parameters.get(side), project=project, location=location)
        for side in _generated_sides(examples)
    ]
    return generate_missing(examples, stages, id_columns)


def _generated_sides(examples: Sequence[Mapping[str, Any]]) -> list[str]:
    return [side for side in ("a", "b") if any(f"model_{side}_prompt" in example for example in examples)]


def generate_missing(
    examples: Sequence[MutableMapping[str, Any]], stages: Sequence[ResponseModel], id_columns: Sequence[str]
) -> dict[str, int]:
    """Generate responses for every side whose examples carry ``model_<side>_prompt``.

    Args:
        examples: Prepared examples; modified in place.
        stages: Model A's and model B's stages (a side whose examples need no generation is skipped).
        id_columns: Id columns.

    Returns:
        ``{"generated_count": n, "failed_count": m}`` over both sides (0/0 when every response was given).
    """
    generated = failed = 0
    needed = _generated_sides(examples)
    for stage in stages:
        if stage.side in needed:
            failed += generate_responses(examples, stage, id_columns)
            generated += len(examples)
    return {"generated_count": generated, "failed_count": failed}
