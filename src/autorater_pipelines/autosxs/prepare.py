"""The AutoSxS prepare stage: validate the dataset and render the autorater prompt parameters of every row.

Prepared example (one JSONL line per dataset row): id columns, every rendered autorater prompt parameter
(e.g. ``inference_instruction``, ``inference_context``), ``response_a``, ``response_b`` and, when
``human_preference_column`` is set, that column normalized to ``A``/``B``/``TIE``; with ``flip: "random"`` or
``flip_column``, ``flipped``, the row's order (:mod:`~autorater_pipelines.pairwise.order`). For a side whose responses
are generated, ``model_<side>_prompt`` (the rendered prompt) and ``response_<side>`` = None.

Validation is complete before anything is written: ids present and unique, every referenced column present,
every template renders for every row, every human label valid. Nothing is written when any row is bad.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from autorater_pipelines import io
from autorater_pipelines.autosxs import sides as model_sides
from autorater_pipelines.autosxs.params import AutosxsParams
from autorater_pipelines.errors import InputError
from autorater_pipelines.pairwise import order, tasks
from autorater_pipelines.pairwise import prompt_parameters as prompts
from autorater_pipelines.pairwise.responses import given_response
from autorater_pipelines.pairwise.verdicts import normalize_preference

__all__ = [
    "RESERVED_COLUMNS",
    "PreparedFile",
    "build_examples",
    "check_prompt_setup",
    "prepare_examples",
    "write_examples",
]

logger = logging.getLogger(__name__)

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
        "error_kind",
        "error_message",
        "row_judged",
        "row_complete",
        "complete",
        "incomplete_reason",
        "sample_index",
        "flipped",
        "model",
        "identical_responses",
        "uncalibrated_choice",
        "jurors",
        "panel_vote",
        "panel_preference_a",
    }
)
"""Field names of judgments and error messages: id and human-preference columns may not use them."""


def check_prompt_setup(run: AutosxsParams, *, readable: Callable[[str], bool] | None = None) -> tasks.TaskDefinition:
    """Check the task, the response sources and the autorater prompt parameters (no evaluation data read).

    ``readable`` says which files and URIs a custom task's few-shot dataset may be read from (None = all).

    Returns:
        The task definition.

    Raises:
        InputError: an unknown task, a side with neither response column nor model, a missing or unknown
            prompt parameter, an id or label column named like an output field.
    """
    task_def = tasks.get_task(run.task, dict(run.experimental_args), readable=readable)
    for side in ("a", "b"):
        model_sides.require_source(side, getattr(run, f"response_column_{side}"), getattr(run, f"model_{side}"))
    given = run.autorater_prompt_parameters
    tasks.check_prompt_parameters(task_def, run.task, given)
    _check_reserved_names(run.id_columns, run.human_preference_column, given)
    return task_def


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


class PreparedFile(NamedTuple):
    """What :func:`write_examples` wrote."""

    example_count: int
    """Prepared examples written (one per dataset row)."""
    generated_sides: list[str]
    """The sides (``a``/``b``) whose responses are to be generated (their examples have ``model_<side>_prompt``)."""


def _sources(run: AutosxsParams, task_def: tasks.TaskDefinition, columns: list[str]) -> list[model_sides.SideSource]:
    return [
        model_sides.resolve_side(
            side,
            response_column=getattr(run, f"response_column_{side}"),
            model=getattr(run, f"model_{side}"),
            prompt_parameters=getattr(run, f"model_{side}_prompt_parameters"),
            columns=columns,
            template_variables=task_def.template_variables,
        )
        for side in ("a", "b")
    ]


def _require_columns(run: AutosxsParams, ds: Any, sources: list[model_sides.SideSource]) -> None:
    columns = {f"response_column_{s.side}": s.column for s in sources if s.column is not None}
    if run.human_preference_column:
        columns["human_preference_column"] = run.human_preference_column
    if run.autorater_parameters.flip_column is not None:
        columns["autorater_parameters.flip_column"] = run.autorater_parameters.flip_column
    io.require_columns(ds, columns)


def _compile(run: AutosxsParams, task_def: tasks.TaskDefinition, columns: list[str]) -> prompts.PromptParameters:
    return prompts.compile_prompt_parameters(
        dict(run.autorater_prompt_parameters),
        available_columns=columns,
        source_name="autorater_prompt_parameters",
        extra_variables=task_def.template_variables,
    )


def _example(
    run: AutosxsParams,
    compiled: prompts.PromptParameters,
    sources: list[model_sides.SideSource],
    row: Mapping[str, Any],
    where: str,
) -> dict[str, Any]:
    """One prepared example (module docstring) from one dataset row read at ``where``."""
    example: dict[str, Any] = {c: row[c] for c in run.id_columns}
    example.update(compiled.render(row, location=where))
    for source in sources:
        if source.column is None:
            example.update(source.render_prompt(row, location=where))
            example[f"response_{source.side}"] = None
        else:
            example[f"response_{source.side}"] = given_response(
                row.get(source.column),
                subject=f"model {source.side.upper()}",
                parameter=f"response_column_{source.side}",
                column=source.column,
                where=where,
                empty="every row needs a response",
            )
    if run.human_preference_column:
        example[run.human_preference_column] = normalize_preference(
            row.get(run.human_preference_column), column=run.human_preference_column, location=where
        )
    return example


def build_examples(
    run: AutosxsParams, task_def: tasks.TaskDefinition, dataset: io.Dataset | None = None
) -> list[dict[str, Any]]:
    """Read the dataset (unless given), check its columns and ids, and render every row (module docstring).

    Raises:
        InputError: unreadable data, a missing column, a missing or duplicate id, a template that fails on a row,
            an empty response or one that is not text (an object, a list, a boolean), an invalid human label —
            naming the file, row and column.
    """
    dataset = dataset if dataset is not None else io.read_dataset(run.evaluation_dataset)
    sources = _sources(run, task_def, dataset.columns)
    _require_columns(run, dataset, sources)
    io.check_unique_ids(dataset, run.id_columns)
    compiled = _compile(run, task_def, dataset.columns)
    examples = [
        _example(run, compiled, sources, row, dataset.location(index)) for index, row in enumerate(dataset.rows)
    ]
    judge = run.autorater_parameters
    order.assign_orders(
        examples,
        judge,
        id_columns=run.id_columns,
        seed=judge.settings().get("seed") or 0,
        column_values=[row.get(judge.flip_column) for row in dataset.rows] if judge.flip_column else (),
        locations=[dataset.location(i) for i in range(len(dataset.rows))] if judge.flip_column else (),
    )
    logger.info("prepared %d examples from %s", len(examples), dataset.uri or dataset.source_name)
    return examples


def _orders(run: AutosxsParams, scan: io.DatasetScan) -> tuple[list[Any] | None, InputError | None]:
    """Each row's presentation order when it is fixed per row (:func:`order.assign_orders`, one pass), or None.

    Returns:
        ``(orders, None)``, ``(None, None)`` when the order is not fixed per row, or ``(None, error)``: a bad
        ``flip_column`` value, raised after every row is checked (as :func:`build_examples` raises it).
    """
    judge = run.autorater_parameters
    if judge.flip_column is None and judge.flip != "random":
        return None, None
    slim: list[dict[str, Any]] = []
    values, locations = [], []
    for scanned in scan.rows():
        slim.append({c: scanned.row.get(c) for c in run.id_columns} if judge.flip_column is None else {})
        if judge.flip_column:
            values.append(scanned.row.get(judge.flip_column))
            locations.append(scan.location(scanned.file, scanned.number))
    try:
        order.assign_orders(
            slim,
            judge,
            id_columns=run.id_columns,
            seed=judge.settings().get("seed") or 0,
            column_values=values,
            locations=locations,
        )
    except InputError as exc:
        return None, exc
    return [e.get(order.ORDER_KEY) for e in slim], None


def write_examples(run: AutosxsParams, task_def: tasks.TaskDefinition, output_path: str) -> PreparedFile:
    """:func:`build_examples` streamed: the dataset read in two passes, the examples written as they are rendered.

    Memory is bounded by one row plus the ids seen (~150 bytes a row), not by the dataset. The checks, their
    order and their messages are :func:`build_examples`'s (every id is checked before a template or row error is
    reported), and the file appears only when every row is prepared: nothing is written when any row is bad.
    The first pass (:class:`~autorater_pipelines.io.DatasetScan`) finds the columns and every unreadable line.

    Raises:
        InputError: as :func:`build_examples`.
    """
    scan = io.DatasetScan(run.evaluation_dataset)
    sources = _sources(run, task_def, scan.columns)
    _require_columns(run, scan, sources)
    ids = io.UniqueIds(scan, run.id_columns)
    deferred: InputError | None = None  # the first template or row error, raised once every id is checked
    try:
        compiled = _compile(run, task_def, scan.columns)
    except InputError as exc:
        deferred = exc

    def describe(ref: int) -> str:
        return scan.location(scan.files[ref >> 32], ref & 0xFFFFFFFF)

    orders, order_error = _orders(run, scan)

    with io.JsonlWriter(output_path) as writer:
        for scanned in scan.rows():
            ids.add(scanned.row, scanned.file, scanned.number, scanned.file_index << 32 | scanned.number, describe)
            if deferred is not None:
                continue
            try:
                example = _example(run, compiled, sources, scanned.row, scan.location(scanned.file, scanned.number))
            except InputError as exc:
                deferred = exc
                continue
            if orders is not None:
                example[order.ORDER_KEY] = orders[writer.count]
            writer.write(example)
        if deferred is not None or order_error is not None:
            raise deferred or order_error  # type: ignore[misc]
        count = writer.commit()
    logger.info("prepared %d examples from %s", count, scan.uri or scan.source_name)
    return PreparedFile(count, [s.side for s in sources if s.column is None])


def prepare_examples(
    *, evaluation_dataset: str | io.Dataset, output_path: str | None = None, **params: Any
) -> list[dict[str, Any]]:
    """Load and validate the evaluation dataset and render the autorater prompt parameters (no model checks).

    Args:
        evaluation_dataset: Comma-separated files (JSONL, JSON, CSV, Parquet); see :func:`io.read_dataset`. Or
            rows already read (an :class:`io.Dataset`, as the DataFrame API passes them).
        output_path: Where to write the prepared examples as JSONL (atomically), or None.
        **params: The other pipeline parameters by name, parsed with the parameter model
            (:class:`~autorater_pipelines.autosxs.params.AutosxsParams`, docs/reference/parameters.md): ``task``,
            ``id_columns`` and ``autorater_prompt_parameters`` (required); ``response_column_a``/``_b``,
            ``human_preference_column``, ``model_a``/``model_b``, ``model_a_prompt_parameters``/``_b_…`` and
            ``experimental_args`` are what this stage reads.

    Returns:
        The prepared examples (module docstring).

    Raises:
        InputError: any problem with the parameters or the data, naming file, row and column.
    """
    dataset = evaluation_dataset if isinstance(evaluation_dataset, io.Dataset) else None
    source = (dataset.uri or dataset.source_name) if dataset is not None else evaluation_dataset
    run = AutosxsParams.parse({**params, "evaluation_dataset": source}, source="parameters")
    examples = build_examples(run, check_prompt_setup(run), dataset)
    if output_path:
        io.write_jsonl(output_path, examples)
    return examples
