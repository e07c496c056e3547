"""Run a compiled template in the KFP local runner and collect its artifacts."""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
import warnings
from collections.abc import Mapping
from typing import Any

__all__ = ["PipelineRunError", "TemplateInput", "run_local", "template_inputs"]

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


@dataclasses.dataclass(frozen=True)
class TemplateInput:
    """One input of a compiled template (``root.inputDefinitions`` of its pipeline spec).

    Attributes:
        type: The IR type of a parameter (``STRING``, ``NUMBER_INTEGER``, ``NUMBER_DOUBLE``, ``BOOLEAN``,
            ``LIST``, ``STRUCT``), or the schema of an input artifact (``system.Dataset@0.0.1``).
        optional: It has a default (or is marked optional): a run may leave it out.
    """

    type: str
    optional: bool


def template_inputs(template_path: str) -> dict[str, TemplateInput]:
    """Return ``{name: TemplateInput}`` of a compiled template's pipeline inputs.

    Read from the YAML itself (libyaml when available), without importing kfp: ``autorater run`` checks the
    parameters before it starts the runner in a process of its own.

    Raises:
        OSError, yaml.YAMLError, KeyError, TypeError, AttributeError: not a readable compiled pipeline.
    """
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(template_path, encoding="utf-8") as fh:
        spec = next(yaml.load_all(fh, Loader=loader))  # the pipeline spec; a platform spec may follow
    definitions = spec["root"]["inputDefinitions"]
    inputs = {
        name: TemplateInput(str(item["parameterType"]), bool(item.get("isOptional") or "defaultValue" in item))
        for name, item in (definitions.get("parameters") or {}).items()
    }
    for name, item in (definitions.get("artifacts") or {}).items():
        schema = item["artifactType"]
        inputs[name] = TemplateInput(f"{schema['schemaTitle']}@{schema['schemaVersion']}", bool(item.get("isOptional")))
    return inputs


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
    _import_kfp_runner()
    from kfp import local
    from kfp.components import load_component_from_file
    from kfp.local import subprocess_task_handler

    from autorater_pipelines.pipelines._long_args import long_args_runner

    if not getattr(subprocess_task_handler.run_local_subprocess, "_long_args", False):
        runner = long_args_runner(subprocess_task_handler.run_local_subprocess)
        runner._long_args = True  # type: ignore[attr-defined]
        subprocess_task_handler.run_local_subprocess = runner  # a 200,000-character template runs too
    pipeline = load_component_from_file(template_path)
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
