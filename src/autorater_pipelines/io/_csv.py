r"""Strict CSV reading: every record has exactly the header's fields, every quote closes where it should.

The parser is the standard library's ``csv`` module (its C reader) with ``strict=True``, plus an explicit
field-count check. Of the well-kept parsers it is the one that refuses every malformed case and says where:

- pandas' C tokenizer accepts text after a closing quote (``"a1"x`` is read as ``a1x``) and pads a record
  that is short of fields with empty values (``on_bad_lines="error"`` covers only records with too many);
- pyarrow's CSV reader also accepts ``"a1"x`` and its errors name no line;
- ``csv.reader(strict=True)`` raises on text after a closing quote and on a quote that never closes, and
  its ``line_num`` counts the physical lines read so far, so the line a record starts on is exact even when
  quoted values span lines (the line after the previous record ended).

Lines end with ``\n``, ``\r\n`` or ``\r`` (universal newlines, as the ``csv`` module reads them); a
leading byte-order mark is dropped; the last record needs no final newline. Values stay strings exactly as
written (ids such as ``007`` survive); an empty cell is ``""``, as JSONL's ``""``.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator

from autorater_pipelines.errors import InputError

__all__ = ["CsvRecord", "read_csv_records"]

CsvRecord = tuple[int, int, list[str]]
"""``(first line, last line, fields)`` of one record; the lines differ when a quoted value spans lines."""

_NEWLINE = re.compile(r"\r\n|\r|\n")


def _lines(text: str) -> list[str]:
    r"""The physical lines as the ``csv`` module counts them (``\n``, ``\r\n``, ``\r``), endings kept."""
    return io.StringIO(text, newline="").readlines()


def _snippet(line: str) -> str:
    line = line.rstrip("\r\n")
    return repr(line if len(line) <= 80 else line[:77] + "...")


def _quote_start(record_text: str) -> int:
    """Offset in ``record_text`` of the quote that opens the value left open at the end of the file.

    ``record_text`` runs from the start of the record to the end of the file, and the strict reader has
    accepted all of it but the unclosed value, so this small scan follows the same rules: a quote opens a
    value only at the start of a field, ``""`` inside a quoted value is a quote.
    """
    opened, in_quotes, at_field_start, i = -1, False, True, 0
    while i < len(record_text):
        char = record_text[i]
        if in_quotes:
            if char == '"':
                if record_text.startswith('"', i + 1):
                    i += 1
                else:
                    in_quotes = False
        elif char == '"' and at_field_start:
            in_quotes, opened = True, i
        at_field_start = not in_quotes and char in ",\r\n"
        i += 1
    return opened


def _reader_error(exc: csv.Error, text: str, name: str, start: int, line: int) -> InputError:
    message = str(exc)
    lines = _lines(text)
    if message.startswith("unexpected end of data"):
        rest = "".join(lines[start - 1 :])
        opened = _quote_start(rest)
        where = start + len(_NEWLINE.findall(rest, 0, max(opened, 0)))
        record = f", in the record that starts on line {start}" if where > start else ""
        return InputError(
            f'a quoted value opens (") on this line ({_snippet(lines[where - 1])}{record}) and never closes before '
            "the end of the file, so every line after it would be read as one value; close the quote, or double a "
            'quote inside a quoted value ("")',
            source=name,
            row=where,
            unit="line",
        )
    current = _snippet(lines[line - 1]) if 0 < line <= len(lines) else "''"
    if "expected after" in message:
        return InputError(
            f"has text after the closing quote of a quoted value: {current}; a quoted value must end at the "
            'next comma or line end. Quote the whole value and double the quotes inside it ("a ""b"" c")',
            source=name,
            row=line,
            unit="line",
        )
    return InputError(f"is not valid CSV ({message}): {current}", source=name, row=line, unit="line")


def read_csv_records(text: str, name: str) -> list[CsvRecord]:
    """Every record of decoded CSV ``text`` (header included); a blank line (empty or spaces) has no fields.

    Args:
        text: The decoded file content (byte-order mark already dropped).
        name: File name or URI, for error messages.

    Returns:
        ``(first line, last line, fields)`` per record, in file order.

    Raises:
        InputError: text after a closing quote (names the line) or a quote that never closes (names the line
            the quoted value starts on).

    """
    if len(text) >= csv.field_size_limit():  # a value may be as long as the file (the default is 128 KiB)
        csv.field_size_limit(len(text) + 1)
    last = [""]  # the physical line the reader took last

    def lines() -> Iterator[str]:
        for line in io.StringIO(text, newline=""):
            last[0] = line
            yield line

    reader = csv.reader(lines(), strict=True)
    records: list[CsvRecord] = []
    end = 0
    try:
        for fields in reader:
            blank = reader.line_num == end + 1 and not last[0].strip()  # only spaces, unquoted: as JSONL skips it
            records.append((end + 1, reader.line_num, [] if blank else fields))
            end = reader.line_num
    except csv.Error as exc:
        raise _reader_error(exc, text, name, end + 1, reader.line_num) from None
    return records
