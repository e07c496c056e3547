"""Subcommands of the ``autorater`` CLI, one module each.

Each module defines ``register(subparsers)``, which adds its parser and sets ``func`` to a handler
``(args) -> int``. Modules import kfp and cloud SDKs lazily, inside handlers.
"""

COMMAND_MODULES = ("compile", "run", "submit", "publish", "report", "rescore", "params")
"""Modules of :mod:`autorater_pipelines.commands` registered by the CLI, in help order."""
