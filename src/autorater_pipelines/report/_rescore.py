"""Re-score a finished run from its judgments or results with other options — no model call.

Options (the ``--params`` JSON of ``autorater rescore``); an option left out keeps the value the run's
metrics were computed with:

AutoSxS
    ``ties_as_half`` (bool): count a tie as half a win for each model. The headline
    ``autorater_model_a_win_rate`` / ``_model_b_`` become mean scores (win 1, tie 0.5, loss 0) with
    Student-t intervals, human preference win rates count human ties as 0.5, and metrics.json gets
    ``"ties_as_half": true``; every other key keeps its value
    (:func:`autorater_pipelines.autosxs.metrics.pairwise_metrics`).
    ``include_incomplete`` (bool): count rows judged in one presentation order only (``complete`` false)
    in the rates and alignment; by default they are left out and counted in ``one_order_only_count``.
    ``human_preference_column`` (str, ``""`` = none): the human labels to align with. Judgments carry
    only the column given at run time, so another column is read from ``evaluation_dataset`` (the
    original dataset, joined on ``id_columns``, default: the judgments' id columns) and normalized as
    the pipeline does (``A``/``B``/``TIE``, ``model_a``/``model_b``); the new labels replace the old
    column in ``judgments.jsonl``.
Gecko
    ``scoring`` (dict): ``dependency_masking``, ``logprob_weighting``, ``missing_answer_policy``,
    ``unparseable_answer_policy`` (:class:`autorater_pipelines.gecko.ScoringOptions`), merged over the run's
    ``scoring_options``.
    Rows are re-scored from ``validations.jsonl`` (every validator sample) when the run kept it;
    otherwise from ``results.jsonl``, whose per-question votes re-create the answers exactly except
    choice probabilities (``logprob_weighting`` can then be turned off, not on). Rows the run could
    not score stay in ``error_messages.jsonl`` as they were.
    ``id_columns`` (list): the row id columns (default: from ``error_messages.jsonl``).

Every re-scored metrics.json holds ``rescore_options``: the options used, where labels came from, and
``original``: the run's own value of every top-level number the re-scoring changed (kept through later
re-scorings, so it is always the run's own; the report shows it beside the new value).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import pydantic

from autorater_pipelines import gecko, io, pairwise, registry
from autorater_pipelines.autosxs.metrics import pairwise_metrics
from autorater_pipelines.autosxs.panel_metrics import panel_metrics
from autorater_pipelines.errors import InputError, unknown_names
from autorater_pipelines.evaluation.parameters import Flag
from autorater_pipelines.gecko.candidates import CANDIDATE_COLUMN
from autorater_pipelines.gecko.vertex_rubrics import vertex_row_fields
from autorater_pipelines.report._outputs import (
    SCORE_FIELDS,
    RunOutputs,
    gecko_id_columns,
    human_preference_column,
    judgment_id_columns,
    load_outputs,
)

__all__ = [
    "ABSENT",
    "RescoreResult",
    "changes",
    "is_version_copy",
    "rescore",
    "rescore_autosxs",
    "rescore_gecko",
    "validation_rows_from_results",
]

VALIDATIONS_FILE = "validations.jsonl"
ABSENT = "(absent)"
"""Stands for a missing key in :func:`changes`."""


class _AutosxsOptions(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    ties_as_half: Flag | None = None  # true/false or those strings, as everywhere (not "yes", 1)
    include_incomplete: Flag | None = None
    human_preference_column: str | None = None
    evaluation_dataset: str | None = None
    id_columns: list[str] | None = None


class _GeckoOptions(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    scoring: dict[str, Any] | None = None
    id_columns: list[str] | None = None


class RescoreResult(NamedTuple):
    """Output of :func:`rescore`.

    Attributes:
        kind: The pipeline of the run (a registered name: ``autosxs``, ``gecko``).
        metrics: The new metrics (with ``rescore_options``).
        previous: The run's metrics before re-scoring.
        files: Output file name → new content (a dict for ``metrics.json``, rows for ``*.jsonl``).
    """

    kind: str
    metrics: dict[str, Any]
    previous: dict[str, Any]
    files: dict[str, Any]


def _parse(model: type[pydantic.BaseModel], params: Mapping[str, Any], kind: str) -> Any:
    unknown = sorted(str(k) for k in params if k not in model.model_fields)
    if unknown:
        raise InputError(
            f"invalid re-scoring options for {registry.get(kind).a_run}: "
            + unknown_names("keys", unknown, sorted(model.model_fields)),
            source="--params",
        )
    try:
        return model(**dict(params))
    except pydantic.ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}={e.get('input')!r}: {e['msg']}" for e in exc.errors())
        a_run, keys = registry.get(kind).a_run, sorted(model.model_fields)
        raise InputError(
            f"invalid re-scoring options for {a_run}: {problems}; valid keys: {keys}",
            source="--params",
        ) from None


def _labels_from_dataset(
    rows: list[dict[str, Any]], column: str, dataset_uri: str, id_columns: Sequence[str], old: str | None
) -> list[dict[str, Any]]:
    """Judgments with ``column``'s normalized labels from the dataset in place of the ``old`` column."""
    dataset = io.read_dataset(dataset_uri)
    io.require_columns(dataset, {"human_preference_column": column})
    keys = io.check_unique_ids(dataset, id_columns)
    index = dict(zip(keys, range(len(keys)), strict=True))
    out = []
    for row in rows:
        key = io.id_key(row, id_columns)
        if key not in index:
            raise InputError(
                f"judgment {dict(zip(id_columns, key, strict=True))!r} has no row in this dataset; give the run's "
                "evaluation_dataset and id_columns",
                source=dataset_uri,
            )
        i = index[key]
        label = pairwise.normalize_preference(dataset.rows[i].get(column), column=column, location=dataset.location(i))
        new: dict[str, Any] = {}
        for k, v in row.items():
            if k == old:
                continue
            if k == "choice" and column not in new:
                new[column] = label  # right after response_b, where the pipeline writes the human column
            new[k] = v
        new.setdefault(column, label)
        out.append(new)
    return out


def _original(previous: Mapping[str, Any], metrics: Mapping[str, Any]) -> dict[str, Any]:
    """The run's own value of each top-level number that ``metrics`` changes (``rescore_options.original``).

    ``previous`` may itself be a re-scoring: its ``original`` values win, so the run's own stay.
    """
    earlier = (previous.get("rescore_options") or {}).get("original") or {}
    own = {k: v for k, v in previous.items() if k != "rescore_options" and (v is None or isinstance(v, (int, float)))}
    own.update(earlier)
    return {k: v for k, v in own.items() if k in metrics and metrics[k] != v}


def rescore_autosxs(outputs: RunOutputs, params: Mapping[str, Any]) -> RescoreResult:
    """Re-score an AutoSxS run (options in the module docstring): the ``rescore`` of its spec."""
    opts: _AutosxsOptions = _parse(_AutosxsOptions, params, outputs.kind)
    rows, previous = outputs.rows, outputs.metrics
    old = human_preference_column(rows, previous)
    ties = bool(previous.get("ties_as_half")) if opts.ties_as_half is None else opts.ties_as_half
    incomplete = (
        previous.get("one_order_only_excluded") is False if opts.include_incomplete is None else opts.include_incomplete
    )
    column = old if opts.human_preference_column is None else (opts.human_preference_column or None)
    files: dict[str, Any] = {}
    source = "judgments.jsonl"
    if column and opts.evaluation_dataset:
        ids = opts.id_columns or (judgment_id_columns(rows[0]) if rows else [])
        rows = _labels_from_dataset(rows, column, opts.evaluation_dataset, ids, old)
        files["judgments.jsonl"] = rows
        source = opts.evaluation_dataset
    elif column and column != old:
        if not rows or column not in rows[0]:
            raise InputError(
                f"human_preference_column {column!r} is not in judgments.jsonl (its human labels are in {old!r}); "
                "add evaluation_dataset (and id_columns) to read that column from the original dataset",
                source="--params",
            )
        rows = [
            {
                **r,
                column: pairwise.normalize_preference(
                    r.get(column), column=column, location=f"judgments.jsonl line {i}"
                ),
            }
            for i, r in enumerate(rows, start=1)
        ]
        files["judgments.jsonl"] = rows
    metrics = pairwise_metrics(rows, human_preference_column=column, ties_as_half=ties, include_incomplete=incomplete)
    # A panel's per-juror sections and agreement, re-scored the same way (empty for one judge).
    metrics.update(
        panel_metrics(rows, human_preference_column=column, ties_as_half=ties, include_incomplete=incomplete)
    )
    metrics["rescore_options"] = {
        "ties_as_half": ties,
        "include_incomplete": incomplete,
        "human_preference_column": column or "",
        "human_labels_from": source if column else "",
        "original": _original(previous, metrics),
    }
    files["metrics.json"] = metrics
    return RescoreResult(outputs.kind, metrics, previous, files)


def validation_rows_from_results(results: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Re-create validation rows (rubric + ``answers``) from result rows, for :func:`gecko.score`.

    Each question's ``votes`` become that many answered samples in vote order (so the vote, ties
    included, comes out the same), its ``unparseable_samples`` unanswerable ones, a missing answer one
    failed sample with the recorded error, and a ``probability`` one sample's choice probability.
    """
    out = []
    for result in results:
        row = {k: v for k, v in result.items() if k not in SCORE_FIELDS}
        qas, answers = [], {}
        for qa in result.get("qa_results") or []:
            qas.append(
                {
                    "question_id": qa["question_id"],
                    "question": qa.get("question"),
                    "question_type": qa.get("question_type"),
                    "choices": qa.get("choices") or [],
                    "answer": qa.get("expected"),
                    "dependencies": qa.get("dependencies") or [],
                    "keyword_id": qa.get("keyword_id"),
                }
                | ({"importance": qa["importance"]} if qa.get("importance") is not None else {})
            )
            samples: list[dict[str, Any]] = [
                {"verdict": verdict, "error": None} for verdict, n in (qa.get("votes") or {}).items() for _ in range(n)
            ]
            unparsed = qa.get("raw") if qa.get("status") == "unparseable" and qa.get("raw") is not None else ""
            samples += [{"verdict": unparsed, "error": None} for _ in range(qa.get("unparseable_samples") or 0)]
            if qa.get("status") == "missing" or (not samples and qa.get("error")):
                samples = [{"verdict": None, "error": qa.get("error")}]
            if qa.get("probability") is not None and samples:
                samples[0]["choice_probs"] = {qa.get("expected"): qa["probability"]}
            answers[qa["question_id"]] = samples
        row.update(qas=qas, answers=answers)
        out.append(row)
    return out


def rescore_gecko(outputs: RunOutputs, params: Mapping[str, Any]) -> RescoreResult:
    """Re-score a Gecko run (options in the module docstring): the ``rescore`` of its spec."""
    opts: _GeckoOptions = _parse(_GeckoOptions, params, outputs.kind)
    previous = outputs.metrics
    ids = gecko_id_columns(outputs.rows, outputs.errors, opts.id_columns)
    candidates = previous.get("response_columns") or {}
    if candidates and CANDIDATE_COLUMN not in ids:
        ids = [*ids, CANDIDATE_COLUMN]  # a response_columns run: a row per prompt and candidate
    merged = {**(previous.get("scoring_options") or {}), **(opts.scoring or {})}
    options = gecko.ScoringOptions.from_params(merged, source="--params scoring")
    validations_path = os.path.join(outputs.directory, VALIDATIONS_FILE)
    if os.path.isfile(validations_path):
        rows, source = io.read_jsonl(validations_path), VALIDATIONS_FILE
    else:
        if options.logprob_weighting and not any(
            qa.get("probability") is not None for r in outputs.rows for qa in r.get("qa_results") or []
        ):
            raise InputError(
                "logprob_weighting needs the validator's choice probabilities, which results.jsonl does not hold "
                f"and {VALIDATIONS_FILE} is absent; re-run validation with logprobs and questions_per_call=1",
                source="--params scoring",
            )
        rows, source = validation_rows_from_results(outputs.rows), "results.jsonl"
    scored = gecko.score(rows, id_columns=ids, options=options)
    if source == "results.jsonl":  # the re-created samples carry answers, not the raw replies
        raw = {(io.id_key(r, ids), qa["question_id"]): qa.get("raw") for r in outputs.rows for qa in r["qa_results"]}
        for r in scored.results:
            for qa in r["qa_results"]:
                qa["raw"] = raw.get((io.id_key(r, ids), qa["question_id"]), qa["raw"])
            r.update(vertex_row_fields(r))  # reasoning = the raw answers, restored
    rescored = {io.id_key(r, ids) for r in rows}
    carried = [e for e in outputs.errors if io.id_key(e, ids) not in rescored]
    errors = carried + scored.errors
    metrics = {**previous, **scored.metrics}
    unscored = Counter(e.get("stage", "unknown") for e in errors if "handled_as" not in e)
    metrics["rows_unscored"] = sum(unscored.values())
    if "unscored_rows_by_stage" in previous:
        metrics["unscored_rows_by_stage"] = dict(sorted(unscored.items()))
    if "error_count" in previous:
        metrics["error_count"] = len(errors)
    if candidates:  # each candidate's metrics, win_rates and per_rubric_comparison, recomputed as the run's
        from autorater_pipelines.gecko import steps
        from autorater_pipelines.gecko.candidate_steps import score_candidates

        compared = score_candidates(
            rows,
            id_columns=[c for c in ids if c != CANDIDATE_COLUMN],
            response_columns=candidates,
            earlier_errors=carried,
            score=lambda part, **kwargs: steps.score_rows(part, scoring=options, **kwargs),
        ).metrics
        metrics.update({k: compared[k] for k in ("candidates", "win_rates", "per_rubric_comparison")})
    metrics["rescore_options"] = {
        "scoring": options.model_dump(),
        "rows_from": source,
        "id_columns": ids,
        "original": _original(previous, metrics),
    }
    files = {"results.jsonl": scored.results, "error_messages.jsonl": errors, "metrics.json": metrics}
    return RescoreResult(outputs.kind, metrics, previous, files)


def rescore(directory: str, params: Mapping[str, Any]) -> RescoreResult:
    """Recompute a finished run's metrics (and, where they change, its rows) with other options.

    Args:
        directory: A finished run's output directory (``judgments.jsonl`` or ``results.jsonl`` …).
        params: Re-scoring options (module docstring); empty = recompute with the run's options.

    Returns:
        The new metrics and files; nothing is written (see :func:`write_rescore`).

    Raises:
        InputError: not a run's output directory, an unknown or invalid option, a label column that
            cannot be found or holds invalid labels.
    """
    outputs = load_outputs(directory)
    result: RescoreResult = registry.get(outputs.kind).load("rescore")(outputs, params)
    return result


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: value}


def changes(previous: Mapping[str, Any], new: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """``(key, old, new)`` for every metric that differs; nested keys are dotted (``accuracy_by_question_type.color``).

    A key present on one side only has :data:`ABSENT` on the other. A ``null`` that became an object (or the
    reverse, e.g. ``style_coefficients`` once style control is on) is listed as its keys, each ``None`` on the
    ``null`` side, not as the ``null`` key going absent.
    """
    old_flat, new_flat = _flatten(previous), _flatten(new)
    for this, other in ((old_flat, new_flat), (new_flat, old_flat)):
        for key in [k for k, v in this.items() if v is None and k not in other]:
            nested = [k for k in other if k.startswith(f"{key}.") and k not in this]
            if nested:
                del this[key]
                this.update(dict.fromkeys(nested))
    keys = list(dict.fromkeys([*old_flat, *new_flat]))
    return [
        (k, old_flat.get(k, ABSENT), new_flat.get(k, ABSENT))
        for k in keys
        if old_flat.get(k, ABSENT) != new_flat.get(k, ABSENT)
    ]


_VERSION = re.compile(r"\.(?:\d+|previous)\.jsonl?$")


def is_version_copy(name: str) -> bool:
    """True for a kept earlier version (``metrics.1.json``, ``judgments.2.jsonl``, ``metrics.previous.json``)."""
    return bool(_VERSION.search(name))
