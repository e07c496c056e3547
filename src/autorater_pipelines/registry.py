"""The registry of evaluations: every pipeline autorater knows, by name, each described by a :class:`PipelineSpec`.

This is the one place a pipeline is registered. ``autorater run``, ``submit``, ``compile``, ``publish``,
``report``, ``rescore`` and ``params`` and the report code iterate it (:func:`names`, :func:`specs`) or look a
pipeline up (:func:`get`); none of them compares pipeline names. A new evaluation ``NAME`` is a package
``autorater_pipelines/NAME/`` with a ``spec.py`` defining ``SPEC``, one line in :data:`SPEC_MODULES`, its components
and its ``pipelines/NAME.py`` (docs: architecture, "Adding an evaluation").

Layering: the registry sits above the evaluation packages and below ``report`` and ``commands``. The names are
known without importing any spec (the CLI builds its parser without importing an evaluation package); a spec is
imported on first :func:`get`.
"""

from __future__ import annotations

import importlib

from autorater_pipelines.evaluation.pipeline_spec import PipelineSpec

__all__ = ["SPEC_MODULES", "PipelineSpec", "UnknownPipelineError", "by_row_file", "get", "names", "specs"]

SPEC_MODULES: dict[str, str] = {
    "autosxs": "autorater_pipelines.autosxs.spec",
    "gecko": "autorater_pipelines.gecko.spec",
    "arena": "autorater_pipelines.arena.spec",
}
"""Every registered evaluation: its name → the module whose ``SPEC`` describes it, in listing order."""


class UnknownPipelineError(ValueError):
    """A pipeline name that is not registered; the message lists the registered ones."""


def names() -> tuple[str, ...]:
    """The registered pipeline names, in registration order (no spec is imported)."""
    return tuple(SPEC_MODULES)


def get(name: str) -> PipelineSpec:
    """The spec of the pipeline ``name``.

    Raises:
        UnknownPipelineError: ``name`` is not registered (the message lists the registered names).
        TypeError: the registered module's ``SPEC`` is not a PipelineSpec named ``name`` (a registration bug).
    """
    module = SPEC_MODULES.get(name) if isinstance(name, str) else None
    if module is None:
        raise UnknownPipelineError(f"unknown pipeline {name!r}; registered pipelines: {list(names())}")
    spec = getattr(importlib.import_module(module), "SPEC", None)
    if not isinstance(spec, PipelineSpec) or spec.name != name:
        raise TypeError(f"{module}.SPEC must be a PipelineSpec named {name!r}, got {spec!r}")
    return spec


def specs() -> list[PipelineSpec]:
    """Every registered spec, in registration order."""
    return [get(name) for name in names()]


def by_row_file() -> dict[str, PipelineSpec]:
    """Each registered pipeline's row file (``judgments.jsonl`` …) → its spec."""
    return {spec.row_file: spec for spec in specs()}
