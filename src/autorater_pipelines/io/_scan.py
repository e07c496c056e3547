"""A dataset read in passes, one row at a time: :class:`DatasetScan`, :func:`read_dataset` without holding the rows.

The sources and their errors are :func:`~autorater_pipelines.io.read_dataset`'s (the same list, wildcards expanded
once, the same messages naming file and line). JSONL files (and files of other extensions read as JSONL) are read
line by line (:func:`~autorater_pipelines.io.iter_jsonl`'s reader); JSON, CSV and Parquet files and BigQuery
tables are parsed whole, one at a time, so memory is bounded by the largest such file, not by the dataset.
Building the scan makes the first pass (every row parsed: the columns, the row count, every parse error);
:meth:`DatasetScan.rows` makes each further pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from autorater_pipelines.errors import InputError
from autorater_pipelines.io._formats import _PARSERS, SUPPORTED_EXTENSIONS, _extension, parse_bytes
from autorater_pipelines.io._fs import filesystem_for, has_wildcard, split_scheme
from autorater_pipelines.io._read import _SOURCE_READERS, SourcePart, _named, _split_sources, check_sources
from autorater_pipelines.io._stream import jsonl_rows, open_read

__all__ = ["DatasetScan", "ScannedRow"]


class ScannedRow(NamedTuple):
    """One row of a :class:`DatasetScan` pass, with where it came from."""

    row: dict[str, Any]
    file: str
    """The file URI or table name, as :class:`~autorater_pipelines.io.Dataset` locations name it."""
    number: int
    """1-based line/row number (its unit: :meth:`DatasetScan.location`)."""
    file_index: int
    """Position of ``file`` in :attr:`DatasetScan.files`."""


class DatasetScan:
    """A comma-separated list of sources, read one row at a time, in passes (module docstring).

    Attributes:
        columns: Union of the rows' keys, in first-seen order (as :attr:`Dataset.columns`).
        files: The files/tables read, in order (wildcards expanded once).
        units: What the numbers count, per file (``"line"``, ``"item"``, ``"row"``).
        source_name: The parameter the data came from, for messages.
        uri: The URI string, as given.

    Args:
        uri: As :func:`~autorater_pipelines.io.read_dataset` takes it.
        source_name: The parameter name used in error messages.

    Raises:
        InputError: whatever :func:`~autorater_pipelines.io.read_dataset` raises for the same data, with the same
            message (a malformed source, a missing file, a bad line, no rows at all).
    """

    def __init__(self, uri: str, *, source_name: str = "evaluation_dataset") -> None:
        self.uri, self.source_name = uri, source_name
        self._sources = _split_sources(uri, source_name)
        check_sources(uri, source_name=source_name)
        self.files: list[str] = []
        self._source_of: list[str] = []
        self.units: dict[str, str] = {}
        self._tables: dict[str, SourcePart] = {}  # read whole, once (BigQuery)
        for source in self._sources:
            scheme = split_scheme(source)[0]
            try:
                if scheme in _SOURCE_READERS:  # a table: its own reader
                    parts = _SOURCE_READERS[scheme].read(source)
                    self._tables.update((part.name, part) for part in parts)
                    names = [part.name for part in parts]
                else:
                    names = _file_names(source)
            except InputError as exc:
                raise _named(exc, uri, source, self._sources, source_name) from None
            self.files += names
            self._source_of += [source] * len(names)
        columns: dict[str, None] = {}
        self.count = 0
        for scanned in self.rows():
            columns.update(dict.fromkeys(scanned.row))
            self.count += 1
        self.columns = list(columns)
        if not self.count:
            raise InputError(
                f"evaluation dataset is empty: {uri!r} holds no rows (blank lines are skipped); pass files with "
                "at least one example",
                source=source_name,
            )

    def __len__(self) -> int:
        return self.count

    def location(self, file: str, number: int) -> str:
        """Describe where a row came from, e.g. ``"data.jsonl line 7"`` (as :meth:`Dataset.location`)."""
        return f"{file} {self.units.get(file, 'row')} {number}"

    def rows(self) -> Iterator[ScannedRow]:
        """One pass over every row, in source order.

        Raises:
            InputError: as :func:`~autorater_pipelines.io.read_dataset` for the same data.
        """
        for index, (name, source) in enumerate(zip(self.files, self._source_of, strict=True)):
            try:
                for number, row in self._file_rows(name, source):
                    yield ScannedRow(row, name, number, index)
            except InputError as exc:
                raise _named(exc, self.uri, source, self._sources, self.source_name) from None

    def _file_rows(self, name: str, source: str) -> Iterator[tuple[int, dict[str, Any]]]:
        table = self._tables.get(name) if split_scheme(source)[0] in _SOURCE_READERS else None
        if table is not None:
            self.units[name] = table.parsed.unit
            yield from table.parsed.rows
            return
        extension = _extension(name)
        if extension in (".jsonl", ".ndjson") or extension not in _PARSERS:  # line by line
            self.units[name] = "line"
            note = ""
            if extension not in _PARSERS:  # _parse_unknown's note
                note = (
                    f" (read as JSONL because the extension {extension or '(none)'!r} is not one of "
                    f"{', '.join(SUPPORTED_EXTENSIONS)})"
                )
            with open_read(name) as handle:
                yield from jsonl_rows(handle, name, note=note)
            return
        filesystem, target = filesystem_for(name)
        parsed = parse_bytes(filesystem.read_bytes(target), name)
        self.units[name] = parsed.unit
        yield from parsed.rows


def _file_names(source: str) -> list[str]:
    """The files a file source names (:func:`read_dataset`'s wildcard expansion and errors)."""
    filesystem, target = filesystem_for(source)
    if has_wildcard(target):
        names = filesystem.glob(target)
        if not names:
            raise InputError("the wildcard matched no files; check the pattern and the directory", source=source)
        return names
    return [target]
