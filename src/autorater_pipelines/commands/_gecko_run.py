"""What ``autorater run gecko`` checks before the run and prints after it."""

from __future__ import annotations

import os
from typing import Any

from autorater_pipelines.commands._run_spec import RunSpec

__all__ = ["OUTPUTS", "RUN", "failed_rows", "preflight", "print_summary", "report_options"]

OUTPUTS = {
    "rubrics.jsonl": "rubrics",
    "validations.jsonl": "validations",
    "results.jsonl": "results",
    "error_messages.jsonl": "error_messages",
    "metrics.json": "score-gecko-validations/metrics_json",
    "report.html": "build-gecko-report/report",
}
"""Output file in ``--output-dir`` → pipeline output artifact (or ``task/output`` under the pipeline root)."""


def preflight(params: dict[str, Any]) -> tuple[int, list[str]]:
    """Check the whole run in-process before the pipeline starts: :func:`autorater_pipelines.gecko.validate_run`.

    Each model's explicit ``base_url`` is probed (a TCP connection, no request), as ``autorater run autosxs`` does.

    Media files and rubrics are not checked here: a row whose media cannot be read or whose rubric is
    not valid becomes an error row of the run, and the other rows are still scored.

    Returns:
        The number of data rows read from ``evaluation_dataset``, and the local media files its rows name
        (absolute; the run reads them).

    Raises:
        InputError: the same errors the pipeline's rubric step would raise before any model call.
    """
    from autorater_pipelines.gecko.preflight import validate_run

    checked = validate_run(params, probe_endpoint=True)
    rows = checked.rows or []
    run = checked.params
    if run.media_type == "text":  # the columns hold response text, not files
        return len(rows), []
    columns = list(run.response_columns.values()) or [run.media_column]
    return len(rows), [path for column in columns for path in _local_media(rows, column)]


def _local_media(rows: list[dict[str, Any]], column: str) -> list[str]:
    """Absolute paths of the local media files named in ``column`` (URIs and contents JSON are not files)."""
    found = []
    for row in rows:
        value = row.get(column)
        if not isinstance(value, str) or value.lstrip().startswith("{"):
            continue
        path = value.strip().removeprefix("file://")
        if "://" not in path and path and os.path.exists(os.path.expanduser(path)):
            found.append(os.path.abspath(os.path.expanduser(path)))
    return found


def report_options(params: dict[str, Any]) -> dict[str, Any]:
    """The columns the pipeline's report step was given, for rebuilding ``report.html`` from the output files."""
    return {
        "id_columns": params.get("id_columns") or None,
        "prompt_column": params.get("prompt_column") or None,
        "media_column": params.get("media_column") or None,
    }


def _fmt(value: Any, spec: str = ".4f") -> str:
    return "n/a" if value is None else format(value, spec)


def _ci(metrics: dict[str, Any], key: str) -> str:
    low, high = metrics.get(f"{key}_ci_lower"), metrics.get(f"{key}_ci_upper")
    return f"  95% CI [{_fmt(low)}, {_fmt(high)}]" if low is not None and high is not None else ""


def print_summary(metrics: dict[str, Any]) -> None:
    """Print row counts, the mean final score, per-question-type accuracy and unscored rows by stage."""
    print(
        f"\nGecko: {metrics['evaluation_count']} rows, {metrics['rows_scored']} scored, "
        f"{metrics['rows_unscored']} unscored"
    )
    stdev = metrics.get("stdev_final_score")
    # Vertex AI's mean_score is the same mean (metrics.json keeps both names): one line, with its interval.
    same = metrics.get("mean_score") is not None and metrics.get("mean_score") == metrics.get("mean_final_score")
    print(
        f"  mean final_score   {_fmt(metrics['mean_final_score'])}"
        + (_ci(metrics, "mean_score") if same else "")
        + (f"  (stdev {stdev:.4f})" if stdev is not None else "")
        + f"  over {metrics['rows_scored']} of {metrics['evaluation_count']} rows"
    )
    for key, what in (("mean_score", ""), ("pass_rate", "  (share of scored rows with score 1.0)")):
        if metrics.get(key) is not None and not (same and key == "mean_score"):
            print(f"  {key:<17}  {_fmt(metrics[key])}{_ci(metrics, key)}{what}")
    if metrics.get("rubric_prompt_version"):
        print(f"  rubric prompt      {metrics['rubric_prompt_version']}")
    _print_candidates(metrics)
    recorded = metrics.get("media_probe")
    probe: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
    if probe.get("status") in ("failed", "inconclusive"):
        print(
            f"  WARNING media probe {probe['status']}: the validator may not have seen the media: "
            f"{probe.get('message')}"
        )
    if metrics.get("not_called_count"):
        print(
            f"  model calls stopped early: {metrics['not_called_count']} row(s) not called, unscored (why: "
            "model_calls_stopped in metrics.json); a re-run with the same response cache makes only the missing calls"
        )
    print(
        f"  questions scored   {metrics['questions_scored']} of {metrics['questions_total']} in the "
        f"{metrics['rows_scored']} scored rows, masked {metrics['masked_questions']}"
    )
    if "questions_in_all_rows" in metrics:  # metrics.json of an earlier version lacks the all-rows counts
        print(
            f"  all {metrics['rows_validated']} validated rows: {metrics['questions_in_all_rows']} questions, "
            f"parse failures {metrics['parse_failures']}, missing answers {metrics['missing_answers']}"
        )
    else:
        print(f"  parse failures {metrics['parse_failures']}")
    policy = (metrics.get("scoring_options") or {}).get("unparseable_answer_policy")
    if policy:
        print(f"  unparseable answers {'scored 0' if policy == 'zero' else 'left out of final_score'} ({policy})")
    counts = metrics.get("questions_by_question_type") or {}
    by_type = metrics.get("accuracy_by_question_type") or {}
    if by_type:  # accuracy_by_question_type; "accuracy" is also a text rubric type, so not in the heading
        print("  share of questions passed, by type:")
    for qtype, accuracy in by_type.items():
        n = counts.get(qtype, 0)
        print(f"    {qtype:<18} {accuracy:.3f}  ({n} question{'' if n == 1 else 's'})")
    if metrics.get("unscored_rows_by_stage"):
        stages = ", ".join(f"{stage} {n}" for stage, n in metrics["unscored_rows_by_stage"].items())
        print(f"  unscored rows by stage: {stages} (reasons in error_messages.jsonl)")


def _print_candidates(metrics: dict[str, Any]) -> None:
    """Each candidate's scores and win rate of a run with ``response_columns`` (nothing otherwise)."""
    wins = metrics.get("win_rates") or {}
    columns = metrics.get("response_columns") or {}
    for name, m in (metrics.get("candidates") or {}).items():
        print(
            f"  candidate {name:<8} mean_score {_fmt(m.get('mean_score'))}  pass_rate {_fmt(m.get('pass_rate'))}  "
            f"win rate {_fmt((wins.get('win_rates') or {}).get(name))}  ({columns.get(name)}, "
            f"{m.get('rows_scored')} of {m.get('evaluation_count')} rows scored)"
        )
    if metrics.get("candidates"):
        print(
            f"  tie rate           {_fmt(wins.get('tie_rate'))}  over {wins.get('rows_compared')} prompts scored for "
            "every candidate (the one highest score wins a prompt)"
        )
    for pair, c in (metrics.get("per_rubric_comparison") or {}).items():
        first, second = c["candidates"]
        print(
            f"  {pair}: rubrics only {first} passes {c[f'only_{first}']}, only {second} passes "
            f"{c[f'only_{second}']}, both pass {c['both_pass']}, both fail {c['both_fail']}"
        )


def failed_rows(metrics: dict[str, Any]) -> tuple[int, int]:
    """``(failed, total)``: the rows left unscored, of all rows."""
    return int(metrics.get("rows_unscored") or 0), int(metrics.get("evaluation_count") or 0)


RUN = RunSpec(
    preflight=preflight,
    outputs=OUTPUTS,
    print_summary=print_summary,
    failed_rows=failed_rows,
    report_options=report_options,
)
"""How ``autorater run gecko`` treats Gecko (the ``run`` reference of :data:`autorater_pipelines.gecko.spec.SPEC`)."""
