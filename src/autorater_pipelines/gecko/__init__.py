"""Gecko: rubric-based evaluation of generated images and videos (Wiles et al., arXiv 2404.16820).

Stages, each working on JSONL-able row dicts and returning rows plus error rows::

    load_dataset ─▶ generate_rubrics | parse_supplied_rubrics ─▶ validate ─▶ score
                     (rubric rows)                                (answers)    (results, metrics)

Every input row ends in the next stage's rows or in the error rows (``stage``, ``error_kind``,
``error_message`` and the id columns); nothing is dropped silently.
"""

from autorater_pipelines.gecko._common import IMAGE_QUESTION_TYPES, MEDIA_TYPES, StageResult
from autorater_pipelines.gecko.dataset import load_dataset
from autorater_pipelines.gecko.generation import generate_rubrics, parse_generated_rubric
from autorater_pipelines.gecko.media import MediaError, resolve_media
from autorater_pipelines.gecko.rubrics import (
    RubricError,
    keyword_coverage,
    normalize_supplied_rubric,
    parse_dependencies,
    parse_keywords,
    parse_supplied_rubrics,
)
from autorater_pipelines.gecko.scoring import ScoreResult, ScoringOptions, score, summarize
from autorater_pipelines.gecko.validation import VALIDATOR_DEFAULTS, parse_all_answers, validate
from autorater_pipelines.gecko.verdicts import resolve as resolve_verdict

__all__ = [
    "IMAGE_QUESTION_TYPES",
    "MEDIA_TYPES",
    "VALIDATOR_DEFAULTS",
    "MediaError",
    "RubricError",
    "ScoreResult",
    "ScoringOptions",
    "StageResult",
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
]
