"""What describes one evaluation as a unit: :class:`PipelineSpec` (each evaluation's ``spec.py`` builds one).

The registry of evaluations (:mod:`autorater_pipelines.registry`) lists them; the CLI, the report and ``autorater
compile`` iterate it and never compare pipeline names. A spec holds names and ``"module:attribute"`` references
(as package entry points do), resolved by :meth:`PipelineSpec.load` only when a command needs them: importing a spec
imports nothing heavy, and an evaluation package never imports the layers above it (``pipelines``, ``report``,
``commands``) even though some of its hooks live there.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from typing import Any

__all__ = ["PipelineSpec"]


@dataclasses.dataclass(frozen=True)
class PipelineSpec:
    """One evaluation: its names, files and the functions each command calls for it.

    Every field named like a function holds a ``"package.module:attribute"`` reference (:meth:`load`); ``steps``
    names a module.

    Attributes:
        name: The pipeline name: ``autorater run NAME``, ``compiled/NAME.yaml``, the ``kind`` of its output
            directory (``autosxs``).
        title: How messages and reports name it (``AutoSxS``).
        row_file: The output file that holds its rows and identifies its output directory (``judgments.jsonl``).
        parameters: The parameter model (a :class:`~autorater_pipelines.evaluation.parameters.ParameterModel`).
        validate_run: ``(params, *, readable=None, project="") -> ValidatedRun``: the one check of a run (the CLI
            preflight, ``autorater submit`` and the first step all call it).
        pipeline: The ``@dsl.pipeline`` function ``autorater compile`` compiles to ``NAME.yaml``.
        steps: The module of its pipeline steps (one function per component, which calls it once).
        dataframe: The DataFrame entry point (``evaluate(df, ...)``, notebooks, no KFP).
        run: The :class:`~autorater_pipelines.commands._run_spec.RunSpec` of ``autorater run`` (preflight, output
            files, summary printing).
        metrics_from_rows: ``(rows, errors) -> dict``: ``metrics.json`` computed from the rows, when a report is
            asked of rows without it.
        id_columns: ``(rows, errors) -> list[str]``: the id columns of its rows.
        rescore: ``(outputs, params) -> RescoreResult``: ``autorater rescore`` (no model call).
        report_context: ``(outputs, *, max_rows, **report_options) -> dict``: the report template's context.
        report_template: The report's Jinja2 template in ``report/templates``.
        report_options: The report options ``report_context`` takes besides ``max_rows`` (``autorater report``
            flags such as ``id_columns``); others are not passed to it.
        check_rows: ``(path) -> None``: refuses a row file that would be miscounted (empty: none).
        artifact_confusion: ``(outputs) -> (categories, matrix)``: the confusion matrix its report step logs
            (empty: none).
        companion_row_files: Row files of other evaluations that its output directory also holds (the arena's
            ``judgments.jsonl``, AutoSxS's row file): a directory with its own row file is its, even with these.
    """

    name: str
    title: str
    row_file: str
    parameters: str
    validate_run: str
    pipeline: str
    steps: str
    dataframe: str
    run: str
    metrics_from_rows: str
    id_columns: str
    rescore: str
    report_context: str
    report_template: str
    report_options: tuple[str, ...] = ()
    check_rows: str = ""
    artifact_confusion: str = ""
    companion_row_files: tuple[str, ...] = ()
    media_response_columns: bool = False
    """Its ``response_columns`` may name columns of local media paths (Gecko's image/video candidates), which
    ``autorater submit`` uploads like ``media_column``'s; False: they hold text (the arena's)."""

    @property
    def a_run(self) -> str:
        """``an AutoSxS run``, ``a Gecko run``: how a message names one of its runs."""
        return f"{'an' if self.title[:1].upper() in 'AEIOU' else 'a'} {self.title} run"

    def load(self, hook: str) -> Any:
        """The object a reference field names (``spec.load("validate_run")``), imported now; ``steps``: the module.

        Raises:
            ValueError: ``hook`` is not a reference field, or is empty for this evaluation.
            ImportError / AttributeError: the reference names no object (a bug in the spec; tests load every one).
        """
        ref = getattr(self, hook, None) if hook in _REFERENCES else None
        if hook == "steps" and isinstance(ref, str) and ref:
            return importlib.import_module(ref)
        if not isinstance(ref, str) or ":" not in ref:
            raise ValueError(f"pipeline {self.name!r} has no {hook!r} hook (references: {sorted(_REFERENCES)})")
        module, _, attribute = ref.partition(":")
        return getattr(importlib.import_module(module), attribute)

    def references(self) -> Mapping[str, str]:
        """Every non-empty reference field → its ``"module:attribute"``."""
        return {f: getattr(self, f) for f in sorted(_REFERENCES) if getattr(self, f)}


_REFERENCES = frozenset(
    {
        "parameters",
        "validate_run",
        "pipeline",
        "steps",
        "dataframe",
        "run",
        "metrics_from_rows",
        "id_columns",
        "rescore",
        "report_context",
        "check_rows",
        "artifact_confusion",
    }
)
