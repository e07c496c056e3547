"""The AutoSxS parameter model: every pipeline parameter and every nested option, checked once.

:class:`AutosxsParams` holds the 19 parameters of GCPC's ``autosxs-template`` plus ``autorater_model`` and
``autorater_parameters`` (:class:`AutoraterParameters`); ``model_a_parameters``/``model_b_parameters`` are
:class:`ModelParameters`. Numbers arrive in KFP's forms (``2.0``, ``"0.2"``) and are converted and bounded by
the shared table (:data:`autorater_pipelines.evaluation.parameters.BOUNDS`), so ``sampling_count`` means the
same, with the same range and the same message, here and in Gecko's ``validator_parameters``.

The schema only: the one check of a run is :func:`autorater_pipelines.autosxs.preflight.validate_run`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import pydantic

from autorater_pipelines.errors import InputError, unknown_names
from autorater_pipelines.evaluation import DEFAULT_MODEL
from autorater_pipelines.evaluation.ids import check_id_columns
from autorater_pipelines.evaluation.parameters import ParameterModel, RunParameters, nested
from autorater_pipelines.pairwise.export import JUDGMENTS_FORMATS, check_judgments_format
from autorater_pipelines.pairwise.panel import Juror, PanelParameterChecks, panel_jurors
from autorater_pipelines.pairwise.responses import ModelParameters, ResponseModel
from autorater_pipelines.pairwise.settings import SOURCE, AutoraterParameters
from autorater_pipelines.pairwise.stages import Autorater

__all__ = [
    "EXPERIMENTAL_ARGS",
    "JUDGMENTS_FORMATS",
    "PARAMETERS",
    "SOURCE",
    "Autorater",
    "AutoraterParameters",
    "AutosxsParams",
    "ModelParameters",
    "ResponseModel",
    "check_judgments_format",
]

_SRC = SOURCE

EXPERIMENTAL_ARGS = ("custom_task_definition",)
"""Keys of ``experimental_args`` (GCPC's custom task); any other is a typo, refused like every nested object's."""


def _options(model: type[ParameterModel], source: str) -> Any:
    return nested(model, source)


class AutosxsParams(RunParameters, PanelParameterChecks):
    """Every parameter of the ``autosxs`` pipeline (docs/reference/parameters.md is generated from it)."""

    evaluation_dataset: str
    task: str
    id_columns: Annotated[list[str], pydantic.BeforeValidator(check_id_columns)]
    autorater_prompt_parameters: dict[str, Any]
    model_a: str = ""
    model_b: str = ""
    model_a_prompt_parameters: Any = pydantic.Field(default_factory=dict)
    model_b_prompt_parameters: Any = pydantic.Field(default_factory=dict)
    response_column_a: str = ""
    response_column_b: str = ""
    model_a_parameters: Annotated[ModelParameters, _options(ModelParameters, "model_a_parameters")] = pydantic.Field(
        default_factory=ModelParameters
    )
    model_b_parameters: Annotated[ModelParameters, _options(ModelParameters, "model_b_parameters")] = pydantic.Field(
        default_factory=ModelParameters
    )
    human_preference_column: str = ""
    project: str = ""
    location: str = ""
    judgments_format: str = "jsonl"
    bigquery_destination_prefix: str = ""
    experimental_args: dict[str, Any] = pydantic.Field(default_factory=dict)
    encryption_spec_key_name: str = ""
    autorater_model: str = ""
    autorater_parameters: Annotated[AutoraterParameters, _options(AutoraterParameters, _SRC)] = pydantic.Field(
        default_factory=AutoraterParameters
    )
    autorater_panel: list[str] = pydantic.Field(default_factory=list)
    panel_vote: str = ""

    @pydantic.field_validator("autorater_prompt_parameters", mode="before")
    @classmethod
    def _mapping(cls, value: Any, info: pydantic.ValidationInfo) -> Any:
        if not isinstance(value, Mapping):
            raise InputError(
                f'must be an object like {{"inference_instruction": {{"column": "question"}}}}, got {value!r}',
                source=info.field_name,
            )
        return dict(value)

    @pydantic.field_validator("experimental_args", mode="before")
    @classmethod
    def _experimental(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise InputError(f"expected a JSON object of settings, got {value!r}", source="experimental_args")
        unknown = sorted(str(k) for k in value if k not in EXPERIMENTAL_ARGS)
        if unknown:
            raise InputError(unknown_names("keys", unknown, list(EXPERIMENTAL_ARGS)), source="experimental_args")
        return dict(value)

    @pydantic.field_validator("judgments_format", mode="before")
    @classmethod
    def _format(cls, value: Any) -> Any:
        return check_judgments_format(value)

    @pydantic.model_validator(mode="after")
    def _two_columns(self) -> AutosxsParams:
        # With model_a/model_b set, a response column may name a field of each model's own output (Google's
        # compare-models example gives both sides "content"), so only two dataset columns are refused.
        pregenerated = not self.model_a and not self.model_b
        if pregenerated and self.response_column_a and self.response_column_a == self.response_column_b:
            raise InputError(
                f"is the same column as response_column_a ({self.response_column_a!r}): the two models' responses "
                "would be the same text and every comparison a tie; name model B's column",
                source="response_column_b",
            )
        return self

    @property
    def judge_model(self) -> str:
        """The autorater model spec (``autorater_model``, or :data:`DEFAULT_MODEL` when empty)."""
        return self.autorater_model or DEFAULT_MODEL

    def autorater(self, project: str = "") -> Autorater:
        """The autorater stage of this run; ``project`` is used when the run sets none (``submit --project``)."""
        return Autorater(
            model=self.judge_model,
            options=self.autorater_parameters,
            project=self.project or project,
            location=self.location,
        )

    def jurors(self, project: str = "") -> list[Juror]:
        """The panel's jurors (empty without ``autorater_panel``); ``project`` as for :meth:`autorater`."""
        return panel_jurors(self.autorater_panel, self.autorater(project))

    def response_model(self, side: str, project: str = "") -> ResponseModel:
        """Model A's (``side`` ``a``) or model B's stage; ``project`` as for :meth:`autorater`."""
        return ResponseModel(
            side=side,
            model=getattr(self, f"model_{side}"),
            options=getattr(self, f"model_{side}_parameters"),
            prompt_parameters=getattr(self, f"model_{side}_prompt_parameters"),
            project=self.project or project,
            location=self.location,
        )


PARAMETERS = AutosxsParams
"""This pipeline's parameter model, registered for ``autorater params`` (one per pipeline package)."""
