"""Gecko: rubric-based evaluation of generated images and videos (Wiles et al., arXiv 2404.16820).

Stages, each working on JSONL-able row dicts and returning rows plus error rows::

    load_dataset ─▶ generate_rubrics | parse_supplied_rubrics ─▶ validate ─▶ score
                     (rubric rows)                                (answers)    (results, metrics)

:mod:`~autorater_pipelines.gecko.params` holds the parameter model, :mod:`~autorater_pipelines.gecko.preflight`
:func:`validate_run`, the one check of a run. Every input row ends in the next stage's rows or in the error rows
(``stage``, ``error_kind``, ``error_message`` and the id columns); nothing is dropped silently.

On a pandas DataFrame (notebooks, as the Vertex AI SDK's Gecko flow): ``generate_rubrics(df, …)`` returns the
DataFrame with rubrics, ``evaluate(df, …)`` returns ``(results DataFrame, metrics)``
(:mod:`autorater_pipelines.gecko.dataframe`). ``generate_rubrics`` given a list of row dicts is the stage
function (:func:`autorater_pipelines.gecko.generation.generate_rubrics`).
"""

from __future__ import annotations

import sys
from typing import Any

from autorater_pipelines.gecko import generation
from autorater_pipelines.gecko._common import IMAGE_QUESTION_TYPES, MEDIA_TYPES, StageResult
from autorater_pipelines.gecko.answer_matching import resolve as resolve_verdict
from autorater_pipelines.gecko.dataset import load_dataset
from autorater_pipelines.gecko.generation import parse_generated_rubric
from autorater_pipelines.gecko.media import MediaError, resolve_media
from autorater_pipelines.gecko.params import GeckoParams, RubricGenerator, Validator
from autorater_pipelines.gecko.preflight import validate_run
from autorater_pipelines.gecko.rubric_scoring import ScoreResult, ScoringOptions, score, summarize
from autorater_pipelines.gecko.rubrics import (
    RubricError,
    keyword_coverage,
    normalize_supplied_rubric,
    parse_dependencies,
    parse_keywords,
    parse_supplied_rubrics,
)
from autorater_pipelines.gecko.validation import parse_all_answers, validate

__all__ = [
    "GeckoParams",
    "IMAGE_QUESTION_TYPES",
    "MEDIA_TYPES",
    "MediaError",
    "RubricError",
    "RubricGenerator",
    "ScoreResult",
    "ScoringOptions",
    "StageResult",
    "Validator",
    "evaluate",
    "generate_rubrics",
    "keyword_coverage",
    "load_dataset",
    "normalize_supplied_rubric",
    "parse_all_answers",
    "parse_dependencies",
    "parse_generated_rubric",
    "parse_keywords",
    "parse_supplied_rubrics",
    "resolve_media",
    "resolve_verdict",
    "score",
    "summarize",
    "validate",
    "validate_run",
]


def _is_dataframe(value: Any) -> bool:
    pandas = sys.modules.get("pandas")  # a DataFrame implies pandas is imported; do not import it here
    return pandas is not None and isinstance(value, pandas.DataFrame)


def generate_rubrics(data: Any, /, **kwargs: Any) -> Any:
    """Generate rubrics: on a DataFrame (notebook API), or on row dicts (the pipeline's stage function).

    ``generate_rubrics(df, prompt_column="prompt", …)`` returns a DataFrame
    (:func:`autorater_pipelines.gecko.dataframe.generate_rubrics`); ``generate_rubrics(rows, id_columns=…,
    prompt_column=…, media_type=…, generator=RubricGenerator.of(…))`` returns a ``StageResult``
    (:func:`autorater_pipelines.gecko.generation.generate_rubrics`). Arguments and errors as there.
    """
    if _is_dataframe(data):
        from autorater_pipelines.gecko import dataframe

        return dataframe.generate_rubrics(data, **kwargs)
    return generation.generate_rubrics(data, **kwargs)


def evaluate(df: Any, /, **kwargs: Any) -> Any:
    """Gecko on a DataFrame: ``(results DataFrame, metrics)`` (:func:`autorater_pipelines.gecko.dataframe.evaluate`)."""
    from autorater_pipelines.gecko import dataframe

    return dataframe.evaluate(df, **kwargs)
