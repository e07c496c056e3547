"""AutoSxS on a pandas DataFrame, from a notebook: the pipeline's steps in-process, no Kubeflow Pipelines.

::

    from autorater_pipelines import autosxs

    judgments, metrics = autosxs.evaluate(
        df,
        task="question_answering@001",
        autorater_prompt_parameters={"inference_instruction": {"column": "question"}},
        response_column_a="answer_a",
        response_column_b="answer_b",
    )
    metrics["autorater_model_a_win_rate"]

It checks the whole run first with the pipeline's :func:`~autorater_pipelines.autosxs.validate_run` (every
parameter, ``model_a_parameters``/``model_b_parameters`` included, the models and an explicit ``base_url``, the
rows), so a bad parameter is refused before the first model call; then it calls the same step functions as the
``autosxs`` pipeline (:func:`~autorater_pipelines.autosxs.inference.generate_missing`,
:func:`~autorater_pipelines.autosxs.judge_examples`: one judge, or a panel's jurors with ``autorater_panel``,
:func:`~autorater_pipelines.autosxs.aggregate_judgments`) through the same model-call layer (cache, retries,
rate limits, a tqdm progress bar), takes the pipeline's parameters by the same names, and works inside
Jupyter's running event loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from autorater_pipelines import io
from autorater_pipelines.autosxs import export, inference, steps
from autorater_pipelines.autosxs.preflight import validate_run
from autorater_pipelines.evaluation.notebook import frame_rows, outside_event_loop

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["evaluate"]

_WHERE = "the DataFrame"


def _with_progress(parameters: Mapping[str, Any] | None, progress: bool) -> dict[str, Any] | None:
    if parameters is None and progress:
        return None
    out = dict(parameters or {})
    out.setdefault("progress", progress)
    return out


def _dataset(df: pd.DataFrame, rows: list[dict[str, Any]]) -> io.Dataset:
    """The rows as a dataset whose locations name the DataFrame index (or the position, for other indexes)."""
    labels = list(df.index)
    if all(isinstance(label, int) for label in labels):
        locations, unit = [(_WHERE, int(label)) for label in labels], "index"
    else:
        locations, unit = [(_WHERE, position) for position in range(len(labels))], "position"
    return io.Dataset(rows, locations, source_name=_WHERE, units={_WHERE: unit})


@outside_event_loop
def evaluate(
    df: pd.DataFrame,
    *,
    task: str,
    autorater_prompt_parameters: Mapping[str, Any],
    response_column_a: str = "",
    response_column_b: str = "",
    id_columns: Sequence[str] | None = None,
    human_preference_column: str = "",
    model_a: str = "",
    model_b: str = "",
    model_a_prompt_parameters: Mapping[str, Any] | None = None,
    model_b_prompt_parameters: Mapping[str, Any] | None = None,
    model_a_parameters: Mapping[str, Any] | None = None,
    model_b_parameters: Mapping[str, Any] | None = None,
    autorater_model: str = "",
    autorater_parameters: Mapping[str, Any] | None = None,
    autorater_panel: Sequence[str] | None = None,
    panel_vote: str = "",
    experimental_args: Mapping[str, Any] | None = None,
    project: str = "",
    location: str = "",
    progress: bool = True,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Judge every pair of responses in ``df`` and compute the AutoSxS metrics, as the ``autosxs`` pipeline does.

    Args:
        df: One row per example: prompt columns, the two responses (or model specs to generate them), an
            optional human preference column.
        task: ``summarization@001``, ``question_answering@001``, ``custom@…`` (as the pipeline's ``task``).
        autorater_prompt_parameters: ``{param: {"column": c} | {"template": "…{{ c }}…"}}``.
        response_column_a: Column with model A's responses (empty: generate them with ``model_a``).
        response_column_b: Column with model B's responses (empty: generate them with ``model_b``).
        id_columns: Columns identifying each row (replay keys); None = the DataFrame index (column ``index`` or
            the index's name). A string is one column.
        human_preference_column: Column of human labels (``A``/``B``/``TIE``), for alignment metrics.
        model_a: Model A spec, to generate its responses.
        model_b: Model B spec, to generate its responses.
        model_a_prompt_parameters: ``{"prompt": {"column": c} | {"template": …}}`` for model A.
        model_b_prompt_parameters: As ``model_a_prompt_parameters``, for model B.
        model_a_parameters: Generation settings of model A (``temperature``, ``base_url`` …).
        model_b_parameters: Generation settings of model B.
        autorater_model: Judge model spec; empty = the pipeline's default Gemini model.
        autorater_parameters: ``sampling_count``, ``flip``, ``verdict_pattern``/``verdict_map`` and model settings.
        autorater_panel: A panel of judges: two or more model specs (jurors) judging instead of
            ``autorater_model``, each with ``autorater_parameters``; the panel votes over their row verdicts
            (docs/autosxs.md). None or empty = one judge.
        panel_vote: How the panel votes: ``majority`` (default) or ``mean``.
        experimental_args: May hold ``custom_task_definition``.
        project: Google Cloud project of Vertex AI calls.
        location: Google Cloud region of Vertex AI calls.
        progress: Show the judging progress bar (unless ``autorater_parameters`` says otherwise).

    Returns:
        ``(judgments, metrics)``: one judgment row per input row, with the input index, as the pipeline writes
        ``judgments.jsonl`` (``choice``, ``confidence``, ``explanation``, ``samples`` …; the error rows of
        ``error_messages.jsonl`` in ``judgments.attrs["error_messages"]``), and the metrics of ``metrics.json``
        (win rates with intervals, position consistency, alignment with human labels; with a panel also
        ``jurors`` and ``juror_agreement``). With a panel, each judgment row also has ``jurors``, ``panel_vote``
        and ``panel_preference_a``.

    Raises:
        InputError: bad parameters or data (naming the DataFrame row and column), or an explicit ``base_url`` where
            nothing answers; nothing has been called.
        ModelCallError: judging stopped after too many consecutive failed calls.

    """
    import pandas as pd

    frame = frame_rows(df, id_columns=id_columns)
    judge_parameters = _with_progress(autorater_parameters, progress)
    dataset = _dataset(df, frame.rows)
    params = {
        "evaluation_dataset": dataset.source_name,
        "task": task,
        "id_columns": frame.id_columns,
        "autorater_prompt_parameters": autorater_prompt_parameters,
        "response_column_a": response_column_a,
        "response_column_b": response_column_b,
        "human_preference_column": human_preference_column,
        "model_a": model_a,
        "model_b": model_b,
        "model_a_prompt_parameters": model_a_prompt_parameters,
        "model_b_prompt_parameters": model_b_prompt_parameters,
        "model_a_parameters": model_a_parameters,
        "model_b_parameters": model_b_parameters,
        "autorater_model": autorater_model,
        "autorater_parameters": judge_parameters,
        "autorater_panel": list(autorater_panel or []),
        "panel_vote": panel_vote,
        "experimental_args": experimental_args,
        "project": project,
        "location": location,
    }
    # the pipeline's one check of a run, before any model call: every parameter, the models, the rows
    run = validate_run(params, probe_endpoint=True, dataset=dataset)
    examples, checked = run.rows or [], run.params
    stages = [checked.response_model(side) for side in ("a", "b")]
    inference.generate_missing(examples, stages, checked.id_columns)
    # the pipeline's judging step: one judge, or every juror of a panel and the panel's vote
    judgments, errors, _ = steps.judge_examples(
        examples=examples,
        task=checked.task,
        id_columns=checked.id_columns,
        autorater_model=checked.autorater_model,
        autorater_parameters=checked.autorater_parameters,
        project=checked.project,
        location=checked.location,
        experimental_args=checked.experimental_args,
        autorater_panel=checked.autorater_panel,
        panel_vote=checked.panel_vote,
    )
    metrics = export.aggregate_judgments(judgments=judgments, human_preference_column=human_preference_column)
    records = [{k: v for k, v in j.items() if k != frame.index_column} for j in judgments]
    result = pd.DataFrame.from_records(records, index=df.index)
    result.attrs["error_messages"] = errors
    return result, metrics
