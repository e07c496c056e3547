"""The AutoSxS parameter model: every pipeline parameter and every nested option, checked once.

:class:`AutosxsParams` holds the 19 parameters of GCPC's ``autosxs-template`` plus ``autorater_model`` and
``autorater_parameters`` (:class:`AutoraterParameters`); ``model_a_parameters``/``model_b_parameters`` are
:class:`ModelParameters`. Numbers arrive in KFP's forms (``2.0``, ``"0.2"``) and are converted and bounded by
the shared table (:data:`autorater_pipelines.evaluation.parameters.BOUNDS`), so ``sampling_count`` means the
same, with the same range and the same message, here and in Gecko's ``validator_parameters``.

:func:`validate_run` is the one check of a run, used by ``autorater run`` (before the run), ``autorater submit``
(dry run or not) and the pipeline's first step; later steps parse their parameters with these models again
(cheap: no data read, no model built twice) and trust them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, ClassVar

import pydantic

from autorater_pipelines.errors import InputError
from autorater_pipelines.evaluation import DEFAULT_MODEL
from autorater_pipelines.evaluation.ids import check_id_columns
from autorater_pipelines.evaluation.model_checks import probe_model_endpoint
from autorater_pipelines.evaluation.parameters import (
    Flag,
    Integer,
    ModelCallOptions,
    ParameterModel,
    RunParameters,
    ValidatedRun,
    check_model_spec,
    nested,
)

__all__ = [
    "EXPERIMENTAL_ARGS",
    "JUDGMENTS_FORMATS",
    "AutoraterParameters",
    "AutosxsParams",
    "ModelParameters",
    "ValidatedRun",
    "check_judgments_format",
    "check_run_parameters",
    "check_verdict_settings",
    "split_autorater_parameters",
    "strict_mode",
    "validate_run",
]

JUDGMENTS_FORMATS = ("jsonl", "json", "bigquery")
"""Values of ``judgments_format``."""

_SRC = "autorater_parameters"

EXPERIMENTAL_ARGS = ("custom_task_definition",)
"""Keys of ``experimental_args`` (GCPC's custom task); any other is a typo, refused like every nested object's."""


def check_judgments_format(value: Any) -> str:
    """``judgments_format`` lower-cased (empty = ``jsonl``).

    Raises:
        InputError: not one of :data:`JUDGMENTS_FORMATS`.
    """
    fmt = (value or "jsonl").lower() if isinstance(value, str) else value
    if fmt not in JUDGMENTS_FORMATS:
        raise InputError(
            f"unsupported judgments_format {value!r}; valid: {list(JUDGMENTS_FORMATS)}", source="judgments_format"
        )
    return str(fmt)


class AutoraterParameters(ModelCallOptions):
    """``autorater_parameters``: judging keys, ``shards``, and every model-call setting (GenerateConfig field)."""

    sampling_count: Integer = 2
    """Samples per example; default 2 = one original and one swapped order."""
    flip: Flag = True
    """Show model B first on half of the samples (position swap), seeded by the example ids."""
    verdict_pattern: str | None = None
    """Regex (RE2, linear time) applied to the raw judge output instead of JSON parsing (needs ``verdict_map``)."""
    verdict_map: dict[str, str] = pydantic.Field(default_factory=dict)
    """Match text → POSITION verdict: ``A`` (shown first), ``B`` (shown second), ``TIE``."""
    verdict_match: str = "last"
    """Which match decides when there are several: ``last``, ``first`` or ``unique``."""
    retry_unparseable: Flag | None = None
    """Ask again, on a re-run, for cached answers that could not be parsed; None = on when ``temperature`` > 0."""
    shards: Integer = 1
    """Judging tasks run in parallel (a ``ParallelFor``); each judges every ``shards``-th example."""
    strict: Flag = False
    """Fail the judging step when the model calls stop early (default: write the judgments so far and ERROR rows
    with the reason for the rest)."""

    @pydantic.field_validator("verdict_pattern", mode="before")
    @classmethod
    def _pattern(cls, value: Any) -> Any:
        from autorater_pipelines.autosxs.verdict_reach import check_verdict_not_empty
        from autorater_pipelines.autosxs.verdicts import compile_verdict_pattern

        if value is None or value == "":
            return None
        compile_verdict_pattern(value, source=_SRC)
        check_verdict_not_empty(value)
        return str(value)

    @pydantic.field_validator("verdict_match", mode="before")
    @classmethod
    def _match(cls, value: Any) -> Any:
        from autorater_pipelines.autosxs.verdicts import check_verdict_match

        return check_verdict_match(value, source=_SRC)

    @pydantic.field_validator("verdict_map", mode="before")
    @classmethod
    def _map(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise ValueError(f"verdict_map must be an object of match → A|B|TIE, got {value!r}")
        clean = {}
        for key, position in value.items():
            if not str(key).strip():
                raise ValueError(
                    f"verdict_map has an empty key {key!r}: a verdict is never empty; map each verdict text "
                    '(e.g. {"A": "A", "B": "B", "tie": "TIE"})'
                )
            label = str(position).strip().upper()
            if label not in ("A", "B", "TIE"):
                raise ValueError(
                    f"verdict_map[{key!r}] = {position!r}; values must be A (shown first), B (shown second) or TIE"
                )
            clean[str(key)] = label
        return clean

    @pydantic.model_validator(mode="before")
    @classmethod
    def _match_needs_pattern(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and data.get("verdict_match") not in (None, ""):
            if data.get("verdict_pattern") in (None, ""):
                raise ValueError(
                    f"verdict_match {data['verdict_match']!r} applies only with verdict_pattern (which match of "
                    "the pattern decides); JSON answers have one choice: remove verdict_match or set verdict_pattern"
                )
        return data

    @pydantic.model_validator(mode="after")
    def _pattern_and_map(self) -> AutoraterParameters:
        if self.verdict_map and self.verdict_pattern is None:
            raise ValueError("verdict_map is set but verdict_pattern is not; set both")
        if self.verdict_pattern is not None and not self.verdict_map:
            raise ValueError('verdict_pattern needs a verdict_map, e.g. {"a": "A", "b": "B", "tie": "TIE"}')
        return self

    def judge_settings(self) -> Any:
        """The :class:`~autorater_pipelines.autosxs.judging.JudgeSettings` of these parameters."""
        from autorater_pipelines.autosxs.judging import JudgeSettings
        from autorater_pipelines.autosxs.verdicts import compile_verdict_pattern

        pattern = self.verdict_pattern
        return JudgeSettings(
            sampling_count=self.sampling_count,
            flip=self.flip,
            verdict_pattern=compile_verdict_pattern(pattern, source=_SRC) if pattern is not None else None,
            verdict_map=dict(self.verdict_map),
            verdict_match=self.verdict_match,
            retry_unparseable=self.retry_unparseable,
        )


class ModelParameters(ModelCallOptions):
    """``model_a_parameters`` / ``model_b_parameters``: model-call settings, GCPC's Vertex names accepted."""

    ALIASES: ClassVar[dict[str, str]] = {
        "maxOutputTokens": "max_output_tokens",
        "max_tokens": "max_output_tokens",
        "topP": "top_p",
    }


def _options(model: type[ParameterModel], source: str) -> Any:
    return nested(model, source)


class AutosxsParams(RunParameters):
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
            raise InputError(
                f"unknown keys {unknown}; valid keys: {list(EXPERIMENTAL_ARGS)}", source="experimental_args"
            )
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


def validate_run(
    params: Mapping[str, Any] | AutosxsParams,
    *,
    readable: Callable[[str], bool] | None = None,
    project: str = "",
    probe_endpoint: bool = False,
    dataset: Any = None,
) -> ValidatedRun:
    """Check a whole AutoSxS run before any model call: parameters, models, export target and data.

    Args:
        params: The pipeline parameters (names as in the template).
        readable: Which files and URIs to read from here (datasets, ``replay/`` recordings); None = all.
            ``autorater submit --dry-run`` reads only local files; what is skipped is listed in ``notes``.
        project: The project the run will have when ``params`` leaves ``project`` empty (``submit``'s
            ``--project``: the job's project is the pipeline's default).
        probe_endpoint: Open a TCP connection (no request) to each model's explicit ``base_url``, so a wrong one
            fails at once (``autorater run`` and the DataFrame API, where the run starts on this machine).
        dataset: Rows already read (an :class:`autorater_pipelines.io.Dataset`; the DataFrame API's), used instead
            of reading ``evaluation_dataset``.

    Returns:
        The converted parameters, the prepared examples (``rows``) when the dataset was read, and notes.

    Raises:
        InputError: the first problem found, naming the parameter (and file, row and column for data).
    """
    from autorater_pipelines import io
    from autorater_pipelines.autosxs import prepare

    run = AutosxsParams.parse(params, source="parameters")
    notes: list[str] = []
    task = prepare.check_prompt_setup(run)
    check_verdict_settings(task, run.autorater_parameters)
    job_project = run.project or project

    def check(spec: str, options: ModelCallOptions, source: str, options_source: str) -> None:
        check_model_spec(
            spec,
            options,
            source,
            project=job_project,
            location=run.location,
            readable=readable,
            notes=notes,
            options_source=options_source,
        )

    check(run.judge_model, run.autorater_parameters, "autorater_model", _SRC)
    if probe_endpoint:
        probe_model_endpoint(
            run.judge_model, run.autorater_parameters, _SRC, project=job_project, location=run.location
        )
    if run.judgments_format == "bigquery":
        io.parse_destination_prefix(run.bigquery_destination_prefix)
    sources = [] if dataset is not None else _sources(run.evaluation_dataset)
    unread = [p for p in sources if readable is not None and not readable(p)]
    if unread:  # not read from here: still refused now if malformed, with the message a run gives
        io.check_sources(run.evaluation_dataset)
    examples = None if unread else prepare.build_examples(run, task, dataset)
    for side in _generating_sides(run, examples):
        model, options = getattr(run, f"model_{side}"), getattr(run, f"model_{side}_parameters")
        check(model, options, f"model_{side}", f"model_{side}_parameters")
        if probe_endpoint:
            probe_model_endpoint(model, options, f"model_{side}_parameters", project=job_project, location=run.location)
    if unread:
        notes.append(
            f"evaluation_dataset {', '.join(unread)} not read from here: its columns and ids are checked by the "
            "pipeline's first step"
        )
    return ValidatedRun(run, examples, notes)


def _generating_sides(run: AutosxsParams, examples: list[dict[str, Any]] | None) -> list[str]:
    """The sides whose responses are generated: known from the prepared examples, else from the parameters."""
    from autorater_pipelines.autosxs.sides import MODEL_OUTPUT_FIELDS

    if examples is not None:
        return [s for s in ("a", "b") if any(f"model_{s}_prompt" in e for e in examples)]
    return [
        s
        for s in ("a", "b")
        if getattr(run, f"model_{s}") and getattr(run, f"response_column_{s}") in ("", *MODEL_OUTPUT_FIELDS)
    ]


def strict_mode(params: Mapping[str, Any] | AutoraterParameters | None) -> bool:
    """``autorater_parameters["strict"]`` (default False): fail the judging step when the model calls stop early.

    Raises:
        InputError: invalid ``autorater_parameters``.
    """
    return AutoraterParameters.parse(params, source=_SRC).strict


def _sources(uri: str) -> list[str]:
    return [part.strip() for part in uri.split(",") if part.strip()]


def split_autorater_parameters(params: Mapping[str, Any] | None) -> tuple[Any, dict[str, Any]]:
    """Split ``autorater_parameters`` into judging settings and the model-call settings the user set.

    Raises:
        InputError: an unknown key (the message lists the valid ones) or a bad value.
    """
    options = AutoraterParameters.parse(params, source=_SRC)
    return options.judge_settings(), options.settings()


def check_verdict_settings(task_def: Any, settings: Any) -> None:
    """Refuse a ``verdict_pattern`` that cannot work for the task and its ``verdict_map``.

    Refused: a pattern with a pointwise score rubric (its verdicts are JSON scores); ``verdict_map`` keys the
    pattern can never find, or a map that never gives A or B
    (:func:`~autorater_pipelines.autosxs.verdict_reach.check_verdict_map_reachable`).

    Args:
        task_def: The :class:`~autorater_pipelines.autosxs.tasks.TaskDefinition`.
        settings: :class:`AutoraterParameters` or :class:`~autorater_pipelines.autosxs.judging.JudgeSettings`.

    Raises:
        InputError: the first problem, naming the pattern and the keys or positions.
    """
    from autorater_pipelines.autosxs.verdict_reach import check_verdict_map_reachable

    if settings.verdict_pattern is None:
        return
    if task_def.pointwise:
        raise InputError(
            "verdict_pattern parses A/B/TIE verdicts, but the task's score_rubric is a pointwise scale "
            f"{task_def.score_scale}: the judge answers with JSON scores; remove verdict_pattern and verdict_map",
            source=_SRC,
        )
    pattern = getattr(settings.verdict_pattern, "pattern", settings.verdict_pattern)  # JudgeSettings: compiled
    check_verdict_map_reachable(pattern, settings.verdict_map)


def check_run_parameters(
    autorater_model: str = "",
    autorater_parameters: Mapping[str, Any] | None = None,
    judgments_format: str = "jsonl",
    bigquery_destination_prefix: str = "",
    project: str = "",
    location: str = "",
    task: str | None = None,
    experimental_args: Mapping[str, Any] | None = None,
    probe_endpoint: bool = False,
) -> None:
    """Check the judging and export parameters alone (no dataset): the part of :func:`validate_run` they need.

    The autorater model is built (a ``replay/`` file is read and checked; a Vertex AI model without a project or
    API key is refused) but not called; BigQuery names are checked against BigQuery's naming rules only.

    Raises:
        InputError: an unknown or invalid autorater parameter, a malformed model spec, an unsupported
            ``judgments_format``, (with ``bigquery``) a missing or invalid ``bigquery_destination_prefix``, or
            (with ``task``) a ``verdict_pattern`` for a task whose rubric is a pointwise scale.
    """
    from autorater_pipelines import io
    from autorater_pipelines.autosxs import tasks

    options = AutoraterParameters.parse(autorater_parameters, source=_SRC)
    if task is not None:
        check_verdict_settings(tasks.get_task(task, dict(experimental_args or {})), options)
    if check_judgments_format(judgments_format) == "bigquery":
        io.parse_destination_prefix(bigquery_destination_prefix)
    check_model_spec(
        autorater_model or DEFAULT_MODEL,
        options,
        "autorater_model",
        project=project,
        location=location,
        options_source=_SRC,
    )


PARAMETERS = AutosxsParams
"""This pipeline's parameter model, registered for ``autorater params`` (one per pipeline package)."""
