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

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from autorater_pipelines import io, pairwise, prompts, tasks
from autorater_pipelines.errors import InputError
from autorater_pipelines.metrics import pairwise_metrics
from autorater_pipelines.models import GenerateConfig, get_model, parse_model_spec

__all__ = [
    "DEFAULT_AUTORATER_MODEL",
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

JUDGMENTS_FORMATS = ("jsonl", "json")


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
    evaluation_dataset: str,
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
        evaluation_dataset: Comma-separated files (JSONL, JSON, CSV, Parquet); see :func:`io.read_dataset`.
        task: ``summarization@001``, ``question_answering@latest``, ``custom@…`` (see :mod:`tasks`).
        id_columns: Columns that identify an example; their values must be unique.
        autorater_prompt_parameters: ``{param: {"column": c} | {"template": "…{{ c }}…"}}``.
        response_column_a: Column holding model A's responses. When it is empty or not a column of
            the dataset and ``model_a`` is set, model A's responses are generated later (the
            prepared example then holds ``model_a_prompt`` and ``response_a`` = None).
        response_column_b: As ``response_column_a``, for model B.
        human_preference_column: Optional column of human labels (A/B/TIE, model_a/model_b).
        model_a: Model A spec used to generate responses (see :mod:`autorater_pipelines.inference`).
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
        if not column and not model:
            raise InputError(
                f"response_column_{side} and model_{side} are both empty; name the dataset column holding "
                f"model {side.upper()}'s responses, or set model_{side} and model_{side}_prompt_parameters "
                "to generate them",
                source=f"response_column_{side}",
            )
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

    dataset = io.read_dataset(evaluation_dataset)
    generate = {side: bool(model) and column not in dataset.columns for side, (column, model, _) in sides.items()}
    model_prompts = {
        side: _compile_model_prompt(sides[side][2], side, dataset.columns) for side in sides if generate[side]
    }
    columns = {f"response_column_{side}": sides[side][0] for side in sides if not generate[side]}
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
        for side, prompt in model_prompts.items():
            example[f"model_{side}_prompt"] = prompt.render(row, location=where)["prompt"]
            example[f"response_{side}"] = None
        for side in (s for s in sides if not generate[s]):
            column = sides[side][0]
            value = row.get(column)
            if value is None or (isinstance(value, float) and value != value):
                raise InputError(
                    f"model {side.upper()}'s response is empty; every row needs a response",
                    source=where,
                    column=column,
                )
            example[f"response_{side}"] = value if isinstance(value, str) else str(value)
        if human_preference_column:
            example[human_preference_column] = pairwise.normalize_preference(
                row.get(human_preference_column), column=human_preference_column, location=where
            )
        examples.append(example)
    if output_path:
        io.write_jsonl(output_path, examples)
    logger.info("prepared %d examples from %s", len(examples), evaluation_dataset)
    return examples


def _compile_model_prompt(
    parameters: Mapping[str, Any] | None, side: str, columns: Sequence[str]
) -> prompts.PromptParameters:
    source = f"model_{side}_prompt_parameters"
    if not isinstance(parameters, Mapping) or set(parameters) != {"prompt"}:
        raise InputError(
            f"to generate model {side.upper()}'s responses, set exactly one prompt parameter named 'prompt', "
            f'e.g. {{"prompt": {{"column": "question"}}}}; got {parameters!r}',
            source=source,
        )
    return prompts.compile_prompt_parameters(dict(parameters), available_columns=columns, source_name=source)


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


def split_autorater_parameters(params: Mapping[str, Any] | None) -> tuple[pairwise.JudgeSettings, dict[str, Any]]:
    """Split ``autorater_parameters`` into judging settings and model-call settings.

    Raises:
        InputError: an unknown key (the message lists the valid ones) or a bad value.
    """
    params = dict(params or {})
    valid = set(pairwise.judge_parameter_keys()) | set(GenerateConfig.model_fields)
    unknown = sorted(set(params) - valid)
    if unknown:
        raise InputError(f"unknown keys {unknown}; valid keys: {sorted(valid)}", source="autorater_parameters")
    settings = pairwise.JudgeSettings.from_params(params)
    model_params = {k: v for k, v in params.items() if k not in pairwise.judge_parameter_keys()}
    return settings, model_params


def check_run_parameters(
    autorater_model: str = "",
    autorater_parameters: Mapping[str, Any] | None = None,
    judgments_format: str = "jsonl",
) -> None:
    """Validate run parameters that are only used after judging starts, so typos fail first.

    Raises:
        InputError: an unknown or invalid autorater parameter, a malformed model spec, or an
            unsupported ``judgments_format``.
    """
    _, model_params = split_autorater_parameters(autorater_parameters)
    GenerateConfig.from_params(model_params, source="autorater_parameters")
    parse_model_spec(autorater_model or DEFAULT_AUTORATER_MODEL)
    _check_format(judgments_format)


def _check_format(judgments_format: str) -> str:
    fmt = (judgments_format or "jsonl").lower()
    if fmt not in JUDGMENTS_FORMATS:
        raise InputError(
            f"unsupported judgments_format {judgments_format!r}; valid: {list(JUDGMENTS_FORMATS)}"
            + (" (bigquery export is not available yet)" if fmt == "bigquery" else ""),
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
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], JudgeSummary]:
    """Judge prepared examples with the autorater and vote over samples.

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

    Returns:
        ``(judgments, error_messages, summary)``: one judgment per example in input order.

    Raises:
        InputError: bad parameters.
        ModelCallError: the run stopped after too many consecutive failed calls.
    """
    id_columns = _validate_id_columns(id_columns)
    task_def = tasks.get_task(task, dict(experimental_args or {}))
    settings, model_params = split_autorater_parameters(autorater_parameters)
    config = GenerateConfig.from_params(
        model_params, source="autorater_parameters", project=project or None, location=location or None
    )
    model = get_model(autorater_model or DEFAULT_AUTORATER_MODEL, config)
    schema = None if settings.verdict_pattern else tasks.JUDGMENT_SCHEMA
    prompt_keys = set(task_def.required_prompt_parameter_keys) | set(task_def.optional_prompt_parameter_keys)

    per_example = []
    all_requests = []
    for example in examples:
        ids = {c: example[c] for c in id_columns}
        prompt = {k: v for k, v in example.items() if k in prompt_keys}
        if example.get("response_a") is None or example.get("response_b") is None:
            per_example.append((ids, len(all_requests), 0))  # generation failed: nothing to judge
            continue
        requests = pairwise.build_requests(
            ids=ids,
            prompt=prompt,
            response_a=example["response_a"],
            response_b=example["response_b"],
            settings=settings,
            render_judge_prompt=task_def.render_judge_prompt,
            response_schema=schema,
        )
        per_example.append((ids, len(all_requests), len(requests)))
        all_requests.extend(requests)
    outputs = model.generate(all_requests, desc="judging")

    judgments, errors = [], []
    for example, (ids, start, count) in zip(examples, per_example, strict=True):
        requests = all_requests[start : start + count]
        row_outputs = outputs[start : start + count]
        samples = [pairwise.to_sample(r, o, settings) for r, o in zip(requests, row_outputs, strict=True)]
        choice, confidence, explanation = pairwise.combine_samples(samples)
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
        judgments.append(
            {
                **example,
                "choice": choice,
                "confidence": confidence,
                "explanation": explanation,
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
                    }
                )
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
    )
    logger.info("judged %d examples: %s", len(judgments), summary)
    return judgments, errors, summary


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


def export_judgments(
    *,
    judgments: Sequence[Mapping[str, Any]],
    judgments_format: str,
    destination: str,
    bigquery_destination_prefix: str = "",
) -> str:
    """Write the judgments in ``judgments_format`` and return where they are.

    Args:
        judgments: Judgment rows.
        judgments_format: ``jsonl`` (one object per line) or ``json`` (one array).
        destination: File path for the export.
        bigquery_destination_prefix: Reserved for ``bigquery`` export.

    Raises:
        InputError: an unsupported format.
    """
    if _check_format(judgments_format) == "jsonl":
        io.write_jsonl(destination, list(judgments))
    else:
        io.write_json(destination, list(judgments))
    return destination
