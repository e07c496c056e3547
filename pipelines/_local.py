"""Run a compiled template in the KFP local runner and collect its artifacts."""

from __future__ import annotations

import functools
import logging
import os
import sys
import warnings
from collections.abc import Mapping
from typing import Any

__all__ = ["PipelineRunError", "run_local", "template_inputs"]

logger = logging.getLogger(__name__)


class PipelineRunError(RuntimeError):
    """The local pipeline run failed; the task logs above say which step and why."""


def _import_kfp_runner() -> None:
    """Import ``kfp.dsl``, ``kfp.components`` and ``kfp.local`` without ``kfp.Client``.

    ``kfp/__init__.py`` imports ``kfp.client`` (the Kubernetes client: ~2 s of CPU, a third of a local
    run) unless ``_KFP_RUNTIME=true``, the variable KFP's own executor command sets in every step. Running
    and loading a compiled template needs no client, so the package is imported with the variable set,
    then the modules used here are imported by name with the environment restored.
    """
    if "kfp" not in sys.modules:
        previous = os.environ.get("_KFP_RUNTIME")
        os.environ["_KFP_RUNTIME"] = "true"
        try:
            import kfp  # noqa: F401
        finally:
            if previous is None:
                del os.environ["_KFP_RUNTIME"]
            else:
                os.environ["_KFP_RUNTIME"] = previous
    import kfp.components  # noqa: F401
    import kfp.local  # noqa: F401


@functools.lru_cache(maxsize=4)
def _load_template(template_path: str, modified_ns: int) -> Any:
    """The template as a KFP component, parsed once per file version (``autorater run`` reads it twice)."""
    _import_kfp_runner()
    from kfp.components import load_component_from_file

    return load_component_from_file(template_path)


def load_template(template_path: str) -> Any:
    """``kfp.components.load_component_from_file(template_path)``, cached while the file is unchanged."""
    return _load_template(os.path.abspath(template_path), os.stat(template_path).st_mtime_ns)


def template_inputs(template_path: str) -> dict[str, Any]:
    """Return ``{name: InputSpec}`` of a compiled template's pipeline parameters."""
    return dict(load_template(template_path).component_spec.inputs or {})


def run_local(template_path: str, params: Mapping[str, Any], pipeline_root: str) -> dict[str, Any]:
    """Run ``template_path`` with ``params`` in ``SubprocessRunner(use_venv=False)``.

    Args:
        template_path: A compiled pipeline YAML (what is published is what runs).
        params: Pipeline parameters by name.
        pipeline_root: Local directory for task outputs.

    Returns:
        The pipeline outputs by name: parameters as values, artifacts as ``kfp.dsl.Artifact``
        objects whose ``.path`` is a local file.

    Raises:
        PipelineRunError: a task failed.
    """
    pipeline = load_template(template_path)
    from kfp import local
    from kfp.local import subprocess_task_handler

    from autorater_pipelines.pipelines._long_args import long_args_runner

    if not getattr(subprocess_task_handler.run_local_subprocess, "_long_args", False):
        runner = long_args_runner(subprocess_task_handler.run_local_subprocess)
        runner._long_args = True  # type: ignore[attr-defined]
        subprocess_task_handler.run_local_subprocess = runner  # a 200,000-character template runs too
    local.init(runner=local.SubprocessRunner(use_venv=False), pipeline_root=pipeline_root, raise_on_error=True)
    with warnings.catch_warnings():
        # Our components' base image is not a "python" image by name; locally it is unused.
        warnings.filterwarnings("ignore", message=".*base_image.*", category=RuntimeWarning)
        warnings.filterwarnings("ignore", category=RuntimeWarning, module="kfp")
        warnings.filterwarnings("ignore", message=".*have no effect in the current local runner.*")
        try:
            task = pipeline(**params)
        except RuntimeError as exc:
            raise PipelineRunError(str(exc)) from None
    outputs = task.outputs
    return dict(outputs) if isinstance(outputs, Mapping) else {"Output": outputs}


def artifact_path(artifact: Any) -> str:
    """Local file path of a local-runner output artifact."""
    path = getattr(artifact, "path", None) or getattr(artifact, "uri", "")
    if not path or not os.path.exists(path):
        raise PipelineRunError(f"pipeline output artifact has no local file: {artifact!r}")
    return path
