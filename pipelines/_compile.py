"""Compile the pipelines to the published YAML templates, with one container image for all components."""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
from collections.abc import Callable
from typing import Any

__all__ = ["PIPELINE_NAMES", "compile_pipelines", "load_pipeline_function", "set_image"]

PIPELINE_NAMES = ("autosxs", "gecko")
"""Pipelines compiled by ``autorater compile``: ``<name>.yaml`` each."""


def load_pipeline_function(name: str) -> Callable[..., Any]:
    """Return the ``@dsl.pipeline`` function named ``name`` (``autosxs`` …).

    Raises:
        ValueError: an unknown pipeline name (the message lists the valid ones).
    """
    if name not in PIPELINE_NAMES:
        raise ValueError(f"unknown pipeline {name!r}; valid: {list(PIPELINE_NAMES)}")
    module = importlib.import_module(f"autorater_pipelines.pipelines.{name}")
    return getattr(module, f"{name}_pipeline")


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
    import yaml  # here: `autorater submit` and `run` import this package for PIPELINE_NAMES only
    from kfp import compiler

    os.makedirs(output_dir, exist_ok=True)
    written = []
    for name in PIPELINE_NAMES:
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
