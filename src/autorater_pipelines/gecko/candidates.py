"""Several candidates on the same rubrics (issue 23 item 3), on a pandas DataFrame.

``evaluate_candidates(df, response_columns={"model_a": "response_a", "model_b": "response_b"}, …)`` gets the
rubrics of each prompt once (supplied in ``rubrics_column``, a ``qas`` column of
:func:`autorater_pipelines.gecko.dataframe.generate_rubrics`, or generated here), then validates and scores every
candidate's column against those same rubrics with :func:`autorater_pipelines.gecko.dataframe.evaluate`. The
validator's requests carry the candidate's name in column ``candidate`` beside the id columns, so replay lines
are keyed by the id columns, ``candidate`` (and ``question_id``).

The metrics hold each candidate's metrics, Vertex AI's ``win_rates`` from the rows' scores (the one highest score
wins a row, an equal highest is a tie; :func:`autorater_pipelines.gecko.vertex_rubrics.win_rates`) and, for each
pair of candidates, which shared rubrics one passes and the other fails
(:func:`autorater_pipelines.gecko.vertex_rubrics.per_rubric_comparison`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from autorater_pipelines.errors import InputError, did_you_mean
from autorater_pipelines.gecko.vertex_rubrics import per_rubric_comparison, win_rates

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CANDIDATE_COLUMN",
    "GENERATED_COLUMN",
    "candidate_rows",
    "check_columns",
    "check_response_columns",
    "check_response_source",
    "compare",
    "evaluate_candidates",
]

CANDIDATE_COLUMN = "candidate"
"""Column naming the candidate of each validator request (a replay key beside the id columns)."""

GENERATED_COLUMN = "response"
"""Column of the responses ``response_model`` generates when ``media_column`` is empty."""


def check_response_columns(response_columns: Any, *, allow_empty: bool = False) -> dict[str, str]:
    """``response_columns`` as ``{candidate name: column}``, both non-empty text.

    Args:
        response_columns: The parameter as received.
        allow_empty: Accept ``{}`` (the pipeline's default: one response column, ``media_column``).

    Raises:
        InputError: not a mapping, empty (unless ``allow_empty``), or an empty name or column, naming
            ``response_columns``.
    """
    example = '{"model_a": "response_a", "model_b": "response_b"}'
    if not isinstance(response_columns, Mapping) or (not response_columns and not allow_empty):
        raise InputError(
            f"response_columns must map each candidate's name to its response column, e.g. {example}, "
            f"got {response_columns!r}",
            source="response_columns",
        )
    bad = {n: c for n, c in response_columns.items() if not str(n).strip() or not isinstance(c, str) or not c.strip()}
    if bad:
        raise InputError(
            f"response_columns needs a non-empty candidate name and column name for each candidate, got {bad!r}; "
            f"e.g. {example}",
            source="response_columns",
        )
    return {str(n): str(c) for n, c in response_columns.items()}


def check_response_source(run: Any) -> str:
    """Where a Gecko run's responses come from: the checked ``media_column`` (pipeline parameter model).

    One of ``media_column`` (one response or media column), ``response_columns`` (several candidates,
    ``media_column`` empty) or ``response_model`` (text generated from ``prompt_column`` into ``media_column``,
    default ``response``).

    Raises:
        InputError: none of them, ``response_columns`` with ``media_column`` or ``response_model``, a
            ``response_model`` without ``media_type`` text or ``prompt_column``, or ``candidate`` among
            ``id_columns``.
    """
    if run.response_columns:
        if run.media_column:
            raise InputError(
                f"set media_column (one response column) or response_columns (one column per candidate), not "
                f"both: got media_column={run.media_column!r} and response_columns={run.response_columns!r}; "
                'leave media_column "" when comparing candidates',
                source="response_columns",
            )
        if run.response_model:
            raise InputError(
                f"response_columns reads each candidate's responses from the data and response_model "
                f"{run.response_model!r} generates them: set one of them",
                source="response_columns",
            )
        if CANDIDATE_COLUMN in run.id_columns:
            raise InputError(
                f"id_columns {run.id_columns!r} holds {CANDIDATE_COLUMN!r}, the column response_columns adds "
                "(each result row names its candidate there); rename that column",
                source="id_columns",
            )
        return str(run.media_column)
    if run.response_model:
        if run.media_type != "text" or not run.prompt_column:
            raise InputError(
                f"response_model {run.response_model!r} generates text responses from the prompts: it needs "
                f'media_type "text" and a prompt_column, got media_type={run.media_type!r}, '
                f"prompt_column={run.prompt_column!r}",
                source="response_model",
            )
        return str(run.media_column or GENERATED_COLUMN)
    if not run.media_column:
        raise InputError(
            "media_column is required (the column with the image/video, or the response text for media_type "
            "text), or response_columns ({candidate name: column}) to compare candidates on the same rubrics, or "
            f"response_model to generate the text responses; got media_column={run.media_column!r}, "
            f"response_columns={run.response_columns!r}",
            source="media_column",
        )
    return str(run.media_column)


def check_columns(response_columns: Mapping[str, str], columns: Any, where: str) -> None:
    """Refuse a ``response_columns`` column ``where`` (the DataFrame, the dataset) lacks, or a ``candidate`` column.

    Raises:
        InputError: naming ``response_columns``, the missing columns and the columns present.
    """
    present = list(columns)
    missing = {n: c for n, c in response_columns.items() if c not in present}
    if missing:
        raise InputError(
            f"response_columns names columns not in {where}: {missing}; columns: {present}."
            + "".join(did_you_mean(c, present) for c in missing.values()),
            source="response_columns",
        )
    if CANDIDATE_COLUMN in present:
        raise InputError(
            f"{where} has a column {CANDIDATE_COLUMN!r}, which response_columns adds (the candidate's name of each "
            "result row and replay key); rename it",
            source="response_columns",
        )


def candidate_rows(rows: Sequence[Mapping[str, Any]], name: str) -> list[dict[str, Any]]:
    """``rows`` with ``candidate`` = ``name`` (the key of the candidate's validator requests and results)."""
    return [{**row, CANDIDATE_COLUMN: name} for row in rows]


def _check(df: pd.DataFrame, response_columns: Any) -> dict[str, str]:
    columns = check_response_columns(response_columns)
    check_columns(columns, df.columns, "the DataFrame")
    return columns


def _score(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def _verdicts(value: Any) -> dict[str, bool | None]:
    if not isinstance(value, list):
        return {}
    return {v["evaluated_rubric"]["rubric_id"]: v["verdict"] for v in value}


def compare(
    results: Mapping[str, Sequence[Mapping[str, Any] | None]], labels: Sequence[str] | None = None
) -> dict[str, Any]:
    """Vertex AI's ``win_rates`` and the per-rubric comparison of candidates' result rows, aligned by prompt.

    Args:
        results: ``{candidate: [result row or None, ...]}``, the i-th row of every candidate for the same prompt
            (None or a row without ``score`` = not scored there).
        labels: How each prompt is named in the rubric lists (default ``row <i>``).

    Returns:
        ``{"win_rates": …, "per_rubric_comparison": {"<a> vs <b>": …}}`` for every pair of candidates, in
        ``results`` order (:func:`~autorater_pipelines.gecko.vertex_rubrics.win_rates`,
        :func:`~autorater_pipelines.gecko.vertex_rubrics.per_rubric_comparison`).
    """
    scores = {n: [_score((r or {}).get("score")) for r in rows] for n, rows in results.items()}
    verdicts = {n: [_verdicts((r or {}).get("rubric_verdicts")) for r in rows] for n, rows in results.items()}
    return {
        "win_rates": win_rates(scores),
        "per_rubric_comparison": {
            f"{a} vs {b}": per_rubric_comparison(verdicts, a, b, labels=labels)
            for a, b in itertools.combinations(results, 2)
        },
    }


def evaluate_candidates(
    df: pd.DataFrame,
    *,
    response_columns: Mapping[str, str],
    prompt_column: str = "prompt",
    media_type: str = "text",
    rubrics_column: str = "",
    id_columns: Sequence[str] | None = None,
    rubric_generation_model: str = "",
    rubric_generation_parameters: Mapping[str, Any] | None = None,
    rubric_generation_prompt_template: str = "",
    **evaluate_options: Any,
) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
    """Score every candidate's responses against the same rubrics of each prompt.

    Args:
        df: One row per prompt, one response column per candidate.
        response_columns: ``{candidate name: column}``.
        prompt_column: Column with the prompt (rubric generation, and ``prompt`` in the validator's prompt).
        media_type: ``text`` (default) or ``image``/``video`` when the columns hold media.
        rubrics_column: Column with supplied rubrics (Gecko's or Vertex ``rubric_groups``); "" = the ``qas``
            column when present, else generated once from ``prompt_column``.
        id_columns: As :func:`autorater_pipelines.gecko.dataframe.evaluate` (None = the DataFrame index).
        rubric_generation_model: As :func:`autorater_pipelines.gecko.dataframe.generate_rubrics`.
        rubric_generation_parameters: As there.
        rubric_generation_prompt_template: As there.
        **evaluate_options: ``rubric_group``, ``validator_model``, ``validator_parameters``,
            ``validator_prompt_template``, ``scoring``, ``project``, ``location``, ``progress`` of
            :func:`~autorater_pipelines.gecko.dataframe.evaluate`.

    Returns:
        ``(results, metrics)``: ``results`` = ``{candidate: results DataFrame}`` (as ``evaluate`` returns, plus
        ``candidate``); ``metrics`` = ``{"rubric_prompt_version", "candidates": {candidate: metrics}, "win_rates": …,
        "per_rubric_comparison": {"<a> vs <b>": …}}`` (module docstring). A row without rubrics is an error row
        in every candidate's results and is not compared.

    Raises:
        InputError: ``response_columns`` empty or naming absent columns, a ``candidate`` column in ``df``, and
            the errors of ``evaluate``.

    """
    from autorater_pipelines.gecko import dataframe

    columns = _check(df, response_columns)
    frame = df
    if not rubrics_column and "qas" not in df.columns:
        frame = dataframe.generate_rubrics(
            df,
            prompt_column=prompt_column,
            media_type=media_type,
            rubric_generation_model=rubric_generation_model,
            rubric_generation_parameters=rubric_generation_parameters,
            rubric_generation_prompt_template=rubric_generation_prompt_template,
            id_columns=id_columns,
            project=evaluate_options.get("project", ""),
            location=evaluate_options.get("location", ""),
            progress=evaluate_options.get("progress", True),
        )
    if id_columns is None:
        ids = [frame.index.name or "index"]
        frame = frame.reset_index()
    else:
        ids = [id_columns] if isinstance(id_columns, str) else list(id_columns)
    results: dict[str, pd.DataFrame] = {}
    per_candidate: dict[str, dict[str, Any]] = {}
    for name, column in columns.items():
        results[name], per_candidate[name] = dataframe.evaluate(
            frame.assign(**{CANDIDATE_COLUMN: name}),
            media_column=column,
            prompt_column=prompt_column,
            media_type=media_type,
            rubrics_column=rubrics_column,
            id_columns=[*ids, CANDIDATE_COLUMN],
            **evaluate_options,
        )
    records: dict[str, Sequence[Mapping[str, Any] | None]] = {
        n: [{str(k): v for k, v in row.items()} for row in r.to_dict("records")] for n, r in results.items()
    }
    version = next(iter(per_candidate.values()), {}).get("rubric_prompt_version")
    metrics = {"rubric_prompt_version": version, "candidates": per_candidate, **compare(records)}
    return results, metrics
