"""Run a lightweight component whose command line is too long for the OS (local runner only).

The KFP local runner passes a step's whole executor input (every parameter value, as JSON) as one
command-line argument; Linux refuses a single argument over 128 KiB ("Argument list too long"), so a
200,000-character template could not run locally. :func:`run_local_subprocess` is installed in place of the
runner's: a command with an argument over :data:`ARG_LIMIT` bytes is written to a JSON file and this module
runs it — doing what the component's ``sh -ec`` launcher does (write the component source to a file, run
``kfp.dsl.executor_main`` with the same arguments) inside one Python process, so no long argument is ever
passed to ``exec``. Shorter commands run exactly as before. Vertex AI passes inputs its own way.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from typing import Any

__all__ = ["ARG_LIMIT", "long_args_runner"]

ARG_LIMIT = 64 * 1024
"""Commands with an argument longer than this many bytes go through a file (the OS limit is 128 KiB)."""


def long_args_runner(original: Callable[..., int]) -> Callable[..., int]:
    """Wrap the local runner's ``run_local_subprocess(full_command, env_vars)`` (see the module docstring)."""

    def run_local_subprocess(full_command: list[str], env_vars: dict[str, str] | None = None) -> int:
        if max((len(part.encode("utf-8")) for part in full_command), default=0) <= ARG_LIMIT:
            return original(full_command=full_command, env_vars=env_vars)
        fd, path = tempfile.mkstemp(prefix="kfp-command-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(full_command, fh)
            return original(full_command=[sys.executable, "-m", __name__, path], env_vars=env_vars)
        finally:
            with contextlib.suppress(OSError):
                os.remove(path)

    return run_local_subprocess


def _launch(command: list[str]) -> Any:
    """Do what the component's launcher script does: ``sh -ec SCRIPT SOURCE ARGS...``."""
    if len(command) < 4 or command[0] != "sh" or "kfp.dsl.executor_main" not in command[2]:
        raise SystemExit(f"not a lightweight component command: {command[:3]!r}")
    source, args = command[3], command[4:]
    directory = tempfile.mkdtemp(prefix="kfp-component-")
    module_path = os.path.join(directory, "ephemeral_component.py")
    with open(module_path, "w", encoding="utf-8") as fh:
        fh.write(source)
    os.environ["_KFP_RUNTIME"] = "true"
    sys.argv = ["kfp.dsl.executor_main", "--component_module_path", module_path, *args]
    from kfp.dsl.executor_main import executor_main

    return executor_main()


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as handle:
        _launch(json.load(handle))
