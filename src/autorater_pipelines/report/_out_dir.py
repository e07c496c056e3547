"""Which files of an output directory autorater wrote: the marker, the run lock, and replacing outputs.

An output directory (``autorater run --output-dir OUT``, ``autorater rescore --output-dir``) holds the
marker :data:`MARKER_FILE`, a JSON object whose ``files`` lists the names (in OUT, no subfolders) that
autorater wrote there. Only those may be replaced or removed by a later run; anything else in OUT is the
user's and is never touched:

- :func:`check_output_dir` refuses, before anything runs, a non-empty OUT without a marker, and an OUT
  where a file the run will write exists but is not in the marker (a user's file of that name);
- :func:`replace_outputs` moves a run's staged files into OUT (each with an atomic rename) and removes the
  files the marker lists that this run did not write again (an earlier run's ``judgments.json``,
  ``model_evaluations.json``, re-scored versions ``metrics.<n>.json`` …); the marker is rewritten first
  with both lists and last with the new one, so a kill in between leaves nothing unlisted;
- :func:`record_outputs` adds files written into OUT (by a re-scoring) to its marker;
- :func:`check_complete` refuses to read an OUT whose run was killed while moving its files in (the marker's
  ``complete`` is false until the last file is in place), as ``autorater report`` / ``rescore`` would mix runs;
- :class:`OutputLock` keeps a second run out of OUT while one is writing it: an ``flock`` on the sibling
  file ``.OUT.lock``, which records the holder's pid, host and start time. The kernel releases the lock
  when its process dies, so a lock file left by a killed run is recognised as stale and taken over.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import shutil
import socket
import sys
from collections.abc import Iterable
from typing import Any

from autorater_pipelines.errors import InputError

__all__ = [
    "MARKER_FILE",
    "OutputLock",
    "check_complete",
    "check_output_dir",
    "check_replaceable",
    "marked_files",
    "record_outputs",
    "replace_outputs",
]

MARKER_FILE = ".autorater-outputs.json"
"""The marker in an output directory: ``{"written_by", "files": [names written there], "complete", "updated"}``."""

_SOURCE = "--output-dir"
_FOLDERS = ("pipeline_root",)
"""The only folder autorater writes in an output directory (``--keep-pipeline-root``); it may remove only it."""


def _plain(name: Any) -> bool:
    """A file name directly in the directory (a marker never makes autorater touch anything outside it)."""
    return isinstance(name, str) and bool(name) and name not in (".", "..", MARKER_FILE) and "/" not in name


def marked_files(out_dir: str) -> set[str] | None:
    """The names the marker of ``out_dir`` lists, or None when it has no marker.

    Raises:
        InputError: the marker exists but is not a JSON object with a ``files`` list of names.
    """
    marker = _read_marker(out_dir)
    return None if marker is None else set(marker["files"])


def check_complete(out_dir: str) -> None:
    """Refuse to read an output directory whose run was killed while its files were moved in.

    Raises:
        InputError: the marker says the move did not finish (old and new files may be mixed), or is not valid.
    """
    marker = _read_marker(out_dir)
    if marker is not None and marker.get("complete") is False:
        raise InputError(
            f"holds a run that was interrupted while its outputs were moved in ({MARKER_FILE} says so), so its "
            "files may come from two runs; run it again into the same --output-dir",
            source=out_dir,
        )


def _read_marker(out_dir: str) -> dict[str, Any] | None:
    path = os.path.join(out_dir, MARKER_FILE)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            marker = json.load(fh)
    except (OSError, ValueError) as exc:
        marker = exc
    files = marker.get("files") if isinstance(marker, dict) else None
    if not isinstance(files, list) or not all(_plain(n) for n in files):
        raise InputError(
            f"is not an autorater output marker (expected a JSON object with a list of file names under 'files', "
            f"got {str(marker)[:120]!r}); it was changed by hand: remove it together with the files it listed, "
            "or pick a new --output-dir",
            source=path,
        )
    return marker


def _write_marker(out_dir: str, files: Iterable[str], written_by: str, complete: bool = True) -> None:
    path = os.path.join(out_dir, MARKER_FILE)
    marker = {
        "written_by": written_by,
        "files": sorted(set(files)),
        "complete": complete,
        "updated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "note": "autorater replaces or removes only the files listed here; every other file is yours",
    }
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(marker, fh, indent=1)
        fh.write("\n")
    os.replace(tmp, path)


def check_output_dir(out_dir: str, names: Iterable[str], folders: Iterable[str] = (), beside: bool = False) -> set[str]:
    """Refuse an output directory autorater may not write ``names`` into; return what its marker lists.

    Args:
        out_dir: The output directory (need not exist).
        names: The files the run will write in it.
        folders: The folders it will write in it (``pipeline_root``).
        beside: Also require write access to the directory holding ``out_dir`` (``autorater run`` keeps its
            :class:`OutputLock` file and staging folder there).

    Returns:
        The names an earlier run wrote there (empty for a new or empty directory).

    Raises:
        InputError: ``out_dir`` is a file, a dangling symbolic link, or cannot be created or written (with
            ``beside``: its parent is not writable); a file goes where a directory is;
            ``out_dir`` is not empty and has no marker (naming what it holds); its marker is not valid; or one
            of ``names``/``folders`` exists there but is not in the marker.
    """
    names, folders = list(names), list(folders)
    if os.path.islink(out_dir) and not os.path.exists(out_dir):
        raise InputError(
            f"{out_dir!r} is a symbolic link to {os.readlink(out_dir)!r}, which does not exist; create that "
            "directory, remove the link, or pick another --output-dir",
            source=_SOURCE,
        )
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise InputError(f"{out_dir!r} exists and is not a directory", source=_SOURCE)
    for name in names:
        if os.path.isdir(os.path.join(out_dir, name)):
            path = os.path.join(out_dir, name)
            raise InputError(f"{path!r} is a directory; remove it or pick another --output-dir", source=_SOURCE)
    existing = out_dir
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing) or not os.access(existing, os.W_OK | os.X_OK):
        raise InputError(
            f"cannot create or write {out_dir!r}: {existing!r} is not a writable directory", source=_SOURCE
        )
    if beside:  # OutputLock's lock file and a run's staging folder go next to OUT (and next to where it points)
        for parent in sorted({os.path.dirname(os.path.abspath(out_dir)), os.path.dirname(os.path.realpath(out_dir))}):
            if os.path.isdir(parent) and not os.access(parent, os.W_OK | os.X_OK):
                raise InputError(
                    f"{out_dir!r} is in {parent!r}, which is not writable; a run keeps its lock file and staging "
                    "folder next to --output-dir, so pick an --output-dir inside a directory you can write",
                    source=_SOURCE,
                )
    if not os.path.isdir(out_dir):
        return set()
    present = sorted(os.listdir(out_dir))
    marked = marked_files(out_dir)
    if marked is None:
        if not present:
            return set()
        shown = ", ".join(present[:5]) + (f" and {len(present) - 5} more" if len(present) > 5 else "")
        raise InputError(
            f"{out_dir!r} is not empty ({shown}) and holds no {MARKER_FILE}, so no earlier autorater run wrote it; "
            "a run replaces the files in its --output-dir, so pick a new or empty --output-dir (or move those "
            "files out; an output directory of an autorater version before the marker: remove it first)",
            source=_SOURCE,
        )
    theirs = sorted(n for n in [*names, *folders] if n not in marked and os.path.lexists(os.path.join(out_dir, n)))
    if theirs:
        raise InputError(
            f"{os.path.join(out_dir, theirs[0])!r} was not written by an earlier autorater run (it is not listed "
            f"in {MARKER_FILE}) and this run would replace it; move it out or pick another --output-dir",
            source=_SOURCE,
        )
    return marked


def check_replaceable(path: str, source: str, force: bool = False) -> None:
    """Refuse to replace an existing ``path`` that no autorater run wrote (``autorater report --output``).

    Accepted: ``path`` does not exist, or it is a file its directory's marker lists, or ``force``.

    Raises:
        InputError: ``path`` is a directory, or exists and is not listed in its directory's marker (nothing
            written), or that marker is not valid.
    """
    if os.path.isdir(path) and not os.path.islink(path):
        raise InputError(f"{path!r} is a directory; give a file name", source=source)
    if force or not os.path.lexists(path):
        return
    directory, name = os.path.split(os.path.abspath(path))
    marked = marked_files(directory)
    if marked is not None and name in marked and not os.path.islink(path):
        return
    raise InputError(
        f"{path!r} exists and was not written by an autorater run (it is not listed in a {MARKER_FILE} beside "
        "it); give a new file name, move it out, or pass --force to replace it",
        source=source,
    )


def record_outputs(out_dir: str, names: Iterable[str], written_by: str) -> None:
    """Add ``names`` (just written into ``out_dir``) to its marker, creating the marker if there is none.

    Raises:
        InputError: the existing marker is not valid.
    """
    _write_marker(out_dir, (marked_files(out_dir) or set()) | set(names), written_by)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


def replace_outputs(out_dir: str, staged: dict[str, str], written_by: str, keep: Iterable[str] = ()) -> list[str]:
    """Move a run's staged files into ``out_dir`` and remove what an earlier run wrote there and this one did not.

    Call it after :func:`check_output_dir` (under :class:`OutputLock`). Files not in the marker are never
    touched.

    Args:
        out_dir: The output directory (created if needed).
        staged: Name in ``out_dir`` → staged file (on the same file system, moved with ``os.replace``).
        written_by: Recorded in the marker (e.g. ``autorater run autosxs``).
        keep: Names this run wrote in place (``pipeline_root``): listed in the marker, not removed.

    Returns:
        The names of the earlier run's outputs that were removed.

    Raises:
        InputError: the marker is not valid (nothing moved).
    """
    os.makedirs(out_dir, exist_ok=True)
    before = marked_files(out_dir) or set()
    new = set(staged) | set(keep)
    _write_marker(out_dir, before | new, written_by, complete=False)  # a kill from here leaves nothing unlisted
    for name, src in staged.items():
        os.replace(src, os.path.join(out_dir, name))
    stale = []
    for name in sorted(n for n in before - new if os.path.lexists(os.path.join(out_dir, n))):
        path = os.path.join(out_dir, name)
        if name not in _FOLDERS and os.path.isdir(path) and not os.path.islink(path):
            # autorater writes no folder but pipeline_root: a marker listing another one was edited by hand
            print(f"left {path} alone: {MARKER_FILE} lists it, but autorater writes no such folder", file=sys.stderr)
            continue
        _remove(path)
        stale.append(name)
    _write_marker(out_dir, new, written_by)
    return stale


class OutputLock:
    """Exclusive right to write one output directory, for the life of a run (``with OutputLock(out_dir):``).

    Raises:
        InputError: on enter, another live process holds the lock (naming its pid, host and start time).
    """

    def __init__(self, out_dir: str) -> None:
        parent, base = os.path.split(os.path.realpath(out_dir))  # one lock for every path to the folder
        self.out_dir = out_dir
        self.path = os.path.join(parent, f".{base}.lock")
        self._fd: int | None = None

    def __enter__(self) -> OutputLock:
        import fcntl

        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
            except OSError as exc:
                raise InputError(
                    f"cannot open the lock file {self.path!r} of {self.out_dir!r} ({exc.strerror}); "
                    + ("it is a symbolic link: remove it" if os.path.islink(self.path) else "check its parent")
                    + " or pick another --output-dir",
                    source=_SOURCE,
                ) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                raise InputError(
                    f"another autorater run ({holder}) is writing {self.out_dir!r}; wait until it ends or pick "
                    f"another --output-dir (the lock is {self.path!r}; it is released when that process ends)",
                    source=_SOURCE,
                ) from None
            with contextlib.suppress(FileNotFoundError):
                if os.fstat(fd).st_ino == os.stat(self.path).st_ino:
                    break  # else the holder removed the file as we locked it: lock the new one
            os.close(fd)
        if os.pread(fd, 1, 0) and not _read_holder(fd):  # someone's file, not a lock autorater wrote
            os.close(fd)
            raise InputError(
                f"{self.path!r} exists and is not an autorater lock file (autorater writes one with the pid, host "
                f"and start time of the run writing {self.out_dir!r}); move it out or pick another --output-dir",
                source=_SOURCE,
            )
        left = _read_holder(fd)
        if left:
            print(f"took over {self.path} left by an interrupted run ({left})", file=sys.stderr)
        stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": stamp}).encode(), 0)
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.path)  # while still locked: whoever opens it next locks a new file
            os.close(self._fd)
            self._fd = None


def _read_holder(fd: int) -> str:
    """``pid N on host H since T`` from a lock file ('' when empty or unreadable)."""
    try:
        holder = json.loads(os.pread(fd, 4096, 0) or b"null")
    except (OSError, ValueError):
        return ""
    if not isinstance(holder, dict) or "pid" not in holder:
        return ""
    return f"pid {holder.get('pid')} on {holder.get('host')} since {holder.get('started')}"
