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

from autorater_pipelines.errors import InputError
from autorater_pipelines.gecko import dataframe
from autorater_pipelines.gecko.vertex_rubrics import per_rubric_comparison, win_rates

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CANDIDATE_COLUMN", "evaluate_candidates"]

CANDIDATE_COLUMN = "candidate"
"""Column naming the candidate of each validator request (a replay key beside the id columns)."""


def _check(df: pd.DataFrame, response_columns: Any) -> dict[str, str]:
    if not isinstance(response_columns, Mapping) or not response_columns:
        raise InputError(
            "response_columns must map each candidate's name to its response column, e.g. "
            f'{{"model_a": "response_a", "model_b": "response_b"}}, got {response_columns!r}',
            source="response_columns",
        )
    missing = {n: c for n, c in response_columns.items() if c not in df.columns}
    if missing:
        raise InputError(
            f"response_columns names columns not in the DataFrame: {missing}; columns: {list(df.columns)}",
            source="response_columns",
        )
    if CANDIDATE_COLUMN in df.columns:
        raise InputError(
            f"the DataFrame has a column {CANDIDATE_COLUMN!r}, which evaluate_candidates adds (the candidate's "
            "name in replay keys); rename it",
            source="response_columns",
        )
    return {str(n): str(c) for n, c in response_columns.items()}


def _score(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def _verdicts(value: Any) -> dict[str, bool | None]:
    if not isinstance(value, list):
        return {}
    return {v["evaluated_rubric"]["rubric_id"]: v["verdict"] for v in value}


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
        **evaluate_options: ``validator_model``, ``validator_parameters``, ``validator_prompt_template``,
            ``scoring``, ``project``, ``location``, ``progress`` of
            :func:`~autorater_pipelines.gecko.dataframe.evaluate`.

    Returns:
        ``(results, metrics)``: ``results`` = ``{candidate: results DataFrame}`` (as ``evaluate`` returns, plus
        ``candidate``); ``metrics`` = ``{"candidates": {candidate: metrics}, "win_rates": …,
        "per_rubric_comparison": {"<a> vs <b>": …}}`` (module docstring). A row without rubrics is an error row
        in every candidate's results and is not compared.

    Raises:
        InputError: ``response_columns`` empty or naming absent columns, a ``candidate`` column in ``df``, and
            the errors of ``evaluate``.

    """
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
    scores: dict[str, list[float | None]] = {
        n: [_score(s) for s in r["score"]] if "score" in r else [None] * len(r) for n, r in results.items()
    }
    verdicts: dict[str, list[dict[str, bool | None]]] = {
        n: [_verdicts(v) for v in r["rubric_verdicts"]] if "rubric_verdicts" in r else [{}] * len(r)
        for n, r in results.items()
    }
    metrics = {
        "candidates": per_candidate,
        "win_rates": win_rates(scores),
        "per_rubric_comparison": {
            f"{a} vs {b}": per_rubric_comparison(verdicts, a, b) for a, b in itertools.combinations(columns, 2)
        },
    }
    return results, metrics
