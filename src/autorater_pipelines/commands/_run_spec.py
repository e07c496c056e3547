"""How ``autorater run`` treats one pipeline (:class:`RunSpec`), found through the registry of evaluations.

Each evaluation's ``RunSpec`` is the ``run`` reference of its :class:`~autorater_pipelines.registry.PipelineSpec`
(``commands/_autosxs_run.py``, ``commands/_gecko_run.py``): what the CLI checks before a run and prints after it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from autorater_pipelines import registry

__all__ = ["RunSpec", "juror_errors", "run_spec"]


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """How ``autorater run`` treats one pipeline.

    Attributes:
        preflight: Validates ``params`` in-process and returns the number of data rows read and the local
            files the rows name (Gecko media); raises InputError.
        outputs: Output file name in ``--output-dir`` → name of the pipeline output artifact, or of a
            component output artifact found under the pipeline root (``task/output`` form).
        print_summary: Prints the run summary from ``metrics.json``'s dict.
        extra_outputs: Further output files that depend on the parameters (same form as ``outputs``).
        print_outputs: Prints what the run wrote besides the metrics, from ``--output-dir`` and the names of
            the files this run wrote there.
        failed_rows: ``(failed, total)`` rows of a run from its metrics; the exit status is 1 when no row
            was evaluated, or when ``failed / total`` exceeds ``--max-failed-share``.
        print_params_notes: Prints what the run's parameters explain about the outputs (AutoSxS: the position
            order), from the parameters and ``--output-dir``.
        failed_unit: What ``failed_rows`` counts, from the metrics, as the exit message names it (``rows``,
            ``samples``).
        report_options: Options of :func:`autorater_pipelines.report.write_report` matching the pipeline's
            report step, used to rebuild ``report.html`` so that it names ``--output-dir``.
        child_env: Environment variables for the pipeline's steps, from the final ``--output-dir`` (e.g.
            where the judgments will be, for the Model Registry import).
    """

    preflight: Callable[[dict[str, Any]], tuple[int, list[str]]]
    outputs: dict[str, str]
    print_summary: Callable[[dict[str, Any]], None]
    extra_outputs: Callable[[dict[str, Any]], dict[str, str]] = lambda params: {}
    print_outputs: Callable[[str, list[str]], None] = lambda out_dir, written: None
    failed_rows: Callable[[dict[str, Any]], tuple[int, int]] = lambda metrics: (0, 0)
    print_params_notes: Callable[[dict[str, Any], str], None] = lambda params, out_dir: None
    failed_unit: Callable[[dict[str, Any]], str] = lambda metrics: "rows"
    report_options: Callable[[dict[str, Any]], dict[str, Any]] = lambda params: {}
    child_env: Callable[[str], dict[str, str]] = lambda out_dir: {}


def run_spec(pipeline: str) -> RunSpec:
    """The :class:`RunSpec` of a registered pipeline (its spec's ``run`` reference).

    Raises:
        UnknownPipelineError: ``pipeline`` is not registered.
        TypeError: the spec's ``run`` reference is not a RunSpec (a registration bug).
    """
    spec = registry.get(pipeline).load("run")
    if not isinstance(spec, RunSpec):
        raise TypeError(f"the run reference of pipeline {pipeline!r} must name a RunSpec, got {spec!r}")
    return spec


def juror_errors(metrics: dict[str, Any], key: str) -> list[str]:
    """``["<spec> <n>", …]``: a panel's jurors with errors (``key`` of their ``jurors`` sections, when above 0).

    Empty without a panel or when no juror had an error. The panel's own counts hide a juror that failed when
    the other jurors still voted, so the run summary names them.
    """
    jurors = metrics.get("jurors")
    if not isinstance(jurors, dict):
        return []
    return [f"{name} {int(s.get(key) or 0)}" for name, s in jurors.items() if isinstance(s, dict) and s.get(key)]
