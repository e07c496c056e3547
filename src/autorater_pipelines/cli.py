"""The ``autorater`` command line: compile, run locally, and inspect the templates of the registered pipelines.

Exit status: 0 success, 1 the run failed (a pipeline step failed), 2 bad input (parameters, dataset,
template), 141 stdout closed by its reader (``| head``; no traceback). Bad input is reported in one line
without a traceback and leaves no output files.
Subcommands live in :mod:`autorater_pipelines.commands`, one module each.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import signal
import sys
from collections.abc import Sequence

from autorater_pipelines import __version__, registry
from autorater_pipelines.commands import COMMAND_MODULES
from autorater_pipelines.errors import AutoraterError, InputError
from autorater_pipelines.redaction import RedactionFilter, redact

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``autorater`` (exposed for tests and docs)."""
    parser = argparse.ArgumentParser(
        prog="autorater",
        description=f"Open evaluation pipelines ({', '.join(registry.names())}) for Kubeflow Pipelines / Vertex AI.",
    )
    parser.add_argument("--version", action="version", version=f"autorater-pipelines {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"autorater_pipelines.commands.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``autorater`` command; returns the exit status."""
    args = build_parser().parse_args(argv)
    _tolerate_narrow_terminals()
    # --quiet (autorater run) keeps warnings only: its summary already says what the INFO lines would.
    level = logging.DEBUG if args.verbose else logging.WARNING if getattr(args, "quiet", False) else logging.INFO
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    for handler in logging.getLogger().handlers:  # no credential in a log line, whoever logged it
        if not any(isinstance(f, RedactionFilter) for f in handler.filters):
            handler.addFilter(RedactionFilter())
    try:
        previous = signal.signal(signal.SIGTERM, _terminate)
    except ValueError:  # not the main thread (e.g. called from a worker): keep the default handler
        previous = None
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("error: interrupted; no output was written", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _reader_gone()
    except InputError as exc:
        print(f"error: {redact(str(exc))}", file=sys.stderr)
        return 2
    except AutoraterError as exc:
        print(f"error: {redact(str(exc))}", file=sys.stderr)
        return 1
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _tolerate_narrow_terminals() -> None:
    """On a stdout/stderr that cannot encode UTF-8 (``LC_ALL=C``, UTF-8 mode off), replace what it cannot show.

    The summary prints ``–``, ``→`` and ``×``; an ASCII stream would raise UnicodeEncodeError after a
    successful run.
    """
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
        if encoding != "utf8" and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # a closed or detached stream
                pass


def _reader_gone() -> int:
    """End quietly when stdout was closed by its reader (``autorater run … | head -1``), as Unix tools do.

    The rest of the output goes to ``/dev/null`` (so the interpreter's final flush raises nothing); the
    status is that of a process ended by SIGPIPE in a shell (128 + 13).
    """
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file descriptor (e.g. captured by a test)
        pass
    finally:
        os.close(devnull)
    return 128 + 13


def _terminate(signum: int, frame: object) -> None:
    """SIGTERM: unwind like Ctrl-C so staged outputs are removed."""
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
