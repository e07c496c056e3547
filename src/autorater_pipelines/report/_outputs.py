"""A finished run's output directory (the ``autorater run`` layout): which pipeline, its rows and metrics.

Each registered pipeline has one row file (its spec's ``row_file``), which identifies the directory:
AutoSxS: ``judgments.jsonl`` (required), ``metrics.json``, ``error_messages.jsonl``.
Gecko: ``results.jsonl`` (required), ``metrics.json``, ``error_messages.jsonl``, ``rubrics.jsonl``.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from autorater_pipelines import io, registry
from autorater_pipelines.errors import InputError

__all__ = [
    "INTERNAL_OPTIONS",
    "PROMPT_PARAMETER_KEYS",
    "SCORE_FIELDS",
    "RunOutputs",
    "autosxs_id_columns",
    "autosxs_metrics",
    "given_options",
    "detect_kind",
    "gecko_id_columns",
    "gecko_metrics",
    "human_preference_column",
    "check_judgment_lines",
    "judgment_id_columns",
    "load_files",
    "load_outputs",
]

Kind = str
"""A registered pipeline name (:func:`autorater_pipelines.registry.names`): which pipeline wrote a directory."""
METRICS_FILE = "metrics.json"
ERRORS_FILE = "error_messages.jsonl"

SCORE_FIELDS = (
    "qa_results",
    "final_score",
    "keyword_coverage",
    "questions_scored",
    "parse_failures",
    "missing_answers",
    "rubric_verdicts",
    "score",
)
"""Fields a Gecko result row adds to its validation row (:func:`autorater_pipelines.gecko.rubric_scoring.score_row`)."""

PROMPT_PARAMETER_KEYS = ("inference_instruction", "inference_context")
"""Autorater prompt parameters of the built-in tasks: the judgment columns after the id columns."""


@dataclasses.dataclass
class RunOutputs:
    """The outputs of one finished run.

    Attributes:
        kind: The pipeline that wrote it (a registered name: ``autosxs``, ``gecko``).
        directory: The output directory.
        rows: Judgment rows (AutoSxS) or result rows (Gecko), in file order.
        metrics: ``metrics.json``; computed from ``rows`` when the file is absent.
        errors: ``error_messages.jsonl`` rows ([] when the file is absent).
        metrics_computed: True when ``metrics.json`` was absent and ``metrics`` was computed here.
    """

    kind: Kind
    directory: str
    rows: list[dict[str, Any]]
    metrics: dict[str, Any]
    errors: list[dict[str, Any]]
    metrics_computed: bool = False


def detect_kind(directory: str) -> Kind:
    """Tell which pipeline wrote ``directory`` from the files present.

    Raises:
        InputError: the directory does not exist, its run was killed while moving its files in
            (:func:`autorater_pipelines.report._out_dir.check_complete`), or it holds none or several of
            the registered pipelines' row files (``judgments.jsonl``, ``results.jsonl``).
    """
    if not os.path.isdir(directory):
        raise InputError("no such directory; give the --output-dir of a finished run", source=directory)
    from autorater_pipelines.report._out_dir import check_complete

    check_complete(directory)
    row_files = registry.by_row_file()
    found = [spec.name for name, spec in row_files.items() if os.path.isfile(os.path.join(directory, name))]
    companions = {f for name in found for f in registry.get(name).companion_row_files}
    found = [name for name in found if registry.get(name).row_file not in companions]
    if len(found) != 1:
        present = sorted(os.listdir(directory))[:20]
        two = len(row_files) == 2
        what = ("both" if two else "more than one") if found else ("neither" if two else "none")
        named = [f"{name} ({spec.title})" for name, spec in row_files.items()]
        raise InputError(
            f"holds {what} of {', '.join(named[:-1])} and {named[-1]}; files present: {present}",
            source=directory,
        )
    return found[0]


def _read_json(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            value = json.load(fh)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg} at line {exc.lineno}", source=path) from None
    if not isinstance(value, dict):
        raise InputError(f"must be a JSON object, got {type(value).__name__}", source=path)
    return value


def load_outputs(directory: str) -> RunOutputs:
    """Read a run's output directory (see the module docstring for the files).

    Raises:
        InputError: not a run's output directory, a file that cannot be parsed, or judgments that cannot
            be counted (:func:`check_judgment_lines`).
    """
    kind = detect_kind(directory)
    spec = registry.get(kind)
    rows_path = os.path.join(directory, spec.row_file)
    if spec.check_rows:
        spec.load("check_rows")(rows_path)
    path = os.path.join(directory, METRICS_FILE)
    errors_path = os.path.join(directory, ERRORS_FILE)
    return load_files(
        kind,
        rows_path=rows_path,
        metrics_path=path if os.path.isfile(path) else None,
        errors_path=errors_path if os.path.isfile(errors_path) else None,
        directory=directory,
    )


def load_files(
    kind: Kind,
    *,
    rows_path: str,
    metrics_path: str | None = None,
    errors_path: str | None = None,
    directory: str | None = None,
) -> RunOutputs:
    """Read a run's outputs from explicit paths (e.g. KFP artifact paths).

    Args:
        kind: A registered pipeline name (``autosxs``, ``gecko``).
        rows_path: Its row file: judgments (AutoSxS) or results (Gecko) JSONL.
        metrics_path: ``metrics.json``; None = compute the metrics from the rows (the spec's ``metrics_from_rows``).
        errors_path: Error messages JSONL, or None.
        directory: Directory the outputs belong to (default: the one holding ``rows_path``).

    Raises:
        InputError: a file that cannot be parsed.
        UnknownPipelineError: ``kind`` is not registered.
    """
    spec = registry.get(kind)
    rows = io.read_jsonl(rows_path)
    errors = io.read_jsonl(errors_path) if errors_path else []
    directory = directory or os.path.dirname(os.path.abspath(rows_path))
    if metrics_path:
        return RunOutputs(kind, directory, rows, _read_json(metrics_path), errors)
    metrics = spec.load("metrics_from_rows")(rows, errors)
    return RunOutputs(kind, directory, rows, metrics, errors, metrics_computed=True)


def autosxs_metrics(rows: Sequence[Mapping[str, Any]], errors: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """AutoSxS ``metrics.json`` computed from judgment rows (the human label column found by position)."""
    from autorater_pipelines.autosxs.metrics import pairwise_metrics

    return pairwise_metrics(rows, human_preference_column=human_preference_column(rows, {}))


def gecko_metrics(rows: Sequence[Mapping[str, Any]], errors: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Gecko ``metrics.json`` computed from result rows and error rows."""
    from autorater_pipelines import gecko

    return gecko.summarize(rows, errors=errors)


def human_preference_column(rows: Sequence[Mapping[str, Any]], metrics: Mapping[str, Any]) -> str | None:
    """The judgment column holding normalized human labels, or None when the run had none.

    ``autorater rescore`` records the column it used in ``metrics["rescore_options"]``; otherwise
    the column is found by position: the pipeline writes it right after ``response_b`` and before
    ``choice`` (see :func:`autorater_pipelines.autosxs.prepare_examples`).
    """
    options = metrics.get("rescore_options")
    if isinstance(options, Mapping) and "human_preference_column" in options:
        return options["human_preference_column"] or None
    if not rows:
        return None
    keys = list(rows[0])
    if "response_b" not in keys or "choice" not in keys:
        return None
    between = keys[keys.index("response_b") + 1 : keys.index("choice")]
    return between[0] if len(between) == 1 else None


def judgment_id_columns(row: Mapping[str, Any]) -> list[str]:
    """The id columns of a judgment row: the keys before its prompt parameters and responses."""
    ids = []
    for key in row:
        if key in PROMPT_PARAMETER_KEYS or key == "response_a":
            break
        ids.append(key)
    return ids


def autosxs_id_columns(rows: Sequence[Mapping[str, Any]], errors: Sequence[Mapping[str, Any]] = ()) -> list[str]:
    """The id columns of judgment rows: :func:`judgment_id_columns` of the first row ([] without rows)."""
    return judgment_id_columns(rows[0]) if rows else []


def gecko_id_columns(
    rows: Sequence[Mapping[str, Any]], errors: Sequence[Mapping[str, Any]], given: Sequence[str] | None = None
) -> list[str]:
    """The id columns of Gecko rows: ``given``, else the keys before ``stage`` in an error row, else the first key.

    Gecko result rows do not name their id columns; error rows start with them (see
    :func:`autorater_pipelines.gecko._common.error_row`).
    """
    if given:
        return list(given)
    for error in errors:
        keys = list(error)
        if "stage" in keys and keys.index("stage") > 0:
            return keys[: keys.index("stage")]
    return list(rows[0])[:1] if rows else []


def check_judgment_lines(path: str) -> None:
    """Refuse judgments that would be miscounted: a row id seen twice, a choice that is not a verdict.

    A hand-edited or concatenated ``judgments.jsonl`` could otherwise count a row twice or count a
    ``choice`` such as ``"Z"`` as an error without a word.

    Raises:
        InputError: naming the file, the line, the column and the value.
    """
    from autorater_pipelines.io._formats import decode_utf8, parse_jsonl_text
    from autorater_pipelines.pairwise.voting import CHOICES

    filesystem, target = io.filesystem_for(path)
    numbered = parse_jsonl_text(decode_utf8(filesystem.read_bytes(target), path), path)
    ids = judgment_id_columns(numbered[0][1]) if numbered else []
    seen: dict[tuple[str, ...], int] = {}
    for line, row in numbered:
        choices = [("choice", row.get("choice"))]
        choices += [("samples.choice", s.get("choice")) for s in row.get("samples") or [] if isinstance(s, dict)]
        for column, value in choices:
            if value not in CHOICES:
                raise InputError(
                    f"{column} {value!r} is not one of {list(CHOICES)}; fix or remove the line",
                    source=path,
                    row=line,
                    unit="line",
                )
        key = tuple(str(row.get(c)) for c in ids)
        if ids and key in seen:
            raise InputError(
                f"row id {dict(zip(ids, key, strict=True))} is also on line {seen[key]}; each row must appear once "
                "(remove the duplicate line)",
                source=path,
                row=line,
                unit="line",
            )
        seen.setdefault(key, line)


INTERNAL_OPTIONS = ("original", "model_calls")
"""Keys of ``rescore_options`` that record the re-scoring itself (the earlier figures, no model call), not options."""


def given_options(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """The options of a re-scored ``metrics.json`` (``rescore_options``) without the internal record; {} if none."""
    options = metrics.get("rescore_options")
    if not isinstance(options, Mapping):
        return {}
    return {k: v for k, v in options.items() if k not in INTERNAL_OPTIONS}
