"""Compile the pipelines to the published YAML templates, with one container image for all components."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from typing import Any

from autorater_pipelines import registry

__all__ = ["PIPELINE_NAMES", "compile_pipelines", "load_pipeline_function", "set_image"]

PIPELINE_NAMES = registry.names()
"""Pipelines compiled by ``autorater compile``: ``<name>.yaml`` each (the registry of evaluations, in its order)."""


def load_pipeline_function(name: str) -> Callable[..., Any]:
    """Return the ``@dsl.pipeline`` function of the registered pipeline ``name`` (its spec's ``pipeline``).

    Raises:
        UnknownPipelineError: an unknown pipeline name (a ValueError; the message lists the registered ones).
    """
    function: Callable[..., Any] = registry.get(name).load("pipeline")
    return function


def set_image(spec: dict[str, Any], image: str) -> int:
    """Set the container image of every executor of a compiled pipeline spec; return how many."""
    executors = spec.get("deploymentSpec", {}).get("executors", {})
    for executor in executors.values():
        executor["container"]["image"] = image
    return len(executors)


def compile_pipelines(output_dir: str, image: str | None = None) -> list[str]:
    """Compile every pipeline to ``output_dir/<name>.yaml``; return the written paths.

    Args:
        output_dir: Directory to write the templates to (created if needed).
        image: Container image for every component; None keeps the default
            (:data:`autorater_pipelines.components.IMAGE`).
    """
    import yaml  # here: `autorater run` imports this package for _local only
    from kfp import compiler

    os.makedirs(output_dir, exist_ok=True)
    written = []
    for name in registry.names():
        target = os.path.join(output_dir, f"{name}.yaml")
        with tempfile.TemporaryDirectory() as tmp:
            raw = os.path.join(tmp, f"{name}.yaml")
            compiler.Compiler().compile(load_pipeline_function(name), raw)
            if image:
                with open(raw) as fh:
                    header = "".join(line for line in fh if line.startswith("#"))
                with open(raw) as fh:
                    spec = yaml.safe_load(fh)
                set_image(spec, image)
                with open(raw, "w") as fh:
                    fh.write(header)
                    yaml.safe_dump(spec, fh, sort_keys=True)
            shutil.copyfile(raw, target + ".tmp")
            os.replace(target + ".tmp", target)
        written.append(target)
    return written
