"""The Gecko parameter model: every pipeline parameter and every nested option, checked once.

:class:`GeckoParams` holds the ``gecko`` template's parameters; ``rubric_generation_parameters`` is
:class:`RubricGenerationParameters` (model-call settings only), ``validator_parameters`` is
:class:`ValidatorParameters` (``questions_per_call``, ``sampling_count`` and model-call settings), ``scoring`` is
:class:`~autorater_pipelines.gecko.scoring.ScoringOptions`. Numbers are converted from KFP's forms and bounded by
the shared table (:data:`autorater_pipelines.evaluation.parameters.BOUNDS`): ``sampling_count`` has the same range
and message as in AutoSxS's ``autorater_parameters``.

The one check of a run that uses it is :func:`autorater_pipelines.gecko.preflight.validate_run`. This module is the
schema only: it imports no stage module.
"""

from __future__ import annotations

from typing import Annotated, Any

import pydantic

from autorater_pipelines.errors import InputError
from autorater_pipelines.evaluation import DEFAULT_MODEL
from autorater_pipelines.evaluation.ids import check_id_columns
from autorater_pipelines.evaluation.parameters import (
    Flag,
    ModelCallOptions,
    QuestionsPerCall,
    RunParameters,
    SamplingCount,
    nested,
)
from autorater_pipelines.gecko._common import check_media_type
from autorater_pipelines.gecko.export import check_output_format
from autorater_pipelines.gecko.media_probe import PROBE_MODES
from autorater_pipelines.gecko.scoring import ScoringOptions

__all__ = [
    "GeckoParams",
    "RubricGenerationParameters",
    "ValidatorParameters",
]


class RubricGenerationParameters(ModelCallOptions):
    """``rubric_generation_parameters``: model-call settings (GenerateConfig fields) of the rubric generator."""

    strict: Flag = False
    """Fail the rubric step when the model calls stop early, after writing every row (default false: the rows not
    called are error rows with the reason and the run goes on; as AutoSxS's ``autorater_parameters.strict``)."""


class ValidatorParameters(ModelCallOptions):
    """``validator_parameters``: how questions are asked, and model-call settings of the validator."""

    questions_per_call: QuestionsPerCall = 0
    """0 = all questions of a row in one call; 1 = one question per call (needed for ``logprob_weighting``)."""
    sampling_count: SamplingCount = 1
    """Answers per question; the most frequent choice wins."""
    strict: Flag = False
    """Fail the validator step when the model calls stop early, after writing every row (default false)."""
    media_probe: str = "error"
    """Check first that the validator sees images (:mod:`autorater_pipelines.gecko.media_probe`): ``error``
    (default: a failed probe stops the run), ``warn`` (score anyway, with a warning) or ``off``."""

    @pydantic.field_validator("media_probe", mode="before")
    @classmethod
    def _probe_mode(cls, value: Any) -> Any:
        if value is None:
            return "error"
        if not isinstance(value, str) or value.strip().lower() not in PROBE_MODES:
            raise InputError(
                f"validator_parameters.media_probe must be one of {', '.join(PROBE_MODES)}, got {value!r}",
                source="validator_parameters",
            )
        return value.strip().lower()

    @pydantic.field_validator("questions_per_call", mode="before")
    @classmethod
    def _absent_is_zero(cls, value: Any) -> Any:
        return 0 if value is None else value


class GeckoParams(RunParameters):
    """Every parameter of the ``gecko`` pipeline (docs/reference/parameters.md is generated from it)."""

    evaluation_dataset: str
    id_columns: Annotated[list[str], pydantic.BeforeValidator(check_id_columns)]
    media_column: str
    prompt_column: str = ""
    media_type: str = "image"
    rubrics_column: str = ""
    rubric_generation_model: str = ""
    validator_model: str = ""
    rubric_generation_parameters: Annotated[
        RubricGenerationParameters, nested(RubricGenerationParameters, "rubric_generation_parameters")
    ] = pydantic.Field(default_factory=RubricGenerationParameters)
    validator_parameters: Annotated[ValidatorParameters, nested(ValidatorParameters, "validator_parameters")] = (
        pydantic.Field(default_factory=ValidatorParameters)
    )
    rubric_generation_prompt_template: str = ""
    validator_prompt_template: str = ""
    scoring: Annotated[ScoringOptions, nested(ScoringOptions, "scoring")] = pydantic.Field(
        default_factory=ScoringOptions
    )
    project: str = ""
    location: str = ""
    output_format: str = "jsonl"
    bigquery_destination_prefix: str = ""

    @pydantic.field_validator("media_column", mode="before")
    @classmethod
    def _media_column(cls, value: Any) -> Any:
        if not value:
            raise InputError(
                f"media_column is required (the column with the image/video), got {value!r}", source="media_column"
            )
        return value

    @pydantic.field_validator("media_type", mode="before")
    @classmethod
    def _media_type(cls, value: Any) -> Any:
        return check_media_type(value)

    @pydantic.model_validator(mode="after")
    def _prompt_or_rubrics(self) -> GeckoParams:
        if not self.rubrics_column and not self.prompt_column:
            raise InputError(
                "set prompt_column (rubrics are generated from the prompts) or rubrics_column (rubrics given in "
                f"the data), got prompt_column={self.prompt_column!r}, rubrics_column={self.rubrics_column!r}",
                source="prompt_column",
            )
        check_output_format(self.output_format, self.bigquery_destination_prefix)
        return self

    @property
    def generator_model(self) -> str:
        """The rubric generator spec (:data:`DEFAULT_MODEL` when empty)."""
        return self.rubric_generation_model or DEFAULT_MODEL

    @property
    def judge_model(self) -> str:
        """The validator spec (:data:`DEFAULT_MODEL` when empty)."""
        return self.validator_model or DEFAULT_MODEL


PARAMETERS = GeckoParams
"""This pipeline's parameter model, registered for ``autorater params`` (one per pipeline package)."""
