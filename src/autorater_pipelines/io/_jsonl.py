"""Atomic JSON / JSONL writers and a strict JSONL reader, all through the file-system seam."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from autorater_pipelines.io._formats import decode_utf8, parse_jsonl_text
from autorater_pipelines.io._fs import filesystem_for
from autorater_pipelines.io._jsonsafe import dumps
from autorater_pipelines.redaction import redactor

__all__ = ["read_jsonl", "write_json", "write_jsonl"]


def write_jsonl(path: str, rows: Iterable[Mapping[str, Any]]) -> int:
    r"""Write one JSON object per line, atomically (readers never see a half-written file).

    Values are made JSON-safe first (NaN → null, numpy/pandas scalars → Python, datetimes → ISO 8601;
    see :func:`autorater_pipelines.io.to_jsonable`), and credentials are redacted
    (:func:`autorater_pipelines.redaction.redact`). The file is UTF-8, ``\n``-terminated lines.

    Args:
        path: Local path or URI of a registered file system; parent directories are created.
        rows: The objects to write, consumed once.

    Returns:
        The number of rows written.

    Raises:
        TypeError: A value has no JSON form (a programming error).

    """
    count = 0
    redact = redactor()

    def chunks() -> Iterator[bytes]:
        nonlocal count
        for row in rows:
            count += 1
            yield (redact(dumps(row)) + "\n").encode("utf-8")

    filesystem, target = filesystem_for(path)
    filesystem.write_atomic(target, chunks())
    return count


def write_json(path: str, obj: Any, *, indent: int | None = 2) -> None:
    """Write one JSON document atomically (see :func:`write_jsonl` for the value conversions).

    Args:
        path: Local path or URI of a registered file system; parent directories are created.
        obj: The value to write.
        indent: Indentation in spaces; ``None`` writes one line. A trailing newline is always added.

    """
    filesystem, target = filesystem_for(path)
    filesystem.write_atomic(target, [(redactor()(dumps(obj, indent=indent)) + "\n").encode("utf-8")])


def read_jsonl(path: str) -> list[dict[str, Any]]:
    """Read a JSONL file written by :func:`write_jsonl` (or by hand): one JSON object per line.

    Args:
        path: Local path or URI of a registered file system.

    Returns:
        The objects in file order; blank lines are skipped.

    Raises:
        InputError: The file is missing, not UTF-8, or a line is not a JSON object (names file and line).

    """
    filesystem, target = filesystem_for(path)
    text = decode_utf8(filesystem.read_bytes(target), path)
    return [row for _, row in parse_jsonl_text(text, path)]
