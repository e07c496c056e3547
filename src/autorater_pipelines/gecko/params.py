"""The Gecko parameter model: every pipeline parameter and every nested option, checked once.

:class:`GeckoParams` holds the ``gecko`` template's parameters; ``rubric_generation_parameters`` is
:class:`RubricGenerationParameters` (model-call settings only), ``validator_parameters`` is
:class:`ValidatorParameters` (``questions_per_call``, ``sampling_count`` and model-call settings), ``scoring`` is
:class:`~autorater_pipelines.gecko.rubric_scoring.ScoringOptions`. Numbers are converted from KFP's forms and bounded by
the shared table (:data:`autorater_pipelines.evaluation.parameters.BOUNDS`): ``sampling_count`` has the same range
and message as in AutoSxS's ``autorater_parameters``.

The one check of a run that uses it is :func:`autorater_pipelines.gecko.preflight.validate_run`. This module is the
schema only: it imports no stage module.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import pydantic

from autorater_pipelines.errors import InputError
from autorater_pipelines.evaluation import DEFAULT_MODEL, stages
from autorater_pipelines.evaluation.ids import check_id_columns
from autorater_pipelines.evaluation.parameters import (
    Flag,
    ModelCallOptions,
    QuestionsPerCall,
    RunParameters,
    SamplingCount,
    from_struct,
    nested,
)
from autorater_pipelines.gecko._common import check_media_type
from autorater_pipelines.gecko.export import check_output_format
from autorater_pipelines.gecko.media_probe import PROBE_MODES
from autorater_pipelines.gecko.rubric_scoring import ScoringOptions
from autorater_pipelines.pairwise import responses
from autorater_pipelines.pairwise.responses import ModelParameters

__all__ = [
    "GeckoParams",
    "ModelStage",
    "ResponseModel",
    "RubricGenerationParameters",
    "RubricGenerator",
    "Validator",
    "ValidatorParameters",
]


class RubricGenerationParameters(ModelCallOptions):
    """``rubric_generation_parameters``: model-call settings (GenerateConfig fields) of the rubric generator."""

    strict: Flag = False
    """Fail the rubric step when the model calls stop early, after writing every row (default false: the rows not
    called are error rows with the reason and the run goes on; as AutoSxS's ``autorater_parameters.strict``)."""
    guidelines: str = ""
    """Extra instructions for the rubric generator, shown in its prompt as the variable ``guidelines`` (the
    built-in text template adds them as "Guidelines from the user"; e.g. "The audience is children"); "" = none."""


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


class ModelStage(stages.ModelStage):
    """One model-calling stage of a run, typed and passed whole to the stage function and the model-call layer.

    The shared stage (:class:`autorater_pipelines.evaluation.stages.ModelStage`: model spec, options, project,
    region, ``generate_config()``) plus the stage's ``<SOURCE>_prompt_template``. Built once from the pipeline
    parameters (:meth:`of`, or :attr:`GeckoParams.rubric_generator` / :attr:`GeckoParams.validator`); the stage
    gets its model with :meth:`get_model`.
    """

    prompt_template: str = ""
    """Override of the stage's built-in prompt (Jinja2 or Vertex AI SDK syntax); empty = built-in."""

    @classmethod
    def of(
        cls,
        model: str = "",
        parameters: Any = None,
        prompt_template: str | None = "",
        *,
        project: str | None = "",
        location: str | None = "",
    ) -> Any:
        """The stage from its pipeline parameters, as a step or the DataFrame API receives them.

        Args:
            model: ``<stage>_model``; empty = :data:`DEFAULT_MODEL`.
            parameters: ``<stage>_parameters`` (a dict, KFP's struct form with integral floats, None, or the
                options model).
            prompt_template: ``<stage>_prompt_template``; empty or None = built-in.
            project: Google Cloud project; empty or None = none.
            location: Google Cloud region; empty or None = none.

        Raises:
            InputError: an unknown key or a bad value of ``parameters``, naming ``<stage>_parameters``.
        """
        options_model = cls.model_fields["options"].annotation
        assert isinstance(options_model, type) and issubclass(options_model, ModelCallOptions)
        return cls(
            model=model or DEFAULT_MODEL,
            options=options_model.parse(from_struct(parameters), source=f"{cls.SOURCE}_parameters"),
            prompt_template=prompt_template or "",
            project=project or "",
            location=location or "",
        )


class RubricGenerator(ModelStage):
    """The rubric-generation stage: ``rubric_generation_model``, ``…_parameters``, ``…_prompt_template``."""

    SOURCE: ClassVar[str] = "rubric_generation"
    options: RubricGenerationParameters = pydantic.Field(default_factory=RubricGenerationParameters)


class Validator(ModelStage):
    """The validator stage: ``validator_model``, ``validator_parameters``, ``validator_prompt_template``.

    Its options hold ``questions_per_call``, ``sampling_count``, ``strict``, ``media_probe`` and the model settings.
    """

    SOURCE: ClassVar[str] = "validator"
    options: ValidatorParameters = pydantic.Field(default_factory=ValidatorParameters)

    @property
    def one_question_per_call(self) -> bool:
        """``questions_per_call`` is 1: one call per question, the reply is the answer itself."""
        return self.options.questions_per_call == 1


class ResponseModel(responses.ResponseModel):
    """``response_model``: generates each row's text response from its prompt (AutoSxS's inference stage).

    The generating stage of AutoSxS's ``model_a`` and the arena's ``models``
    (:class:`~autorater_pipelines.pairwise.responses.ResponseModel`, called by
    :func:`~autorater_pipelines.pairwise.responses.generate_responses`) under Gecko's parameter names; replay lines
    are keyed by the id columns and ``model`` = ``"response"``.
    """

    @classmethod
    def of(  # type: ignore[override]
        cls, model: str, parameters: Any = None, *, project: str = "", location: str = ""
    ) -> ResponseModel:
        """The stage from ``response_model`` and ``response_model_parameters``.

        Raises:
            InputError: an unknown key or a bad value of ``response_model_parameters``.
        """
        options = ModelParameters.parse(from_struct(parameters), source="response_model_parameters")
        return cls(side="response", model=model, options=options, project=project or "", location=location or "")

    @property
    def options_source(self) -> str:
        """``response_model_parameters``."""
        return "response_model_parameters"

    @property
    def model_source(self) -> str:
        """``response_model``."""
        return "response_model"


class GeckoParams(RunParameters):
    """Every parameter of the ``gecko`` pipeline (docs/reference/parameters.md is generated from it)."""

    evaluation_dataset: str
    id_columns: Annotated[list[str], pydantic.BeforeValidator(check_id_columns)]
    media_column: str = ""
    prompt_column: str = ""
    media_type: str = "image"
    response_columns: dict[str, str] = pydantic.Field(default_factory=dict)
    response_model: str = ""
    response_model_parameters: Annotated[ModelParameters, nested(ModelParameters, "response_model_parameters")] = (
        pydantic.Field(default_factory=ModelParameters)
    )
    rubrics_column: str = ""
    rubric_group: str = ""
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

    @pydantic.field_validator("response_columns", mode="before")
    @classmethod
    def _response_columns(cls, value: Any) -> Any:
        from autorater_pipelines.gecko.candidates import check_response_columns

        return check_response_columns({} if value is None else value, allow_empty=True)

    @pydantic.field_validator("media_type", mode="before")
    @classmethod
    def _media_type(cls, value: Any) -> Any:
        return check_media_type(value)

    @pydantic.model_validator(mode="after")
    def _prompt_or_rubrics(self) -> GeckoParams:
        from autorater_pipelines.gecko.candidates import check_response_source

        object.__setattr__(self, "media_column", check_response_source(self))  # frozen; response_model's default
        if not self.rubrics_column and not self.prompt_column:
            raise InputError(
                "set prompt_column (rubrics are generated from the prompts) or rubrics_column (rubrics given in "
                f"the data), got prompt_column={self.prompt_column!r}, rubrics_column={self.rubrics_column!r}",
                source="prompt_column",
            )
        check_output_format(self.output_format, self.bigquery_destination_prefix)
        return self

    @property
    def rubric_generator(self) -> RubricGenerator:
        """The rubric-generation stage of this run."""
        return RubricGenerator.of(
            self.rubric_generation_model,
            self.rubric_generation_parameters,
            self.rubric_generation_prompt_template,
            project=self.project,
            location=self.location,
        )

    @property
    def responder(self) -> ResponseModel | None:
        """The stage generating the text responses (``response_model``), or None when they are in the data."""
        if not self.response_model:
            return None
        return ResponseModel.of(
            self.response_model, self.response_model_parameters, project=self.project, location=self.location
        )

    @property
    def validator(self) -> Validator:
        """The validator stage of this run."""
        return Validator.of(
            self.validator_model,
            self.validator_parameters,
            self.validator_prompt_template,
            project=self.project,
            location=self.location,
        )


PARAMETERS = GeckoParams
"""This pipeline's parameter model, registered for ``autorater params`` (one per pipeline package)."""
