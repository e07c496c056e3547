"""The one check of an AutoSxS run: :func:`validate_run`, before any model call.

Used by ``autorater run`` (before the run), ``autorater submit`` (dry run or not) and the pipeline's first step
(:func:`autorater_pipelines.autosxs.steps.prepare_run`); later steps parse their parameters with the parameter
model (:mod:`autorater_pipelines.autosxs.params`) again (cheap: no data read, no model built twice) and trust them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from autorater_pipelines import io
from autorater_pipelines.autosxs import prepare
from autorater_pipelines.autosxs.params import (
    SOURCE,
    Autorater,
    AutoraterParameters,
    AutosxsParams,
    check_judgments_format,
)
from autorater_pipelines.autosxs.sides import MODEL_OUTPUT_FIELDS
from autorater_pipelines.evaluation.parameters import ValidatedRun
from autorater_pipelines.pairwise import tasks
from autorater_pipelines.pairwise.settings import JudgeSettings, check_verdict_settings

__all__ = [
    "ValidatedRun",
    "check_run_parameters",
    "check_verdict_settings",
    "split_autorater_parameters",
    "strict_mode",
    "validate_run",
]

_SRC = SOURCE


def validate_run(
    params: Mapping[str, Any] | AutosxsParams,
    *,
    readable: Callable[[str], bool] | None = None,
    project: str = "",
    probe_endpoint: bool = False,
    dataset: Any = None,
    examples_path: str | None = None,
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
        examples_path: Stream the prepared examples to this JSONL file instead of returning them
            (:func:`~autorater_pipelines.autosxs.prepare.write_examples`: memory bounded by one row; ``rows`` is
            None and ``row_count`` their number). Ignored with ``dataset``.

    Returns:
        The converted parameters, the prepared examples (``rows``) when the dataset was read (and not streamed),
        notes, and ``row_count``.

    Raises:
        InputError: the first problem found, naming the parameter (and file, row and column for data).
    """
    run = AutosxsParams.parse(params, source="parameters")
    notes: list[str] = []
    task = prepare.check_prompt_setup(run, readable=readable)
    notes.extend(task.unread_notes())
    check_verdict_settings(task, run.autorater_parameters)
    stages: list[Autorater] = [*run.jurors(project)] or [run.autorater(project)]  # a panel's jurors judge instead
    for autorater in stages:
        autorater.check(readable=readable, notes=notes)
        if probe_endpoint:
            autorater.probe()
    if run.judgments_format == "bigquery":
        io.parse_destination_prefix(run.bigquery_destination_prefix)
    sources = [] if dataset is not None else _sources(run.evaluation_dataset)
    unread = [p for p in sources if readable is not None and not readable(p)]
    if unread:  # not read from here: still refused now if malformed, with the message a run gives
        io.check_sources(run.evaluation_dataset)
    examples, count, generated = None, None, None
    if not unread and examples_path and dataset is None:
        count, generated = prepare.write_examples(run, task, examples_path)
    elif not unread:
        examples = prepare.build_examples(run, task, dataset)
        count = len(examples)
    for side in generated if generated is not None else _generating_sides(run, examples):
        stage = run.response_model(side, project)
        stage.check(readable=readable, notes=notes)
        if probe_endpoint:
            stage.probe()
    if unread:
        notes.append(
            f"evaluation_dataset {', '.join(unread)} not read from here: its columns and ids are checked by the "
            "pipeline's first step"
        )
    return ValidatedRun(run, examples, notes, count)


def _generating_sides(run: AutosxsParams, examples: list[dict[str, Any]] | None) -> list[str]:
    """The sides whose responses are generated: known from the prepared examples, else from the parameters."""
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


def split_autorater_parameters(params: Mapping[str, Any] | None) -> tuple[JudgeSettings, dict[str, Any]]:
    """Split ``autorater_parameters`` into judging settings and the model-call settings the user set.

    Raises:
        InputError: an unknown key (the message lists the valid ones) or a bad value.
    """
    options = AutoraterParameters.parse(params, source=_SRC)
    return options, options.settings()


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
    autorater = Autorater.of(autorater_model, autorater_parameters, project=project, location=location)
    if task is not None:
        check_verdict_settings(tasks.get_task(task, dict(experimental_args or {})), autorater.options)
    if check_judgments_format(judgments_format) == "bigquery":
        io.parse_destination_prefix(bigquery_destination_prefix)
    autorater.check()
