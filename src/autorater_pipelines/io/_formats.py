"""Parsers that turn a file's bytes into rows, each with its 1-based line/row number.

Formats are chosen by file extension:

- ``.jsonl`` / ``.ndjson``: one JSON object per line; blank lines are skipped; numbers are line numbers.
  Files with any other (or no) extension are read as JSONL too, because GCPC's ``evaluation_dataset``
  is JSONL whatever the file is called (e.g. BigQuery exports named ``*.json``).
- ``.json``: a list of objects, or an object holding that list under ``"instances"`` or ``"data"``;
  numbers are 1-based item positions. A ``.json`` file holding one object per line is read as JSONL.
- ``.csv``: header row + records, parsed strictly by the ``csv`` module (see ``_csv.py`` for why); every
  value stays a string (ids such as ``007`` survive) and an empty cell is ``""``, as in JSONL; a record with
  fewer or more fields than the header, text after a closing quote (``"a1"x``) or a quote that never closes is
  an error naming the line; numbers are the line the record starts on.
- ``.parquet``: read with pyarrow; values converted to JSON-compatible Python; numbers are 1-based rows.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from autorater_pipelines.errors import InputError
from autorater_pipelines.io._csv import read_csv_records
from autorater_pipelines.io._jsondup import DuplicateKeyError, duplicate_key_line, duplicate_key_message, unique_keys
from autorater_pipelines.io._jsonsafe import to_jsonable
from autorater_pipelines.unencodable import has_surrogate_escape, replace_unencodable

__all__ = [
    "SUPPORTED_EXTENSIONS",
    "NumberedRows",
    "ParsedFile",
    "decode_utf8",
    "load_json",
    "parse_bytes",
    "parse_jsonl_text",
    "surrogate_warnings_left_to_the_steps",
]

logger = logging.getLogger("autorater_pipelines.io")

NumberedRows = list[tuple[int, dict[str, Any]]]
"""Rows of one file as ``(1-based line or row number, row)`` pairs, in file order."""

SUPPORTED_EXTENSIONS = (".jsonl", ".ndjson", ".json", ".csv", ".parquet")


class ParsedFile(NamedTuple):
    """The rows of one file and what their numbers count."""

    rows: NumberedRows
    """``(number, row)`` pairs in file order."""
    unit: str
    """``"line"`` (JSONL, CSV: the line a record starts on), ``"item"`` (JSON list) or ``"row"``."""


def _extension(name: str) -> str:
    return os.path.splitext(name.rstrip("/"))[1].lower()


def decode_utf8(data: bytes, name: str, *, line: int = 1, offset: int = 0) -> str:
    """Decode ``data`` as UTF-8 (a leading byte-order mark is dropped).

    ``line`` and ``offset`` say where ``data`` starts in its file (1-based line, byte offset), for a file read
    line by line; a byte-order mark is dropped only at the file's start.

    Raises:
        InputError: The bytes are not UTF-8; names the line, the byte offset and the bad bytes.

    """
    if offset == 0 and data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line += data.count(b"\n", 0, exc.start)
        bad = data[exc.start : exc.end]
        raise InputError(
            f"is not valid UTF-8: byte(s) {bad!r} at byte offset {offset + exc.start}; re-save the file as UTF-8 "
            "(e.g. `iconv -f latin1 -t utf-8 in > out`)",
            source=name,
            row=line,
        ) from exc


def _reject_constant(name: str, line: int | None) -> Callable[[str], Any]:
    def parse_constant(token: str) -> Any:
        if token == "NaN":
            return None  # Python's json.dumps writes NaN for missing floats; treat it as null.
        raise InputError(
            f"holds the non-standard JSON number {token!r}; use a finite number or null", source=name, row=line
        )

    return parse_constant


def _json_error(exc: json.JSONDecodeError) -> str:
    """The stdlib's message without its trailing "at" (it says e.g. "Invalid control character at")."""
    return exc.msg.removesuffix(" at").rstrip()


def _json_hint(exc: json.JSONDecodeError) -> str:
    if exc.msg.startswith("Invalid control character"):
        return "; control characters (NUL, tab, ...) must be escaped inside JSON strings, e.g. \\u0000"
    return ""


def _too_deep(name: str, line: int | None) -> InputError:
    return InputError(
        "is nested too deeply: its JSON arrays/objects are nested beyond what can be parsed (about 1000 levels); "
        "flatten the value",
        source=name,
        row=line,
    )


_SURROGATE_WARNING = "lone UTF-16 surrogate escape(s)"


class _LeaveOutSurrogateWarnings(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return _SURROGATE_WARNING not in str(record.msg)


@contextlib.contextmanager
def surrogate_warnings_left_to_the_steps() -> Iterator[None]:
    """Leave out :func:`load_json`'s lone-surrogate warnings while the block runs.

    For ``autorater run``'s in-process check of the parameters: the pipeline's first step reads the same rows
    and warns about each line itself, so the check warning as well printed every warning twice.
    """
    leave_out = _LeaveOutSurrogateWarnings()
    logger.addFilter(leave_out)
    try:
        yield
    finally:
        logger.removeFilter(leave_out)


def load_json(text: str, name: str, line: int | None) -> Any:
    r"""``json.loads`` with this package's rules: NaN → None, Infinity refused, a key twice in one object refused.

    A lone UTF-16 surrogate escape (``"\ud800"``: valid JSON, but no UTF-8 writer can encode the string it gives)
    is replaced by U+FFFD, with a warning naming the file, the line and the count
    (:mod:`autorater_pipelines.unencodable`).

    Raises:
        json.JSONDecodeError: ``text`` is not valid JSON (callers word the message).
        InputError: a non-finite number other than NaN, nesting deeper than Python's recursion limit, or a key
            written twice in one object (``line`` or, for a whole document, the line of the second key).

    """
    try:
        value = json.loads(text, parse_constant=_reject_constant(name, line), object_pairs_hook=unique_keys)
    except RecursionError:
        raise _too_deep(name, line) from None
    except DuplicateKeyError as exc:
        where = line if line is not None else duplicate_key_line(text, exc.key)
        raise InputError(duplicate_key_message(exc.key), source=name, row=where, unit="line") from None
    if has_surrogate_escape(text):
        value, count = replace_unencodable(value)
        if count:
            logger.warning(
                "%s%s: %d " + _SURROGATE_WARNING + " such as \\ud800 (valid JSON that no UTF-8 file can hold) "
                "replaced by U+FFFD",
                name,
                f", line {line}" if line is not None else "",
                count,
            )
    return value


def parse_jsonl_text(text: str, name: str, *, note: str = "", first_line: int = 1) -> NumberedRows:
    r"""Parse JSONL text: one JSON object per line, blank lines skipped.

    Lines are split on ``\n`` only (``\r\n`` works), never on U+2028, U+0085 or form feed, which may appear in
    strings. Used for datasets, :func:`read_jsonl` and ``replay/`` recordings alike.

    Args:
        text: The decoded file content.
        name: File name or URI, for error messages.
        note: Extra sentence appended to parse errors (e.g. why the file was read as JSONL).
        first_line: The line number of ``text``'s first line (for a file read line by line).

    Returns:
        ``(line number, object)`` pairs.

    Raises:
        InputError: A line is not valid JSON (including nesting too deep to parse) or not a JSON object; names
            the file and line.

    """
    rows: NumberedRows = []
    for number, line in enumerate(text.split("\n"), start=first_line):
        if not line.strip():
            continue
        try:
            value = load_json(line, name, number)
        except json.JSONDecodeError as exc:
            snippet = line.strip()
            snippet = snippet if len(snippet) <= 80 else snippet[:77] + "..."
            raise InputError(
                f"is not valid JSON ({_json_error(exc)} at character {exc.colno}): {snippet!r}{_json_hint(exc)}; "
                "each line must hold "
                f'exactly one JSON object such as {{"id": 1, "text": "..."}}{note}',
                source=name,
                row=number,
            ) from exc
        if not isinstance(value, dict):
            raise InputError(
                f"expected a JSON object ({{...}}) on each line, got a JSON {_json_type(value)}: {_short(value)}{note}",
                source=name,
                row=number,
            )
        rows.append((number, value))
    return rows


def _json_type(value: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _parse_json(data: bytes, name: str) -> ParsedFile:
    text = decode_utf8(data, name)
    try:
        value = load_json(text, name, None)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":  # several top-level values: a JSONL file named .json
            return ParsedFile(parse_jsonl_text(text, name), "line")
        raise InputError(
            f"is not valid JSON ({_json_error(exc)} at line {exc.lineno}, character {exc.colno}){_json_hint(exc)}; "
            'expected a list of objects or {"instances": [...]}',
            source=name,
            row=exc.lineno,
        ) from exc
    if isinstance(value, dict):
        for key in ("instances", "data"):
            if isinstance(value.get(key), list):
                value = value[key]
                break
        else:
            # A single JSON object is one row, as it would be in a one-line JSONL file.
            return ParsedFile([(1, value)], "line")
    if not isinstance(value, list):
        raise InputError(
            f"expected a list of objects or an object with an 'instances' or 'data' list, got a JSON "
            f"{_json_type(value)}: {_short(value)}",
            source=name,
        )
    rows: NumberedRows = []
    for number, item in enumerate(value, start=1):
        if not isinstance(item, dict):
            raise InputError(
                f"item {number} of the list is a JSON {_json_type(item)}, expected an object: {_short(item)}",
                source=name,
                row=number,
            )
        rows.append((number, item))
    return ParsedFile(rows, "item")


def _parse_jsonl(data: bytes, name: str) -> ParsedFile:
    return ParsedFile(parse_jsonl_text(decode_utf8(data, name), name), "line")


def _field_count_error(name: str, header: list[str], first: int, last: int, fields: list[str]) -> InputError:
    spans = f" (the record spans lines {first}-{last})" if last > first else ""
    if len(fields) > len(header):
        fix = "quote values that contain commas"
    else:
        fix = "add the missing values: an empty value is nothing between two commas (a,,c)"
    shown = repr(fields) if len(repr(fields)) <= 120 else repr(fields)[:117] + "..."
    return InputError(
        f"has {len(fields)} field{'s' if len(fields) != 1 else ''} but the header has {len(header)} columns "
        f"{header}{spans}: {shown}; {fix}",
        source=name,
        row=first,
        unit="line",
    )


def _parse_csv(data: bytes, name: str) -> ParsedFile:
    """Parse CSV strictly (see :mod:`autorater_pipelines.io._csv`): every record has the header's fields.

    Every value is a string (ids such as ``007`` survive) and an empty cell is ``""`` as in JSONL; a record
    with fewer or more fields than the header, text after a closing quote or a quote that never closes is
    an error naming the line. Blank lines (empty or only spaces) are skipped, before the header too.
    """
    records = [r for r in read_csv_records(decode_utf8(data, name), name) if r[2]]  # [] is a blank line
    if not records:
        return ParsedFile([], "line")
    header_line, _, header = records[0]
    columns = [c.strip() or f"Unnamed: {i}" for i, c in enumerate(header)]
    dupes = sorted({c for c in columns if columns.count(c) > 1})
    if dupes:
        raise InputError(
            f"the header repeats column name(s) {dupes}; rename them so each is unique",
            source=name,
            row=header_line,
            unit="line",
        )
    rows: NumberedRows = []
    for first, last, fields in records[1:]:
        if len(fields) != len(columns):
            raise _field_count_error(name, columns, first, last, fields)
        rows.append((first, dict(zip(columns, fields, strict=True))))
    return ParsedFile(rows, "line")


def _parse_parquet(data: bytes, name: str) -> ParsedFile:
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"is not a readable Parquet file: {exc}", source=name) from exc
    return ParsedFile([(i, to_jsonable(row)) for i, row in enumerate(table.to_pylist(), start=1)], "row")


def _parse_unknown(data: bytes, name: str) -> ParsedFile:
    ext = _extension(name) or "(none)"
    note = f" (read as JSONL because the extension {ext!r} is not one of {', '.join(SUPPORTED_EXTENSIONS)})"
    return ParsedFile(parse_jsonl_text(decode_utf8(data, name), name, note=note), "line")


_PARSERS: dict[str, Callable[[bytes, str], ParsedFile]] = {
    ".jsonl": _parse_jsonl,
    ".ndjson": _parse_jsonl,
    ".json": _parse_json,
    ".csv": _parse_csv,
    ".parquet": _parse_parquet,
}


def parse_bytes(data: bytes, name: str) -> ParsedFile:
    """Parse a file's content according to the extension of ``name`` (see the module docstring).

    Args:
        data: The raw file content.
        name: File name or URI; its extension picks the format and it names the file in errors.

    Returns:
        The rows with their 1-based line/row numbers, and the unit those numbers count.

    Raises:
        InputError: The content is malformed; names the file and the line/row where possible.

    """
    return _PARSERS.get(_extension(name), _parse_unknown)(data, name)
