"""The file-system seam: every byte this package reads or writes goes through a :class:`FileSystem`.

A URI's scheme (``gs`` in ``gs://bucket/x.jsonl``; ``""`` for a local path) picks the file system from a
registry. The local file system is built in; ``gs://`` (:mod:`._gcs`) is registered by the package's
``__init__`` with :func:`register_filesystem`, and other schemes can be added the same way without changes to
the readers and writers.
"""

from __future__ import annotations

import glob
import os
import re
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from autorater_pipelines.errors import InputError

__all__ = [
    "FileSystem",
    "LocalFileSystem",
    "check_file_uri",
    "filesystem_for",
    "has_wildcard",
    "register_filesystem",
    "split_scheme",
]

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")


class FileSystem(Protocol):
    """What a storage backend must provide. URIs are passed through unchanged (scheme included)."""

    def read_bytes(self, uri: str) -> bytes:
        """Return the whole content of ``uri``; raise :class:`InputError` if it does not exist."""
        ...

    def write_atomic(self, uri: str, chunks: Iterable[bytes]) -> None:
        """Write ``chunks`` to ``uri`` so that readers see either the old file or the whole new one."""
        ...

    def glob(self, pattern: str) -> list[str]:
        """Return the URIs matching a ``*``/``?``/``[...]`` pattern, sorted; a file named exactly ``pattern`` alone."""
        ...


def split_scheme(uri: str) -> tuple[str, str]:
    """Split ``"gs://b/x"`` into ``("gs", "b/x")``; a local path gives ``("", path)``."""
    match = _SCHEME.match(uri)
    if not match:
        return "", uri
    return match.group(1).lower(), uri[match.end() :]


def has_wildcard(uri: str) -> bool:
    """Return True when ``uri`` contains a glob wildcard (``*``, ``?`` or ``[``)."""
    return any(ch in uri for ch in "*?[")


def not_found(path: str | Path) -> str:
    """``"not found (resolved to '/abs/path'); check the path and the current directory, ..."``: a missing local file.

    The one wording of a missing local file (datasets, replay files), naming the absolute path a relative one
    resolved to from the current directory.
    """
    resolved = str(Path(path).expanduser().absolute())
    return f"not found (resolved to {resolved!r}); check the path and the current directory, or pass an absolute path"


class LocalFileSystem:
    """Local paths. Writes go to a temporary file in the same directory, then ``os.replace``."""

    def read_bytes(self, uri: str) -> bytes:
        """Read a local file.

        Raises:
            InputError: The path does not exist, is a directory, or cannot be read.

        """
        path = Path(uri).expanduser()
        if not path.exists():
            raise InputError(f"file {not_found(path)}", source=uri)
        if path.is_dir():
            raise InputError(
                "is a directory, expected a file; pass the file path or a wildcard such as 'dir/*.jsonl'",
                source=uri,
            )
        try:
            return path.read_bytes()
        except OSError as exc:
            raise InputError(f"cannot be read: {exc.strerror or exc}", source=uri) from exc

    def write_atomic(self, uri: str, chunks: Iterable[bytes]) -> None:
        """Write ``chunks`` to ``uri`` atomically, creating parent directories.

        The temporary file is created with mode 0o666 minus the process umask (like ``open``), is
        flushed and fsynced, then renamed over ``uri``; on any error it is removed.
        """
        path = Path(uri).expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "wb") as handle:
                for chunk in chunks:
                    handle.write(chunk)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def glob(self, pattern: str) -> list[str]:
        """Return local paths matching ``pattern`` (``**`` is recursive), sorted; files only.

        A file whose name is ``pattern`` itself (``d[1].jsonl``, ``what?.csv``) is that file alone: its name is
        not read as a wildcard.
        """
        path = os.path.expanduser(pattern)
        if os.path.isfile(path):
            return [path]
        return sorted(m for m in glob.glob(path, recursive=True) if os.path.isfile(m))


_FILESYSTEMS: dict[str, FileSystem] = {
    "": LocalFileSystem(),
    "file": LocalFileSystem(),
}


def register_filesystem(scheme: str, filesystem: FileSystem) -> None:
    """Make ``filesystem`` handle URIs of ``scheme`` (e.g. ``"gs"``), replacing any previous one."""
    _FILESYSTEMS[scheme.lower()] = filesystem


def filesystem_for(uri: str) -> tuple[FileSystem, str]:
    """Return the file system for ``uri`` and the URI to pass it (``file://`` is stripped).

    Raises:
        InputError: The scheme has no registered file system; the message lists the known ones.

    """
    scheme, rest = split_scheme(uri)
    if scheme not in _FILESYSTEMS:
        known = ", ".join(f"{s}://" for s in sorted(_FILESYSTEMS) if s) + ", or a local path"
        raise InputError(f"unsupported URI scheme {scheme + '://'!r}; expected one of {known}", source=uri)
    return _FILESYSTEMS[scheme], (rest if scheme == "file" else uri)


def check_file_uri(uri: str) -> None:
    """Check a file URI's form without any request: a registered scheme, and what its file system checks first.

    A file system may have a ``check_uri(uri)`` method (:meth:`GcsFileSystem.check_uri
    <autorater_pipelines.io.GcsFileSystem.check_uri>`: bucket and object name) that its ``read_bytes`` and ``glob``
    call before any request; it is called here, so a dry run refuses what reading would refuse, in the same words.

    Raises:
        InputError: An unsupported scheme, or the file system's own check.

    """
    filesystem, target = filesystem_for(uri)
    check = getattr(filesystem, "check_uri", None)
    if check is not None:
        check(target)
