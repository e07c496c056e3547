"""Writing a re-scoring (:func:`write_rescore`).

In place, every replaced version is kept; into another directory, that directory is checked before anything
is written.
"""

from __future__ import annotations

import filecmp
import os
import re
import shutil

from autorater_pipelines import io, registry
from autorater_pipelines.errors import InputError
from autorater_pipelines.report._out_dir import MARKER_FILE, check_output_dir, marked_files, record_outputs
from autorater_pipelines.report._outputs import ERRORS_FILE, METRICS_FILE, _read_json
from autorater_pipelines.report._rescore import RescoreResult, is_version_copy

__all__ = ["keep_version", "write_rescore"]


def _version_name(directory: str, name: str) -> str:
    """``<stem>.<n><ext>`` with the next free ``n`` (1 = the run's own file, 2 = the first re-scoring's …)."""
    stem, ext = os.path.splitext(name)
    taken = re.compile(rf"^{re.escape(stem)}\.(\d+){re.escape(ext)}$")
    numbers = [int(m.group(1)) for m in (taken.match(n) for n in os.listdir(directory)) if m]
    return f"{stem}.{max(numbers, default=0) + 1}{ext}"


def keep_version(directory: str, name: str) -> str:
    """Copy ``directory/name`` to ``<stem>.<n><ext>`` (next free ``n``, atomically) before it is replaced.

    Returns:
        The path of the copy.
    """
    backup = os.path.join(directory, _version_name(directory, name))
    shutil.copyfile(os.path.join(directory, name), backup + ".tmp")
    os.replace(backup + ".tmp", backup)
    return backup


def write_rescore(result: RescoreResult, directory: str, output_dir: str | None = None) -> list[str]:
    """Write a re-scoring's files, each atomically.

    Args:
        result: From :func:`rescore`.
        directory: The run's output directory that was re-scored.
        output_dir: Where to write. None: replace the files in ``directory``, first copying each
            replaced file to ``<name>.<n>.<ext>`` with the next free ``n`` (``metrics.1.json`` is the run's
            own, ``metrics.2.json`` the first re-scoring's …: every earlier version is kept). A
            directory: write the new files there together with copies of the run's other output files,
            so it is a complete output directory for ``autorater report``; ``directory`` is left untouched.
            A directory holding another run is refused before anything is written (:func:`_check_target`);
            in one holding an earlier re-scoring of the same rows, every file replaced is kept as
            ``<name>.<n>.<ext>`` first.

    The names written are added to the target's marker (:mod:`autorater_pipelines.report._out_dir`), so
    that a later ``autorater run`` into it replaces them; in place, only when the run's directory has one.

    A file whose new content equals the one in place is left as it is (no version copy). ``output_dir`` is
    compared with ``directory`` after resolving symbolic links: a link to the run's folder re-scores in place.

    Returns:
        The paths written (new files and the copies of the versions they replace; [] in place when nothing
        changed).

    Raises:
        InputError: ``output_dir`` is not a directory or holds another run (nothing written).
    """
    target = output_dir or directory
    elsewhere = bool(output_dir) and os.path.realpath(target) != os.path.realpath(directory)  # a link to it: here
    copies = _files_to_copy(result, directory) if elsewhere else []
    if elsewhere:
        _check_target(result, directory, target, [*copies, *result.files])
    marked = os.path.isdir(target) and marked_files(target) is not None  # an invalid marker: refused here
    written = []
    os.makedirs(target, exist_ok=True)
    for name in copies:  # every file replaced is kept as <name>.<n>.<ext>
        path = os.path.join(target, name)
        if os.path.isfile(path):
            written.append(keep_version(target, name))
        shutil.copyfile(os.path.join(directory, name), path + ".tmp")
        os.replace(path + ".tmp", path)
        written.append(path)
    for name, content in result.files.items():
        path = os.path.join(target, name)
        fresh = f"{path}.{os.getpid()}.new"
        (io.write_jsonl if name.endswith(".jsonl") else io.write_json)(fresh, content)
        if os.path.isfile(path) and filecmp.cmp(path, fresh, shallow=False):
            os.remove(fresh)  # unchanged: neither a version copy nor a rewrite
            continue
        if os.path.isfile(path):
            written.append(keep_version(target, name))
        os.replace(fresh, path)
        written.append(path)
    if elsewhere or marked:
        record_outputs(target, [os.path.basename(p) for p in written], "autorater rescore")
    return written


def _files_to_copy(result: RescoreResult, directory: str) -> list[str]:
    """The run's other output files that ``--output-dir`` receives unchanged."""
    return [
        name
        for name in sorted(os.listdir(directory))
        if name not in result.files
        and name.endswith((".jsonl", ".json"))
        and not is_version_copy(name)
        and name != MARKER_FILE
        and os.path.isfile(os.path.join(directory, name))
    ]


def _check_target(result: RescoreResult, directory: str, target: str, names: list[str]) -> None:
    """Refuse an ``--output-dir`` that holds another run, before anything is written.

    Accepted: a new or empty directory, or one holding an earlier re-scoring of the same run (its
    ``metrics.json`` has ``rescore_options``, its rows have the run's ids, in order, and its marker lists the
    files replaced: :func:`autorater_pipelines.report._out_dir.check_output_dir`, as for ``autorater run``).

    Raises:
        InputError: ``target`` is not a directory, holds another pipeline's run (or both kinds), a run's own
            outputs, a re-scoring of other rows, files autorater did not write (no marker), or has a directory
            where an output file goes.
    """
    from autorater_pipelines.report._render import REPORT_FILE

    held = sorted(s.name for s in registry.specs() if os.path.isfile(os.path.join(target, s.row_file)))
    if held:
        _check_same_run(result, directory, target, held, f"--output-dir {target}")
    # As `autorater run`: a new or empty directory, or one whose marker lists the files replaced.
    report = [REPORT_FILE] if os.path.isfile(os.path.join(directory, REPORT_FILE)) else []
    check_output_dir(target, [*names, *report])


def _check_same_run(result: RescoreResult, directory: str, target: str, held: list[str], source: str) -> None:
    """Refuse a target holding a run's rows unless they are an earlier re-scoring of ``directory``'s rows."""
    fix = "give an empty or new --output-dir (or re-score in place, which keeps every version)"
    spec = registry.get(result.kind)
    if held != [result.kind]:
        runs = " and ".join(registry.get(k).a_run for k in held)
        raise InputError(
            f"holds the outputs of {runs} ({', '.join(registry.get(k).row_file for k in held)}); "
            f"re-scoring {spec.a_run} there would mix two runs: {fix}",
            source=source,
        )
    metrics_path = os.path.join(target, METRICS_FILE)
    metrics = _read_json(metrics_path) if os.path.isfile(metrics_path) else {}
    if "rescore_options" not in metrics:
        raise InputError(f"holds the outputs of {spec.a_run}, not a re-scoring; {fix}", source=source)
    ours, columns = _row_ids(directory, result.kind)
    theirs, _ = _row_ids(target, result.kind, columns)
    if ours != theirs:
        raise InputError(
            f"holds a re-scoring of other rows than {directory}'s ({spec.row_file} ids differ); {fix}",
            source=source,
        )


def _row_ids(directory: str, kind: str, columns: list[str] | None = None) -> tuple[list[tuple[str, ...]], list[str]]:
    """The id of every row of a run's row file, in order, and the id columns used."""
    spec = registry.get(kind)
    rows = io.read_jsonl(os.path.join(directory, spec.row_file))
    if columns is None:
        errors_path = os.path.join(directory, ERRORS_FILE)
        errors = io.read_jsonl(errors_path) if os.path.isfile(errors_path) else []
        columns = spec.load("id_columns")(rows, errors)
    return [tuple(str(r.get(c)) for c in columns) for r in rows], columns
