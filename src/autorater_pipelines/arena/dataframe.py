"""The arena on a pandas DataFrame, from a notebook: the pipeline's steps in-process, no Kubeflow Pipelines.

::

    from autorater_pipelines import arena
    leaderboard, judgments, metrics = arena.evaluate(
        df,
        task="question_answering@001",
        autorater_prompt_parameters={"inference_instruction": {"column": "question"}},
        response_columns={"tuned-v1": "answer_v1", "tuned-v2": "answer_v2", "base": "answer_base"},
    )

It checks the whole run first with the pipeline's :func:`~autorater_pipelines.arena.preflight.validate_run` (the
same parameter model, the judge model, every row), so a bad parameter is refused before the first model call; then
it generates the responses of ``models`` with the pipeline's generation stage
(:func:`~autorater_pipelines.arena.candidates.generate_candidates`), judges the pair examples with the judge stage
the pipeline's judging step runs (:func:`~autorater_pipelines.pairwise.judge.judge_shard`), through the same
model-call layer (cache, retries, rate limits), and fits the leaderboard with the pipeline's ranking step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from autorater_pipelines import io
from autorater_pipelines.arena.candidates import generate_candidates
from autorater_pipelines.arena.leaderboard import leaderboard_from_judgments
from autorater_pipelines.arena.preflight import validate_run
from autorater_pipelines.evaluation.notebook import frame_rows, outside_event_loop
from autorater_pipelines.pairwise import panel, tasks
from autorater_pipelines.pairwise.judge import judge_shard
from autorater_pipelines.pairwise.stages import Autorater

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["evaluate"]

_WHERE = "the DataFrame"


@outside_event_loop
def evaluate(
    df: pd.DataFrame,
    *,
    task: str,
    autorater_prompt_parameters: Mapping[str, Any],
    response_columns: Mapping[str, str] | None = None,
    id_columns: Sequence[str] | None = None,
    progress: bool = True,
    **parameters: Any,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """Judge the pairs of ``df``'s models and fit the leaderboard, as the ``arena`` pipeline does.

    Args:
        df: One row per prompt, with every model's response in its column.
        task: The judge's task (as the pipeline's ``task``).
        autorater_prompt_parameters: ``{param: {"column": c} | {"template": "…{{ c }}…"}}``.
        response_columns: Model name → column of its responses (2 or more models with ``models``).
        id_columns: Columns identifying each prompt (replay keys); None = the DataFrame index.
        progress: Show the judging progress bar (unless ``autorater_parameters`` says otherwise).
        **parameters: Any other parameter of the pipeline, by its name: ``models`` (model name → the model
            generating its responses), ``pairing``, ``baseline``, ``opponents_per_prompt``, ``seed``,
            ``bootstrap_rounds``, ``style_control``, ``ties``, ``strong_verdict_weight``, ``autorater_model``,
            ``autorater_parameters``, ``autorater_panel``, ``panel_vote``, ``experimental_args``, ``project``,
            ``location``.

    Returns:
        ``(leaderboard, judgments, metrics)``: the leaderboard (one row per model, best first), the judgments (one
        row per judged pair and prompt; the error rows in ``judgments.attrs["error_messages"]``) and the metrics
        of ``metrics.json``.

    Raises:
        InputError: bad parameters or data (naming the DataFrame row and column); nothing has been called.
        ModelCallError: judging stopped after too many consecutive failed calls (with ``strict``).
    """
    import pandas as pd

    frame = frame_rows(df, id_columns=id_columns)
    judge = dict(parameters.pop("autorater_parameters", None) or {})
    judge.setdefault("progress", progress)
    labels = list(df.index)
    by_index = all(isinstance(label, int) for label in labels)
    locations = [(_WHERE, int(label) if by_index else position) for position, label in enumerate(labels)]
    dataset = io.Dataset(frame.rows, locations, source_name=_WHERE, units={_WHERE: "index" if by_index else "position"})
    params = {
        "evaluation_dataset": _WHERE,
        "task": task,
        "id_columns": frame.id_columns,
        "autorater_prompt_parameters": autorater_prompt_parameters,
        "response_columns": dict(response_columns or {}),
        "autorater_parameters": judge,
        **parameters,
    }
    run = validate_run(params, probe_endpoint=True, dataset=dataset)
    autorater = Autorater.of(
        run.params.autorater_model,
        run.params.autorater_parameters,
        project=run.params.project,
        location=run.params.location,
    )
    generate_candidates(
        run.rows or [],
        run.params.models,
        run.params.id_columns,
        project=run.params.project,
        location=run.params.location,
    )
    task_def = tasks.get_task(run.params.task, dict(run.params.experimental_args or {}))
    if run.params.autorater_panel:  # a panel of judges votes instead of one judge
        jurors = panel.panel_jurors(run.params.autorater_panel, autorater)
        judgments, errors, _ = panel.judge_panel_shard(
            run.rows or [], jurors, task_def, run.params.pair_id_columns, panel_vote=run.params.panel_vote
        )
    else:
        judgments, errors, _ = judge_shard(run.rows or [], autorater, task_def, run.params.pair_id_columns)
    leaderboard, metrics = leaderboard_from_judgments(judgments, run.params.id_columns, run.params.ranking())
    table = pd.DataFrame(judgments)
    table.attrs["error_messages"] = errors
    return pd.DataFrame(leaderboard), table, metrics
