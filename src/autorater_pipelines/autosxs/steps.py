"""The AutoSxS pipeline steps: one function per component, called by it once.

Each step takes the component's inputs (paths and the parameters) and writes its outputs; the stage modules do the
work: :mod:`~autorater_pipelines.autosxs.prepare` (dataset checked, prompt parameters rendered),
:mod:`~autorater_pipelines.autosxs.inference` (model A / model B responses), :mod:`~autorater_pipelines.autosxs.judge`
(the autorater), :mod:`~autorater_pipelines.autosxs.shards` and :mod:`~autorater_pipelines.autosxs.export`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from autorater_pipelines import io
from autorater_pipelines.autosxs.preflight import validate_run
from autorater_pipelines.evaluation.parameters import ValidatedRun

__all__ = ["prepare_run"]


def prepare_run(params: Mapping[str, Any], output_path: str) -> ValidatedRun:
    """The pipeline's first step (``prepare_pairwise_examples``): check the run, then write the prepared examples.

    The check is :func:`~autorater_pipelines.autosxs.preflight.validate_run` on every parameter.

    Raises:
        InputError: the first problem ``validate_run`` finds; nothing is written then.
    """
    run = validate_run(params)
    io.write_jsonl(output_path, run.rows or [])
    return run
