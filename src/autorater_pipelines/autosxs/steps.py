"""AutoSxS steps: prepare examples, judge them, aggregate metrics, export judgments.

Each function is the single entry point of one KFP component (see ``components/``) and can also be
called directly. Data moves between steps as JSONL files; every input row ends either judged in
``judgments`` or, with the reason, in ``error_messages`` (and then also as a judgment with choice
``ERROR``).

Prepared example (one JSONL line per dataset row): id columns, every rendered autorater prompt
parameter (e.g. ``inference_instruction``, ``inference_context``), ``response_a``, ``response_b`` and,
when ``human_preference_column`` is set, that column normalized to ``A``/``B``/``TIE``.

Error message row: id columns, ``stage`` (``judge``), ``sample_index`` (None for the whole row),
``error`` (kind: message), ``row_judged`` (False when the row's choice is ``ERROR``).
"""

from __future__ import annotations

import collections
import dataclasses
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from autorater_pipelines import io
from autorater_pipelines.autosxs import judging as pairwise
from autorater_pipelines.autosxs import prompt_parameters as prompts
from autorater_pipelines.autosxs import scoring, tasks
from autorater_pipelines.autosxs import sides as model_sides
from autorater_pipelines.autosxs.metrics import pairwise_metrics
from autorater_pipelines.errors import AutoraterError, InputError, ModelCallError
from autorater_pipelines.models import ErrorKind, GenerateConfig, ModelOutput, ModelRequest, get_model, parse_model_spec

__all__ = [
    "DEFAULT_AUTORATER_MODEL",
    "JUDGMENTS_BIGQUERY_FIELDS",
    "ExportResult",
    "JudgeSummary",
    "aggregate_judgments",
    "check_run_parameters",
    "export_judgments",
    "judge_examples",
    "prepare_examples",
]

logger = logging.getLogger(__name__)

DEFAULT_AUTORATER_MODEL = "gemini-2.5-flash"
"""Autorater used when ``autorater_model`` is empty: a current Gemini Flash model on Vertex AI."""

MAX_SHARDS = 1000
"""Upper bound of ``autorater_parameters["shards"]``."""

PIPELINE_KEYS = ("shards", "strict")
"""``autorater_parameters`` keys that shape the pipeline rather than the judge or the model calls."""

JUDGMENTS_FORMATS = ("jsonl", "json", "bigquery")

_STRING, _INTEGER, _FLOAT, _BOOLEAN = (
    {"type": t, "mode": "NULLABLE"} for t in ("STRING", "INTEGER", "FLOAT", "BOOLEAN")
)
JUDGMENTS_BIGQUERY_FIELDS: dict[str, dict[str, Any]] = {
    "inference_instruction": _STRING,
    "inference_context": _STRING,
    "response_a": _STRING,
    "response_b": _STRING,
    "choice": _STRING,
    "confidence": _FLOAT,
    "explanation": _STRING,
    "complete": _BOOLEAN,
    "incomplete_reason": _STRING,
    "response_a_score": _FLOAT,
    "response_b_score": _FLOAT,
    "samples": {
        "type": "RECORD",
        "mode": "REPEATED",
        "fields": [
            {"name": "sample_index", **_INTEGER},
            {"name": "flipped", **_BOOLEAN},
            {"name": "choice", **_STRING},
            {"name": "explanation", **_STRING},
            {"name": "raw_response", **_STRING},
            {"name": "error", **_STRING},
            {"name": "attempts", **_INTEGER},
            {"name": "cached", **_BOOLEAN},
            {"name": "note", **_STRING},
        ],
    },
    "input_token_count": _INTEGER,
    "output_token_count": _INTEGER,
}
"""BigQuery types of the judgment columns this package computes (REST form). Every other column (id columns,
the human preference column, other prompt parameters) takes its type from its values (see ``io.infer_schema``)."""


def _validate_id_columns(id_columns: Any) -> list[str]:
    if isinstance(id_columns, str) or not isinstance(id_columns, Sequence) or not id_columns:
        raise InputError(
            f"id_columns must be a non-empty list of column names, got {id_columns!r}", source="id_columns"
        )
    bad = [c for c in id_columns if not isinstance(c, str) or not c]
    if bad:
        raise InputError(f"id_columns entries must be column names, got {bad!r}", source="id_columns")
    return list(id_columns)


def prepare_examples(
    *,
    evaluation_dataset: str | io.Dataset,
    task: str,
    id_columns: Sequence[str],
    autorater_prompt_parameters: Mapping[str, Mapping[str, str]],
    response_column_a: str = "",
    response_column_b: str = "",
    human_preference_column: str = "",
    model_a: str = "",
    model_b: str = "",
    model_a_prompt_parameters: Mapping[str, Mapping[str, str]] | None = None,
    model_b_prompt_parameters: Mapping[str, Mapping[str, str]] | None = None,
    experimental_args: Mapping[str, Any] | None = None,
    output_path: str | None = None,
) -> list[dict[str, Any]]:
    """Load and validate the evaluation dataset and render the autorater prompt parameters.

    Validation is complete before anything is written: ids present and unique, every referenced column
    present, every template renders for every row, every human label valid. Nothing is written when
    any row is bad.

    Args:
        evaluation_dataset: Comma-separated files (JSONL, JSON, CSV, Parquet); see :func:`io.read_dataset`. Or
            rows already read (an :class:`io.Dataset`, as the DataFrame API passes them).
        task: ``summarization@001``, ``question_answering@latest``, ``custom@…`` (see :mod:`tasks`).
        id_columns: Columns that identify an example; their values must be unique.
        autorater_prompt_parameters: ``{param: {"column": c} | {"template": "…{{ c }}…"}}``.
        response_column_a: Column holding model A's responses. When it is empty or not a column of
            the dataset and ``model_a`` is set, model A's responses are generated later (the
            prepared example then holds ``model_a_prompt`` and ``response_a`` = None).
        response_column_b: As ``response_column_a``, for model B.
        human_preference_column: Optional column of human labels (A/B/TIE, model_a/model_b).
        model_a: Model A spec used to generate responses (see :mod:`autorater_pipelines.autosxs.inference`).
        model_b: Model B spec, as ``model_a``.
        model_a_prompt_parameters: ``{"prompt": {"column": c} | {"template": …}}`` for model A.
        model_b_prompt_parameters: As ``model_a_prompt_parameters``, for model B.
        experimental_args: May hold ``custom_task_definition``.
        output_path: Where to write the prepared examples as JSONL (atomically), or None.

    Returns:
        The prepared examples (see module docstring).

    Raises:
        InputError: any problem with the parameters or the data, naming file, row and column.
    """
    id_columns = _validate_id_columns(id_columns)
    task_def = tasks.get_task(task, dict(experimental_args or {}))
    sides = {
        "a": (response_column_a, model_a, model_a_prompt_parameters),
        "b": (response_column_b, model_b, model_b_prompt_parameters),
    }
    for side, (column, model, _) in sides.items():
        model_sides.require_source(side, column, model)
    if not isinstance(autorater_prompt_parameters, Mapping):
        raise InputError(
            f'must be an object like {{"inference_instruction": {{"column": "question"}}}}, '
            f"got {autorater_prompt_parameters!r}",
            source="autorater_prompt_parameters",
        )
    missing = [k for k in task_def.required_prompt_parameter_keys if k not in autorater_prompt_parameters]
    if missing:
        raise InputError(
            f"task {task!r} needs prompt parameters {missing}; map each to a column or template, e.g. "
            f'{{"{missing[0]}": {{"column": "question"}}}}',
            source="autorater_prompt_parameters",
        )
    known = set(task_def.required_prompt_parameter_keys) | set(task_def.optional_prompt_parameter_keys)
    unknown = sorted(set(autorater_prompt_parameters) - known)
    if unknown:
        raise InputError(
            f"unknown prompt parameters {unknown} for task {task!r}; valid: {sorted(known)}",
            source="autorater_prompt_parameters",
        )

    _check_reserved_names(id_columns, human_preference_column, autorater_prompt_parameters)
    dataset = evaluation_dataset if isinstance(evaluation_dataset, io.Dataset) else io.read_dataset(evaluation_dataset)
    sources = {
        side: model_sides.resolve_side(
            side,
            response_column=column,
            model=model,
            prompt_parameters=prompt_parameters,
            columns=dataset.columns,
            template_variables=task_def.template_variables,
        )
        for side, (column, model, prompt_parameters) in sides.items()
    }
    columns = {f"response_column_{s.side}": s.column for s in sources.values() if s.column is not None}
    if human_preference_column:
        columns["human_preference_column"] = human_preference_column
    io.require_columns(dataset, columns)
    io.check_unique_ids(dataset, id_columns)
    compiled = prompts.compile_prompt_parameters(
        dict(autorater_prompt_parameters),
        available_columns=dataset.columns,
        source_name="autorater_prompt_parameters",
        extra_variables=task_def.template_variables,
    )
    examples = []
    for index, row in enumerate(dataset.rows):
        where = dataset.location(index)
        example: dict[str, Any] = {c: row[c] for c in id_columns}
        example.update(compiled.render(row, location=where))
        for source in sources.values():
            if source.generated:
                example.update(source.render_prompt(row, location=where))
                example[f"response_{source.side}"] = None
                continue
            side, response_column = source.side, source.column
            assert response_column is not None
            value = row.get(response_column)
            if value is None or (isinstance(value, float) and value != value):
                raise InputError(
                    f"model {side.upper()}'s response is empty; every row needs a response",
                    source=where,
                    column=response_column,
                )
            example[f"response_{side}"] = value if isinstance(value, str) else str(value)
        if human_preference_column:
            example[human_preference_column] = pairwise.normalize_preference(
                row.get(human_preference_column), column=human_preference_column, location=where
            )
        examples.append(example)
    if output_path:
        io.write_jsonl(output_path, examples)
    logger.info("prepared %d examples from %s", len(examples), dataset.uri or dataset.source_name)
    return examples


RESERVED_COLUMNS = frozenset(
    {
        "choice",
        "confidence",
        "explanation",
        "samples",
        "response_a",
        "response_b",
        "input_token_count",
        "output_token_count",
        "model_a_prompt",
        "model_b_prompt",
        "model_a_system_instruction",
        "model_b_system_instruction",
        "inference_error_a",
        "inference_error_b",
        "stage",
        "error",
        "row_judged",
        "row_complete",
        "complete",
        "incomplete_reason",
        "sample_index",
        "flipped",
        "model",
    }
)
"""Field names of judgments and error messages: id and human-preference columns may not use them."""


def _names_column(spec: Any, column: str) -> bool:
    """True when a prompt parameter is exactly the dataset column ``column`` (``"c"`` or ``{"column": "c"}``).

    Such a parameter and an id column of the same name hold the same value in the judgment row (Google's
    custom-task notebook uses ``id_columns: ["content"]`` with ``"content": "content"``).
    """
    return spec == column or (isinstance(spec, Mapping) and dict(spec) == {"column": column})


def _check_reserved_names(
    id_columns: Sequence[str], human_preference_column: str, prompt_parameters: Mapping[str, Any]
) -> None:
    named = {f"id_columns[{i}]": c for i, c in enumerate(id_columns)}
    if human_preference_column:
        named["human_preference_column"] = human_preference_column
    for parameter, column in named.items():
        same_column = parameter != "human_preference_column" and _names_column(prompt_parameters.get(column), column)
        if column in RESERVED_COLUMNS or (column in prompt_parameters and not same_column):
            raise InputError(
                f"column name {column!r} is also an output field of the judgments "
                f"({'prompt parameter' if column in prompt_parameters else 'reserved'}); rename the column "
                f"in the dataset. Reserved names: {sorted(RESERVED_COLUMNS)}",
                source=parameter,
            )


@dataclasses.dataclass(frozen=True)
class JudgeSummary:
    """Counts from one judging step."""

    evaluation_count: int
    error_count: int
    model_calls: int
    cache_hits: int
    retries: int
    input_tokens: int
    output_tokens: int
    not_called_count: int = 0
    """Rows left ERROR because the run stopped before their calls (see ``stopped``)."""
    stopped: str = ""
    """Why the model calls stopped early (the failure budget tripped), or empty."""


def split_autorater_parameters(params: Mapping[str, Any] | None) -> tuple[pairwise.JudgeSettings, dict[str, Any]]:
    """Split ``autorater_parameters`` into judging settings and model-call settings.

    Raises:
        InputError: an unknown key (the message lists the valid ones) or a bad value.
    """
    params = dict(params or {})
    valid = set(pairwise.judge_parameter_keys()) | set(GenerateConfig.model_fields) | set(PIPELINE_KEYS)
    unknown = sorted(set(params) - valid)
    if unknown:
        raise InputError(f"unknown keys {unknown}; valid keys: {sorted(valid)}", source="autorater_parameters")
    settings = pairwise.JudgeSettings.from_params(params)
    shard_count(params)
    strict_mode(params)
    model_params = {
        k: v for k, v in params.items() if k not in pairwise.judge_parameter_keys() and k not in PIPELINE_KEYS
    }
    return settings, model_params


def strict_mode(params: Mapping[str, Any] | None) -> bool:
    """``autorater_parameters["strict"]`` (default False).

    When the model calls stop early (a wrong endpoint, no progress for ``max_stall_s``, the failure budget),
    the judging step writes the judgments it has and ERROR rows with the reason for the rest, and counts
    them (``not_called_count``); in strict mode it then fails, otherwise it succeeds and the metrics say how
    many rows were not judged.

    Raises:
        InputError: not a boolean.
    """
    value = (params or {}).get("strict", False)
    if not isinstance(value, bool):
        raise InputError(f"strict must be true or false, got {value!r}", source="autorater_parameters")
    return value


def shard_count(params: Mapping[str, Any] | None) -> int:
    """Number of judging shards from ``autorater_parameters["shards"]`` (default 1).

    Each shard is one KFP task of a ``ParallelFor`` (one machine on Vertex AI) judging every
    ``shards``-th example; the merge step restores the dataset order.

    Raises:
        InputError: not an integer in [1, MAX_SHARDS].
    """
    value = (params or {}).get("shards", 1)
    if isinstance(value, float) and value.is_integer():  # KFP structs carry numbers as floats
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SHARDS:
        raise InputError(
            f"shards must be an integer from 1 to {MAX_SHARDS}, got {value!r}", source="autorater_parameters"
        )
    return value


def select_shard(examples: Sequence[Mapping[str, Any]], shard_index: int, shards: int) -> list[Mapping[str, Any]]:
    """The examples of one shard: every ``shards``-th example starting at ``shard_index`` (0-based)."""
    if not 0 <= shard_index < shards:
        raise ValueError(f"shard_index {shard_index} is outside 0..{shards - 1}")
    return list(examples[shard_index::shards])


def merge_shards(
    examples: Sequence[Mapping[str, Any]],
    id_columns: Sequence[str],
    judgment_shards: Sequence[Sequence[Mapping[str, Any]]],
    error_shards: Sequence[Sequence[Mapping[str, Any]]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Merge per-shard judgments and errors back into the order of ``examples`` (deterministic).

    Raises:
        AutoraterError: a judgment is missing, duplicated or unknown (no row may be lost or doubled).
    """
    position = {io.id_key(e, id_columns): i for i, e in enumerate(examples)}
    ordered: list[dict[str, Any] | None] = [None] * len(examples)
    for shard in judgment_shards:
        for judgment in shard:
            index = position.get(io.id_key(judgment, id_columns))
            if index is None or ordered[index] is not None:
                state = "unknown" if index is None else "duplicated"
                raise AutoraterError(f"merging shards: judgment {io.id_key(judgment, id_columns)!r} is {state}")
            ordered[index] = dict(judgment)
    missing = [io.id_key(e, id_columns) for e, j in zip(examples, ordered, strict=True) if j is None]
    if missing:
        raise AutoraterError(f"merging shards: {len(missing)} examples have no judgment, e.g. {missing[:3]!r}")
    errors = [dict(e) for shard in error_shards for e in shard]
    errors.sort(key=lambda e: (position.get(io.id_key(e, id_columns), -1), e.get("sample_index") or 0))
    return [j for j in ordered if j is not None], errors


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
    """Validate run parameters that are only used after judging starts, so typos fail first.

    The autorater model is built (a ``replay/`` file is read and checked; a Vertex AI model without a
    project or API key is refused) but not called. No model call is made: BigQuery names are checked
    against BigQuery's naming rules only; with ``probe_endpoint``, an explicit ``base_url`` gets a TCP
    connection (no request), so a wrong one fails at once (:meth:`Model.check_reachable`).

    Raises:
        InputError: an unknown or invalid autorater parameter, a malformed model spec, an unsupported
            ``judgments_format``, (with ``bigquery``) a missing or invalid ``bigquery_destination_prefix``,
            (with ``task``) a ``verdict_pattern`` for a task whose rubric is a pointwise scale, or (with
            ``probe_endpoint``) an unreachable ``base_url``.
    """
    settings, model_params = split_autorater_parameters(autorater_parameters)
    if task is not None:
        check_verdict_settings(tasks.get_task(task, dict(experimental_args or {})), settings)
    config = GenerateConfig.from_params(
        model_params, source="autorater_parameters", project=project or None, location=location or None
    )
    parse_model_spec(autorater_model or DEFAULT_AUTORATER_MODEL)
    if _check_format(judgments_format) == "bigquery":
        io.parse_destination_prefix(bigquery_destination_prefix)
    model = get_model(autorater_model or DEFAULT_AUTORATER_MODEL, config)
    if probe_endpoint:
        model.check_reachable()


def check_verdict_settings(task_def: tasks.TaskDefinition, settings: pairwise.JudgeSettings) -> None:
    """Refuse a free-text ``verdict_pattern`` with a pointwise score rubric (its verdicts are JSON scores).

    Raises:
        InputError: both are set.
    """
    if task_def.pointwise and settings.verdict_pattern is not None:
        raise InputError(
            "verdict_pattern parses A/B/TIE verdicts, but the task's score_rubric is a pointwise scale "
            f"{task_def.score_scale}: the judge answers with JSON scores; remove verdict_pattern and verdict_map",
            source="autorater_parameters",
        )


def _check_format(judgments_format: str) -> str:
    fmt = (judgments_format or "jsonl").lower()
    if fmt not in JUDGMENTS_FORMATS:
        raise InputError(
            f"unsupported judgments_format {judgments_format!r}; valid: {list(JUDGMENTS_FORMATS)}",
            source="judgments_format",
        )
    return fmt


def judge_examples(
    *,
    examples: Sequence[Mapping[str, Any]],
    task: str,
    id_columns: Sequence[str],
    autorater_model: str = "",
    autorater_parameters: Mapping[str, Any] | None = None,
    project: str = "",
    location: str = "",
    experimental_args: Mapping[str, Any] | None = None,
    judgments_path: str | None = None,
    error_messages_path: str | None = None,
    shard_count: int = 1,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], JudgeSummary]:
    """Judge prepared examples with the autorater and vote over samples.

    When the model calls stop early (see :mod:`autorater_pipelines.models`: a wrong endpoint, no progress
    for ``max_stall_s``, ``max_consecutive_failures``), the judgments so far are kept, the rest become ERROR
    rows with the reason, everything is written, and :class:`ModelCallError` is raised only in strict mode
    (``autorater_parameters["strict"]``). SIGTERM always raises (nothing is written; a re-run resumes from
    the response cache).

    Args:
        examples: Prepared examples (see module docstring).
        task: Task name, as for :func:`prepare_examples`.
        id_columns: Id columns of the examples.
        autorater_model: Model spec (DESIGN.md); empty = :data:`DEFAULT_AUTORATER_MODEL`.
        autorater_parameters: Judging keys (``sampling_count``, ``flip``, ``verdict_pattern``,
            ``verdict_map``) plus any :class:`GenerateConfig` field (``temperature``, ``base_url``,
            ``max_concurrency``, ``requests_per_minute``, ``cache_dir`` …).
        project: Google Cloud project for Vertex AI models.
        location: Google Cloud region for Vertex AI models.
        experimental_args: May hold ``custom_task_definition``.
        judgments_path: Where to write judgment rows as JSONL (atomically), or None.
        error_messages_path: Where to write error rows as JSONL (atomically), or None.
        shard_count: Number of shards judging the dataset in parallel (this call judges one of them): a
            declared ``requests_per_minute`` is divided among them, so that together they stay within it.

    Returns:
        ``(judgments, error_messages, summary)``: one judgment per example in input order.

    Raises:
        InputError: bad parameters.
        ModelCallError: the model calls stopped early and ``strict`` is set, or the process got SIGTERM.
    """
    id_columns = _validate_id_columns(id_columns)
    task_def = tasks.get_task(task, dict(experimental_args or {}))
    settings, model_params = split_autorater_parameters(autorater_parameters)
    config = GenerateConfig.from_params(
        model_params, source="autorater_parameters", project=project or None, location=location or None
    )
    if shard_count > 1 and config.requests_per_minute:
        config = config.model_copy(update={"requests_per_minute": config.requests_per_minute / shard_count})
        logger.info("requests_per_minute: %g per shard (%d shards)", config.requests_per_minute, shard_count)
    model = get_model(autorater_model or DEFAULT_AUTORATER_MODEL, config)
    check_verdict_settings(task_def, settings)
    schema = None if settings.verdict_pattern else task_def.judgment_schema
    prompt_keys = set(task_def.required_prompt_parameter_keys) | set(task_def.optional_prompt_parameter_keys)

    judgments: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    # Requests are built lazily while earlier ones are in flight and dropped once answered, so the
    # ~3 KB prompts of a large dataset never sit in memory all at once; outputs arrive in input order.
    queued: collections.deque[tuple[Mapping[str, Any], dict[str, Any], int]] = collections.deque()
    row: list[tuple[ModelRequest, ModelOutput]] = []

    def requests() -> Iterator[ModelRequest]:
        for example in examples:
            ids = {c: example[c] for c in id_columns}
            prompt = {k: v for k, v in example.items() if k in prompt_keys}
            if example.get("response_a") is None or example.get("response_b") is None:
                queued.append((example, ids, 0))  # generation failed: nothing to judge
                continue
            built = pairwise.build_requests(
                ids=ids,
                prompt=prompt,
                response_a=example["response_a"],
                response_b=example["response_b"],
                settings=settings,
                render_judge_prompt=task_def.render_judge_prompt,
                response_schema=schema,
            )
            queued.append((example, ids, len(built)))
            yield from built

    def finish_rows() -> None:
        """Write the judgment of every queued row whose outputs have all arrived, in input order."""
        while queued and queued[0][2] == len(row):
            example, ids, count = queued.popleft()
            finish_row(example, ids, count, list(row))
            row.clear()

    def consume(request: ModelRequest, output: ModelOutput) -> None:
        finish_rows()  # rows without requests ahead of this one
        row.append((request, output))
        finish_rows()

    def finish_row(
        example: Mapping[str, Any],
        ids: dict[str, Any],
        count: int,
        answered: list[tuple[ModelRequest, ModelOutput]],
    ) -> None:
        row_outputs = [o for _, o in answered]
        samples = [pairwise.to_sample(r, o, settings, task_def.score_scale) for r, o in answered]
        choice, confidence, explanation = pairwise.combine_samples(samples)
        scores = scoring.mean_scores(samples) if task_def.pointwise else {}
        if not count:
            reasons = {
                s: example.get(f"inference_error_{s}") or "no response"
                for s in ("a", "b")
                if example.get(f"response_{s}") is None
            }
            explanation = "; ".join(f"model {s.upper()}: {r}" for s, r in reasons.items())
            errors.extend(
                {
                    **ids,
                    "stage": "inference",
                    "model": s,
                    "sample_index": None,
                    "flipped": None,
                    "error": r,
                    "row_judged": False,
                }
                for s, r in reasons.items()
            )
        usage = pairwise.total_usage(row_outputs)
        complete, incomplete_reason = pairwise.row_completeness(samples) if count else (False, explanation)
        judgments.append(
            {
                **example,
                "choice": choice,
                "confidence": confidence,
                "explanation": explanation,
                "complete": complete,
                "incomplete_reason": incomplete_reason,
                **scores,
                "samples": [s.to_dict() for s in samples],
                "input_token_count": usage.input_tokens,
                "output_token_count": usage.output_tokens,
            }
        )
        for sample in samples:
            if sample.error:
                errors.append(
                    {
                        **ids,
                        "stage": "judge",
                        "sample_index": sample.sample_index,
                        "flipped": sample.flipped,
                        "error": sample.error,
                        "row_judged": choice != "ERROR",
                        "row_complete": complete,
                    }
                )

    stopped: ModelCallError | None = None
    try:
        model.generate_each(
            requests(),
            consume,
            desc="judging",
            total=len(examples) * settings.sampling_count,
            reask=pairwise.unparseable_check(settings, config.temperature, task_def.score_scale),
        )
    except ModelCallError as exc:
        if exc.interrupted:
            raise
        stopped = exc  # every request was answered (not called = ERROR with the reason): write them all
    finish_rows()  # trailing rows without requests
    if judgments_path:
        io.write_jsonl(judgments_path, judgments)
    if error_messages_path:
        io.write_jsonl(error_messages_path, errors)
    stats = model.stats
    summary = JudgeSummary(
        evaluation_count=len(judgments),
        error_count=sum(j["choice"] == "ERROR" for j in judgments),
        model_calls=stats.calls,
        cache_hits=stats.cache_hits,
        retries=stats.retries,
        input_tokens=stats.usage.input_tokens,
        output_tokens=stats.usage.output_tokens,
        not_called_count=sum(_not_called(j) for j in judgments),
        stopped=str(stopped or ""),
    )
    logger.info("judged %d examples: %s", len(judgments), summary)
    if stopped is not None:
        logger.error(
            "model calls stopped early: %s (%d rows not judged; judgments written)", stopped, summary.not_called_count
        )
        if strict_mode(autorater_parameters):
            raise stopped
    return judgments, errors, summary


def _not_called(judgment: Mapping[str, Any]) -> bool:
    """True for an ERROR row some of whose samples were never called (the run stopped first)."""
    return judgment.get("choice") == "ERROR" and any(
        str(s.get("error") or "").startswith(f"{ErrorKind.BUDGET.value}:") for s in judgment.get("samples") or []
    )


def aggregate_judgments(
    *,
    judgments: Sequence[Mapping[str, Any]],
    human_preference_column: str = "",
    metrics_path: str | None = None,
) -> dict[str, Any]:
    """Compute AutoSxS metrics (see :func:`metrics.pairwise_metrics`) and optionally write them as JSON."""
    result = pairwise_metrics(judgments, human_preference_column=human_preference_column or None)
    if metrics_path:
        io.write_json(metrics_path, result)
    return result


class ExportResult(NamedTuple):
    """Where :func:`export_judgments` put the judgments."""

    path: str
    """The file written (JSONL for ``jsonl`` and ``bigquery``, a JSON array for ``json``)."""
    bigquery_table: str
    """``bq://project.dataset.table`` of the new table for ``bigquery``; empty otherwise."""


def export_judgments(
    *,
    judgments: Sequence[Mapping[str, Any]],
    judgments_format: str,
    destination: str,
    bigquery_destination_prefix: str = "",
    project: str = "",
    bigquery_api_endpoint: str | None = None,
) -> ExportResult:
    """Write the judgments in ``judgments_format`` and return where they are.

    ``bigquery`` loads every judgment row into a new table and also writes ``destination`` as JSONL. The table
    is ``<project>.<dataset>.[<table_prefix>_]judgments_<YYYYMMDD_HHMMSS>_<6 hex>`` (UTC time of the export;
    see :func:`io.judgments_table`); each export creates its own table in one load job (all rows or none) and
    never appends to or overwrites a table. The dataset must exist. Columns: every key of the judgment rows,
    in row order; computed columns have fixed types (:data:`JUDGMENTS_BIGQUERY_FIELDS`, ``samples`` is a
    REPEATED RECORD), the others are typed from their values (see :func:`io.infer_schema`).

    Args:
        judgments: Judgment rows.
        judgments_format: ``jsonl`` (one object per line), ``json`` (one array) or ``bigquery``.
        destination: File path (or ``gs://`` URI) for the export.
        bigquery_destination_prefix: ``project.dataset`` or ``project.dataset.table_prefix``; required for
            ``bigquery``, ignored otherwise.
        project: Project that runs (and pays for) the BigQuery load job; empty = the destination's project.
        bigquery_api_endpoint: BigQuery endpoint override; None = ``$BIGQUERY_EMULATOR_HOST`` or Google's.

    Returns:
        The file written and, for ``bigquery``, the table.

    Raises:
        InputError: an unsupported format, a missing or invalid ``bigquery_destination_prefix``, an invalid
            column name, a missing dataset, or a rejected load.
    """
    fmt = _check_format(judgments_format)
    rows = [io.to_jsonable(dict(j)) for j in judgments]
    table = io.judgments_table(bigquery_destination_prefix) if fmt == "bigquery" else None
    if fmt == "json":
        io.write_json(destination, rows)
    else:
        io.write_jsonl(destination, rows)
    if table is None:
        return ExportResult(destination, "")
    schema = io.infer_schema(rows, JUDGMENTS_BIGQUERY_FIELDS)
    count = io.load_rows_to_new_table(
        rows,
        table,
        schema,
        project=project,
        api_endpoint=bigquery_api_endpoint,
        description=f"AutoSxS judgments ({len(rows)} rows) written by autorater-pipelines",
    )
    logger.info("loaded %d judgments into %s", count, table.uri)
    return ExportResult(destination, table.uri)
