"""Run a pipeline in its own process group, tied to the life of ``autorater run``.

``autorater run`` starts the KFP local runner in a child process that leads a new process group (every
pipeline step it starts joins that group). The group never outlives the command:

- the command ends (success, error, Ctrl-C, SIGTERM): it stops the group before returning;
- the command is killed with SIGKILL (no handler runs): the child notices its parent died — on Linux at
  once (``prctl(PR_SET_PDEATHSIG)``), elsewhere within half a second (a watchdog thread polling the parent
  pid) — and stops its whole group, so no step goes on calling a model.

Stopping is SIGTERM to every process of the group — a judging step then starts no call, lets the calls in
flight finish and saves their answers to the response cache, so a re-run does not pay for them again — and
SIGKILL to whatever is left 12 seconds later.

The child runs with Python's UTF-8 mode on, so the steps' logs and progress bars never fail to encode on a
machine whose locale is not UTF-8; the command copies its output to the terminal (or, with ``--quiet``, to a
log whose tail is shown on failure; model-call heartbeat lines still show as they come), credentials
redacted, escaping what the terminal cannot show, and a user error raised in a step (bad input, the failure
budget) shown as its one ``error:`` line instead of a traceback. The child reports the pipeline's output
artifacts (name → local path) or the failure in a JSON file.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from typing import Any

from autorater_pipelines.models._progress import PROGRESS_MARK
from autorater_pipelines.redaction import redact

__all__ = ["PID_FILE", "run_isolated"]

PID_FILE = "pipeline.pid"
"""Written in the staging directory: the pid (and process group id) of the pipeline process."""

_GRACE_S = 5.0
_DRAIN_S = 12.0  # a judging step finishes the calls in flight and writes their answers to the cache (DRAIN_S 10 s)
_stopping = threading.Event()
_PR_SET_PDEATHSIG = 1


def run_isolated(
    template: str,
    params: dict[str, Any],
    staging: str,
    *,
    quiet: bool,
    pipeline_root: str | None = None,
    env: dict[str, str] | None = None,
) -> dict[str, str]:
    """Run ``template`` with ``params`` in the KFP local runner, in a child process group under ``staging``.

    Args:
        template: The compiled pipeline YAML.
        params: Pipeline parameters.
        staging: The run's staging directory; the pipeline root is ``staging/pipeline_root`` unless given.
        quiet: Send the runner's logs to ``staging/pipeline.log`` instead of the terminal (their tail is
            printed when the run fails).
        pipeline_root: Where the runner writes each task's outputs (``--keep-pipeline-root``: under OUT).
        env: Further environment variables of the pipeline process and its steps.

    Returns:
        The pipeline's output artifacts: name → local file path.

    Raises:
        PipelineRunError: a step failed (the message says which and why).
    """
    from autorater_pipelines.pipelines._local import PipelineRunError

    spec: dict[str, Any] = {
        "template": template,
        "params": params,
        "pipeline_root": pipeline_root or os.path.join(staging, "pipeline_root"),
        "result": os.path.join(staging, "result.json"),
        "parent": os.getpid(),
    }
    spec_path = os.path.join(staging, "run.json")
    with open(spec_path, "w", encoding="utf-8") as fh:
        json.dump(spec, fh)
    env = {**os.environ, **(env or {}), "PYTHONUTF8": "1", "PYTHONIOENCODING": "utf-8"}
    log_path = os.path.join(staging, "pipeline.log")
    sink: contextlib.AbstractContextManager[Any] = (
        open(log_path, "w", encoding="utf-8") if quiet else contextlib.nullcontext(sys.stdout)  # noqa: SIM115
    )
    with sink as log:
        child = subprocess.Popen(
            [sys.executable, "-m", __name__, spec_path],
            start_new_session=True,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        with open(os.path.join(staging, PID_FILE), "w", encoding="utf-8") as fh:
            fh.write(str(child.pid))
        lines = _QuietSink(log) if quiet else log
        forward = threading.Thread(target=_forward, args=(child, lines), name="pipeline-logs", daemon=True)
        forward.start()
        try:
            child.wait()
            forward.join(timeout=_GRACE_S)
        finally:
            _end_group(child)
        if isinstance(lines, _QuietSink):
            lines.print_warnings()
    try:
        with open(spec["result"], encoding="utf-8") as fh:
            result = json.load(fh)
    except (OSError, ValueError):
        result = {"ok": False, "error": f"the pipeline process ended with status {child.returncode} and no result"}
    if not result.get("ok"):
        if quiet and os.path.exists(log_path):
            with open(log_path, encoding="utf-8", errors="replace") as fh:
                tail = fh.read().splitlines()[-60:]
            _write(sys.stderr, "\n".join(tail) + "\n")
        raise PipelineRunError(str(result.get("error")))
    return {str(k): str(v) for k, v in result["outputs"].items()}


_TRACEBACK = "Traceback (most recent call last):"
_CHAINED = {
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
}
_OUR_ERROR = re.compile(
    r"^(?:autorater_pipelines\.errors\.)?(?:InputError|ModelCallError|AutoraterError): (?P<message>.*)$"
)


def _forward(child: subprocess.Popen[bytes], sink: Any) -> None:
    """Copy the pipeline's output to ``sink``, a user error's traceback collapsed to its one ``error:`` line.

    A step that stops on bad input or on the failure budget raises :class:`AutoraterError`; the runner would
    print its traceback (with any exception chained before it). A traceback ending in any other exception (a
    bug) is copied whole.
    """
    assert child.stdout is not None
    chain = _Chain(sink)
    for raw in iter(child.stdout.readline, b""):
        chain.feed(redact(raw.decode("utf-8", errors="replace")))
    chain.flush()


class _Chain:
    """Holds a traceback (and the tracebacks chained to it) until its last exception line is known."""

    def __init__(self, sink: Any) -> None:
        self.sink = sink
        self.held: list[str] = []
        self.indent = 0
        self.exception: str | None = None  # the last exception line seen in the held chain

    def feed(self, line: str) -> None:
        stripped = line.strip()
        if not self.held:
            if stripped == _TRACEBACK:
                self.held, self.indent, self.exception = [line], len(line) - len(line.lstrip()), None
            else:
                _write(self.sink, line)
            return
        if self.exception is not None:  # after an exception line: does the chain go on?
            if not stripped or stripped in _CHAINED or stripped == _TRACEBACK:
                self.held.append(line)
                if stripped == _TRACEBACK:
                    self.exception = None
                return
            self.flush()
            self.feed(line)
            return
        self.held.append(line)
        if stripped and len(line) - len(line.lstrip()) <= self.indent:
            self.exception = stripped  # "Module.Error: message" ends this traceback

    def flush(self) -> None:
        if not self.held:
            return
        ours = _OUR_ERROR.match(self.exception or "")
        _write(self.sink, f"{' ' * self.indent}error: {ours.group('message')}\n" if ours else "".join(self.held))
        self.held, self.exception = [], None


class _QuietSink:
    """The ``--quiet`` log file; model-call heartbeats also go to stderr as they come, warnings once per kind.

    A step's log lines at WARNING or above are counted by kind (:func:`warning_kind`), a message repeated word for
    word once (two steps that read the same dataset line warn about it in the same words), and, when the pipeline
    ends, :meth:`print_warnings` prints one line per kind: ``WARNING: <message>`` for a kind seen once, else
    ``WARNING ×<n>: <first message> (and <n - 1> more like it; ...)`` (``run --help``: warnings still print).
    Heartbeats (``[autorater progress] ...``: progress, failures and the last error, every ``heartbeat_s``
    seconds) and the line saying that model calls stopped early keep a quiet run from being silent for long.
    """

    def __init__(self, log: Any) -> None:
        self.log = log
        self.encoding = getattr(log, "encoding", None)
        self.warnings: dict[tuple[str, str], list[Any]] = {}  # kind -> [level, first message, count]
        self._seen: set[tuple[str, str]] = set()  # (level, message) already counted

    def write(self, text: str) -> None:
        self.log.write(text)
        for line in text.splitlines():
            clean = _ANSI.sub("", line).strip()
            if PROGRESS_MARK in clean:
                _write(sys.stderr, clean[clean.find(PROGRESS_MARK) :] + "\n")
            elif "calls stopped early" in clean:
                _write(sys.stderr, clean.split("]: ", 1)[-1] + "\n")  # without the KFP log prefix
            elif warning := _STEP_WARNING.search(clean):
                level, message = warning.group("level"), warning.group("message")
                if any(message.startswith(p) for p in _SUMMARIZED_BY_COMMAND) or (level, message) in self._seen:
                    continue  # the same words twice: a later step re-read the same file line (warned once)
                self._seen.add((level, message))
                entry = self.warnings.setdefault(warning_kind(level, message), [level, message, 0])
                entry[2] += 1

    def print_warnings(self) -> None:
        """One line per warning kind on stderr, with its count (nothing when the steps logged no warning)."""
        for level, message, count in self.warnings.values():
            if count == 1:
                _write(sys.stderr, f"{level}: {message}\n")
            else:
                more = f"and {count - 1} more like it; the run without --quiet prints each"
                _write(sys.stderr, f"{level} ×{count}: {message} ({more})\n")

    def flush(self) -> None:
        self.log.flush()


_SUMMARIZED_BY_COMMAND = ("could not import the ModelEvaluation of model",)
"""Step warnings that ``autorater run``'s summary states itself (``warning: no ModelEvaluation written …``)."""

_ID_DICT = re.compile(r"\{[^{}]*\}")
_VARIABLE = re.compile(r"\{[^{}]*\}|'[^']*'|\"[^\"]*\"|\d+(?:\.\d+)?")


def warning_kind(level: str, message: str) -> tuple[str, str]:
    """What makes two step warnings "the same kind" for ``--quiet``: the level and the message's fixed words.

    The text before the first ``: `` after an id dict (``rubric of {'id': '3'}: …`` → ``rubric of {}``), or
    else the whole message, with dicts, quoted strings and numbers blanked: ``rubric of {'id': '3'}: question 5
    repeats 1`` and ``rubric of {'id': '7'}: question 2: ignored dependency '2' on itself`` are one kind, a
    warning about ``validator_parameters.logprobs`` another.
    """
    ids = _ID_DICT.search(message)
    cut = message.find(": ", ids.end()) if ids else -1
    return level, _VARIABLE.sub("_", message[:cut] if cut >= 0 else message)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_STEP_WARNING = re.compile(r"\[KFP Executor [^\]]* (?P<level>WARNING|ERROR|CRITICAL)\]: (?P<message>.*)$")
"""A step's log line at WARNING or above (``[KFP Executor 2026-12-01 18:15:42,839 WARNING]: ...``), searched
anywhere in the line: a progress bar's text may precede it."""


def _write(sink: Any, text: str) -> None:
    try:
        sink.write(text)
        sink.flush()
    except UnicodeEncodeError:  # a terminal that cannot show it: escape what it cannot encode
        encoding = getattr(sink, "encoding", None) or "ascii"
        sink.write(text.encode(encoding, errors="backslashreplace").decode(encoding))
        sink.flush()
    except (OSError, ValueError):
        pass


def _end_group(child: subprocess.Popen[bytes]) -> None:
    """Kill whatever is left of the child's process group (SIGTERM, then SIGKILL after a grace period)."""
    for sig, wait in ((signal.SIGTERM, _DRAIN_S + _GRACE_S), (signal.SIGKILL, _GRACE_S)):
        try:
            os.killpg(child.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and _group_alive(child.pid):
            child.poll()
            time.sleep(0.05)
        if not _group_alive(child.pid):
            break
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(timeout=_GRACE_S)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


# ---------------------------------------------------------------------------------------------- child side
def _kill_own_group(*_: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.killpg(os.getpgrp(), signal.SIGKILL)


def _stop_group(*_: Any) -> None:
    """Ask every step of the group to stop (SIGTERM), then kill whatever is left after ``_DRAIN_S``.

    A judging step stops starting calls on SIGTERM and saves the answers of the calls in flight.
    """
    if _stopping.is_set():
        return
    _stopping.set()
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.killpg(os.getpgrp(), signal.SIGTERM)
    threading.Timer(_DRAIN_S, _kill_own_group).start()


def _tie_to_parent(parent: int) -> None:
    """Die with the whole process group when ``autorater run`` (pid ``parent``) dies or asks us to."""
    signal.signal(signal.SIGTERM, _stop_group)
    signal.signal(signal.SIGINT, _stop_group)
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if os.getppid() != parent:  # the parent died before prctl took effect
        _kill_own_group()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        _stop_group()

    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()


def _outputs(outputs: dict[str, Any]) -> dict[str, str]:
    paths = {}
    for name, value in outputs.items():
        path = getattr(value, "path", None) or getattr(value, "uri", None)
        if isinstance(path, str) and path:
            paths[name] = path
    return paths


def main(spec_path: str) -> int:
    """The child: run the pipeline and write ``{"ok", "outputs"}`` or ``{"ok": false, "error"}``."""
    with open(spec_path, encoding="utf-8") as fh:
        spec = json.load(fh)
    _tie_to_parent(int(spec["parent"]))
    from autorater_pipelines.pipelines._local import PipelineRunError, run_local

    try:
        result = {"ok": True, "outputs": _outputs(run_local(spec["template"], spec["params"], spec["pipeline_root"]))}
    except PipelineRunError as exc:
        result = {"ok": False, "error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - reported by the parent in one line, never as a traceback
        result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    with open(spec["result"] + ".tmp", "w", encoding="utf-8") as fh:
        json.dump(result, fh)
    os.replace(spec["result"] + ".tmp", spec["result"])
    if _stopping.is_set():  # stopped from outside: nothing of the group may outlive this process
        _kill_own_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
