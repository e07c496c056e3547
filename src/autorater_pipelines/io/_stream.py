"""Streaming JSONL: read a file line by line, write one atomically row by row, with memory bounded by one row.

:func:`iter_jsonl` gives what :func:`~autorater_pipelines.io.read_jsonl` gives (the same rows, the same errors
naming the file and line), without holding the file: a local file is read line by line, any other file system
through its ``open_read`` method when it has one (``gs://``: a chunked download), else whole.
:class:`JsonlWriter` writes the bytes :func:`~autorater_pipelines.io.write_jsonl` writes, row by row, and makes
the file appear only on :meth:`JsonlWriter.commit` (a local temporary file renamed over the target; other file
systems get the spooled bytes through their ``write_atomic``), so readers never see half a result.
"""

from __future__ import annotations

import io as _io
import os
import secrets
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from autorater_pipelines.io._formats import decode_utf8, parse_jsonl_text
from autorater_pipelines.io._fs import LocalFileSystem, filesystem_for
from autorater_pipelines.io._jsonsafe import dumps
from autorater_pipelines.redaction import redactor

__all__ = ["JsonArrayWriter", "JsonlFile", "JsonlWriter", "iter_jsonl", "jsonl_rows", "open_read"]

_CHUNK = 1 << 20


def open_read(path: str) -> IO[bytes]:
    """Open a file of any registered file system for reading bytes (streamed where the file system can).

    Raises:
        InputError: the file is missing or unreadable (the file system's ``read_bytes`` message).
    """
    filesystem, target = filesystem_for(path)
    if isinstance(filesystem, LocalFileSystem):
        local = Path(target).expanduser()
        if local.is_file():
            try:
                return open(local, "rb")  # noqa: SIM115 - closed by iter_jsonl
            except OSError:
                pass  # read_bytes words the error
    opener = getattr(filesystem, "open_read", None)
    if opener is not None and not isinstance(filesystem, LocalFileSystem):
        handle: IO[bytes] = opener(target)
        return handle
    return _io.BytesIO(filesystem.read_bytes(target))


def iter_jsonl(path: str) -> Iterator[dict[str, Any]]:
    """Yield the JSON objects of a JSONL file one by one, as :func:`~autorater_pipelines.io.read_jsonl` returns them.

    Args:
        path: Local path or URI of a registered file system.

    Yields:
        The objects in file order; blank lines are skipped.

    Raises:
        InputError: The file is missing, not UTF-8, or a line is not a JSON object, naming the file and line (and
            the byte offset for bad UTF-8), with :func:`read_jsonl`'s words; raised when the reader gets there.
    """
    with open_read(path) as handle:
        for _, row in jsonl_rows(handle, path):
            yield row


class JsonlFile:
    """The rows of a JSONL file as a sized iterable: each iteration streams :func:`iter_jsonl`, ``len`` counts lines.

    For a consumer that wants the number of rows up front (a progress bar's total) without holding them: ``len``
    is the number of non-blank lines (one quick pass over the bytes, no JSON parsed; cached).

    Args:
        path: Local path or URI of a registered file system.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._count: int | None = None

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter_jsonl(self.path)

    def __len__(self) -> int:
        if self._count is None:
            with open_read(self.path) as handle:
                self._count = sum(1 for line in handle if line.strip())
        return self._count


def jsonl_rows(handle: IO[bytes], name: str, *, note: str = "") -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of a JSONL stream: :func:`~autorater_pipelines.io._formats.parse_jsonl_text`, by line.

    Raises:
        InputError: as ``decode_utf8`` and ``parse_jsonl_text`` for the whole file (``note`` appended to parse
            errors), for the first bad line.
    """
    offset = 0  # bytes after the byte-order mark, as the whole-file decoder counts them
    for number, raw in enumerate(handle, start=1):
        text = decode_utf8(raw, name, line=number, offset=offset)
        offset += len(raw) - (3 if number == 1 and raw.startswith(b"\xef\xbb\xbf") else 0)
        if text.strip():
            yield from parse_jsonl_text(text.rstrip("\n"), name, note=note, first_line=number)


class JsonlWriter:
    r"""Write JSONL row by row; the file appears, whole, on :meth:`commit` (nothing is left on an error).

    The bytes are :func:`~autorater_pipelines.io.write_jsonl`'s: each row JSON-safe, credentials redacted, UTF-8,
    ``\n``-terminated. Use it as a context manager: leaving the block without :meth:`commit` (an exception)
    removes the temporary file and leaves any previous file in place.

    Args:
        path: Local path or URI of a registered file system; parent directories are created.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.count = 0
        self._redact = redactor()
        self._filesystem, self._target = filesystem_for(path)
        self._tmp: Path | None = None
        if isinstance(self._filesystem, LocalFileSystem):
            final = Path(self._target).expanduser()
            final.parent.mkdir(parents=True, exist_ok=True)
            self._tmp = final.with_name(f".{final.name}.{secrets.token_hex(6)}.tmp")
            fd = os.open(self._tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            self._handle: IO[bytes] = os.fdopen(fd, "wb", buffering=_CHUNK)
        else:  # spooled on local disk, then handed whole to the file system's atomic write
            self._handle = tempfile.TemporaryFile()  # noqa: SIM115 - closed by commit/abort

    def write(self, row: Mapping[str, Any]) -> None:
        """Append one row (a JSON object)."""
        self._handle.write((self._redact(dumps(row)) + "\n").encode("utf-8"))
        self.count += 1

    def commit(self) -> int:
        """Make the file appear with every row written; returns the number of rows."""
        if self._tmp is not None:
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._handle.close()
            os.replace(self._tmp, Path(self._target).expanduser())
            self._tmp = None
        else:
            self._handle.seek(0)
            self._filesystem.write_atomic(self._target, iter(lambda: self._handle.read(_CHUNK), b""))
            self._handle.close()
        return self.count

    def abort(self) -> None:
        """Drop what was written (the target is left as it was)."""
        self._handle.close()
        if self._tmp is not None:
            self._tmp.unlink(missing_ok=True)
            self._tmp = None

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if not self._handle.closed:
            self.abort()


class JsonArrayWriter(JsonlWriter):
    """:class:`JsonlWriter` for one JSON array: the bytes of ``write_json(path, rows)`` (indent 2), row by row."""

    def write(self, row: Mapping[str, Any]) -> None:
        """Append one item (a JSON object) to the array."""
        item = dumps(row, indent=2).replace("\n", "\n  ")  # one level deeper, as json.dumps nests it
        self._handle.write((self._redact(("[\n  " if not self.count else ",\n  ") + item)).encode("utf-8"))
        self.count += 1

    def commit(self) -> int:
        """Close the array and make the file appear; returns the number of items."""
        self._handle.write(b"\n]\n" if self.count else b"[]\n")
        return super().commit()
