"""The arena parameter model: every pipeline parameter of ``arena``, checked once.

:class:`ArenaParams` holds AutoSxS's dataset, task, prompt and judge parameters (same names, same meaning, same
bounds: :data:`autorater_pipelines.evaluation.parameters.BOUNDS`), the candidates (``response_columns``: model name
→ dataset column, and ``models``: model name → the model generating its responses,
:mod:`~autorater_pipelines.arena.candidates`), the pair schedule (``pairing``, ``baseline``,
``opponents_per_prompt``, ``seed``) and the ranking options (``bootstrap_rounds``, ``style_control``, ``ties``,
``strong_verdict_weight``).

The schema only: the one check of a run is :func:`autorater_pipelines.arena.preflight.validate_run`.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Annotated, Any

import pydantic

from autorater_pipelines.arena.candidates import CandidateModel, parse_models
from autorater_pipelines.arena.ranking import TIES
from autorater_pipelines.bounds import Bound
from autorater_pipelines.errors import InputError, unknown_names
from autorater_pipelines.evaluation import DEFAULT_MODEL
from autorater_pipelines.evaluation.ids import check_id_columns
from autorater_pipelines.evaluation.parameters import BOUNDS, Flag, RunParameters, nested, to_choice
from autorater_pipelines.pairwise.export import JUDGMENTS_FORMATS
from autorater_pipelines.pairwise.panel import PanelParameterChecks
from autorater_pipelines.pairwise.settings import SOURCE, AutoraterParameters

__all__ = ["EXPERIMENTAL_ARGS", "JUDGMENTS_FORMATS", "PAIRINGS", "PARAMETERS", "ArenaParams", "RankingOptions"]

PAIRINGS = ("all", "baseline", "sampled")
"""Values of ``pairing``: every pair of models on every prompt; every model against ``baseline``; or
``opponents_per_prompt`` seeded random opponents per model and prompt."""

EXPERIMENTAL_ARGS = ("custom_task_definition",)
"""Keys of ``experimental_args`` (GCPC's custom task, as AutoSxS's)."""

BootstrapRounds = Annotated[int, Bound("integer", 0, 2000)]
"""``bootstrap_rounds``: refits over prompts drawn with replacement (0 = no intervals)."""
OpponentsPerPrompt = Annotated[int, Bound("integer", 1, 1000)]
"""``opponents_per_prompt``: opponents drawn per model and prompt with ``pairing: sampled``."""
StrongVerdictWeight = Annotated[int, Bound("integer", 1, 100)]
"""``strong_verdict_weight``: battles a strong verdict counts as."""
Seed = Annotated[int, BOUNDS["seed"]]
"""``seed``: the same range as the model-call ``seed``."""

_COLUMNS_EXAMPLE = '{"model-x": "response_x", "model-y": "response_y"}'

RESERVED_NAMES = frozenset({"model_a", "model_b"})
"""Columns a pair's judgment row adds to the id columns (a dataset id column may not use them)."""


class RankingOptions(pydantic.BaseModel):
    """What the leaderboard is fitted with: the part of the parameters ``autorater rescore`` may change."""

    model_config = pydantic.ConfigDict(frozen=True)

    baseline: str = ""
    bootstrap_rounds: int = 100
    seed: int = 0
    style_control: bool = False
    ties: str = "half"
    strong_verdict_weight: int = 3


class ArenaParams(RunParameters, PanelParameterChecks):
    """Every parameter of the ``arena`` pipeline."""

    evaluation_dataset: str
    """Comma-separated JSONL/JSON/CSV/Parquet files (local or gs://), or ``bq://project.dataset.table``."""
    task: str
    """The judge's task, as AutoSxS's: ``summarization``/``question_answering`` [``@001``|``@latest``] or
    ``custom[@...]`` with ``experimental_args.custom_task_definition``."""
    id_columns: Annotated[list[str], pydantic.BeforeValidator(check_id_columns)]
    """Columns whose values identify a prompt (unique per row)."""
    autorater_prompt_parameters: dict[str, Any]
    """The judge's prompt parameters, as AutoSxS's (column or ``{"template": ...}`` per key)."""
    response_columns: dict[str, str] = pydantic.Field(default_factory=dict)
    """Model name → the dataset column with its responses; with ``models``, the names are the leaderboard's rows
    (2 or more in all)."""
    models: Annotated[dict[str, CandidateModel], pydantic.BeforeValidator(parse_models)] = pydantic.Field(
        default_factory=dict
    )
    """Model name → ``{"model": spec, "prompt_parameters": {"prompt": ...}, "parameters": {...}}``: models whose
    responses are generated (as AutoSxS's ``model_a``), then judged like ``response_columns``' models."""
    pairing: str = "all"
    """Which pairs are judged on each prompt: ``all``, ``baseline`` or ``sampled``."""
    baseline: str = ""
    """A model name: scores are relative to it (its score is 0) and ``pairing: baseline`` pairs every model with
    it; empty = scores centred at mean 0."""
    opponents_per_prompt: OpponentsPerPrompt = 1
    """With ``pairing: sampled``: opponents drawn (without replacement, seeded) for each model on each prompt."""
    seed: Seed = 0
    """Seed of the sampled pairs and of the bootstrap."""
    bootstrap_rounds: BootstrapRounds = 100
    """Bootstrap refits over prompts for the 95 % intervals (0–2000; 0 = no intervals)."""
    style_control: Flag = False
    """Add length and Markdown-density differences as Bradley–Terry covariates (``score_style_controlled``)."""
    ties: str = "half"
    """How ties enter the fit: ``half`` (half a win to each side) or ``rao_kupper``."""
    strong_verdict_weight: StrongVerdictWeight = 3
    """How many battles a strong verdict (``A>>B``) counts as, with a task that allows them."""
    autorater_model: str = ""
    """The judge's model spec (empty = the default Gemini Flash model)."""
    autorater_parameters: Annotated[AutoraterParameters, nested(AutoraterParameters, SOURCE)] = pydantic.Field(
        default_factory=AutoraterParameters
    )
    """Judge settings, as AutoSxS's (``sampling_count``, ``flip``, ``verdict_pattern``, ``shards``, …)."""
    autorater_panel: list[str] = pydantic.Field(default_factory=list)
    """A panel of judges instead of ``autorater_model``: two or more model specs, as AutoSxS's
    (:mod:`autorater_pipelines.pairwise.panel`); each pair's battle is the panel's verdict."""
    panel_vote: str = ""
    """How the panel votes: ``majority`` (default) or ``mean``, as AutoSxS's."""
    experimental_args: dict[str, Any] = pydantic.Field(default_factory=dict)
    """``custom_task_definition`` for ``task: custom``."""
    judgments_format: str = "jsonl"
    """Export format of the judgments and the leaderboard, as AutoSxS's: ``jsonl``, ``json`` (one JSON array per
    file) or ``bigquery`` (a new table for each, named from ``bigquery_destination_prefix``, and the JSONL files)."""
    bigquery_destination_prefix: str = ""
    """``project.dataset[.table_prefix]`` for the ``bigquery`` format: tables ``[<table_prefix>_]judgments_<stamp>``
    and ``[<table_prefix>_]leaderboard_<stamp>`` (the same ``<YYYYMMDD_HHMMSS>_<6 hex>`` stamp, UTC) in that
    dataset, which must exist."""
    project: str = ""
    """Google Cloud project of Vertex AI calls."""
    location: str = ""
    """Google Cloud region of Vertex AI calls."""

    @pydantic.field_validator("autorater_prompt_parameters", "experimental_args", mode="before")
    @classmethod
    def _mapping(cls, value: Any, info: pydantic.ValidationInfo) -> Any:
        if value is None and info.field_name == "experimental_args":
            return {}
        if not isinstance(value, Mapping):
            raise InputError(
                f'must be an object like {{"inference_instruction": {{"column": "question"}}}}, got {value!r}'
                if info.field_name == "autorater_prompt_parameters"
                else f"expected a JSON object of settings, got {value!r}",
                source=info.field_name,
            )
        if info.field_name == "experimental_args":
            unknown = sorted(str(k) for k in value if k not in EXPERIMENTAL_ARGS)
            if unknown:
                raise InputError(unknown_names("keys", unknown, list(EXPERIMENTAL_ARGS)), source="experimental_args")
        return dict(value)

    @pydantic.field_validator("response_columns", mode="before")
    @classmethod
    def _columns(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise InputError(
                f"must be an object of model name → column like {_COLUMNS_EXAMPLE}, got {value!r}",
                source="response_columns",
            )
        for name, column in value.items():
            if not isinstance(name, str) or not name.strip():
                raise InputError(f"model name {name!r} is empty; name every model", source="response_columns")
            if not isinstance(column, str) or not column.strip():
                raise InputError(
                    f"model {name!r}: column must be a non-empty column name, got {column!r}", source="response_columns"
                )
        return dict(value)

    @pydantic.field_validator("pairing", "ties", "judgments_format", mode="before")
    @classmethod
    def _choice(cls, value: Any, info: pydantic.ValidationInfo) -> Any:
        choices = {"pairing": PAIRINGS, "ties": TIES, "judgments_format": JUDGMENTS_FORMATS}[str(info.field_name)]
        text = to_choice(value or choices[0], choices) if isinstance(value, str) else value
        if text not in choices:
            raise InputError(f"must be one of {list(choices)}, got {value!r}", source=info.field_name)
        return text

    @pydantic.model_validator(mode="after")
    def _schedule(self) -> ArenaParams:
        both = sorted(set(self.response_columns) & set(self.models))
        if both:
            raise InputError(
                f"model {both[0]!r} is in both response_columns and models; give each model one source of responses",
                source="models",
            )
        _refuse_lookalike_names(self.response_columns, self.models)
        names = self.model_names
        if len(names) < 2:
            raise InputError(
                f"an arena ranks 2 or more models, got {len(names)}: {names}; name them in response_columns "
                f"(e.g. {_COLUMNS_EXAMPLE}) and/or models",
                source="response_columns",
            )
        if self.baseline and self.baseline not in names:
            raise InputError(f"{self.baseline!r} is not one of the models {names}", source="baseline")
        if self.pairing == "baseline" and not self.baseline:
            raise InputError(f"pairing 'baseline' needs a baseline: one of the models {names}", source="baseline")
        if self.pairing == "sampled" and self.opponents_per_prompt > len(names) - 1:
            raise InputError(
                f"{self.opponents_per_prompt} opponents per prompt, but each model has only {len(names) - 1} "
                f"(models {names}); use at most {len(names) - 1} or pairing 'all'",
                source="opponents_per_prompt",
            )
        clash = sorted(set(self.id_columns) & RESERVED_NAMES)
        if clash:
            raise InputError(
                f"id column {clash[0]!r} is a field of every pair's judgment row; rename the column in the dataset",
                source="id_columns",
            )
        return self

    @property
    def model_names(self) -> list[str]:
        """Every model of the arena, sorted: ``response_columns``' and ``models``' names."""
        return sorted({*self.response_columns, *self.models})

    @property
    def judge_model(self) -> str:
        """The autorater model spec (``autorater_model``, or :data:`DEFAULT_MODEL` when empty)."""
        return self.autorater_model or DEFAULT_MODEL

    @property
    def pair_id_columns(self) -> list[str]:
        """The id columns of a pair's judgment row: the prompt's id columns, ``model_a``, ``model_b``."""
        return [*self.id_columns, "model_a", "model_b"]

    def ranking(self) -> RankingOptions:
        """The ranking options of this run."""
        return RankingOptions(
            baseline=self.baseline,
            bootstrap_rounds=self.bootstrap_rounds,
            seed=self.seed,
            style_control=self.style_control,
            ties=self.ties,
            strong_verdict_weight=self.strong_verdict_weight,
        )


def _refuse_lookalike_names(response_columns: Mapping[str, Any], models: Mapping[str, Any]) -> None:
    """Refuse two model names that differ only in surrounding whitespace, letter case or Unicode normalization.

    They would be two leaderboard rows that read the same (``"X"`` and ``"X "``, ``"X"`` and ``"x"``, NFC ``é`` and
    NFD ``e`` + combining accent).

    Raises:
        InputError: naming both names (with ``!r``) and where each is given.
    """
    seen: dict[str, tuple[str, str]] = {}
    for source, names in (("response_columns", response_columns), ("models", models)):
        for name in names:
            key = unicodedata.normalize("NFC", name).strip().casefold()
            if key in seen and seen[key][0] != name:
                other, where = seen[key]
                raise InputError(
                    f"model names {other!r} ({where}) and {name!r} ({source}) differ only in surrounding whitespace, "
                    "letter case or Unicode normalization and would read the same on the leaderboard; give each "
                    "model a distinct name (or the same model once)",
                    source=source,
                )
            seen.setdefault(key, (name, source))


PARAMETERS = ArenaParams
"""This pipeline's parameter model, registered for ``autorater params``."""
