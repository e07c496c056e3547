"""``read_dataset``: a comma-separated list of sources → one :class:`Dataset`.

Each source is dispatched on its URI scheme through a registry of *source readers*. File schemes
(local paths, ``file://``, ``gs://``: any scheme with a registered file system) share one reader that
expands wildcards and parses each file by extension. ``bq://project.dataset.table`` has its own reader
(:mod:`._bigquery`), registered by the package's ``__init__`` with :func:`register_source_reader`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import NamedTuple

from autorater_pipelines.errors import InputError
from autorater_pipelines.io._dataset import Dataset
from autorater_pipelines.io._formats import ParsedFile, parse_bytes
from autorater_pipelines.io._fs import filesystem_for, has_wildcard, split_scheme

__all__ = ["SourcePart", "read_dataset", "register_source_reader"]


class SourcePart(NamedTuple):
    """The rows of one file or table, as returned by a source reader."""

    name: str
    """The file URI or table name that locations refer to."""
    parsed: ParsedFile
    """The rows with their 1-based numbers and the unit those count."""


SourceReader = Callable[[str], list[SourcePart]]
"""Reads one source URI (no commas) into one part per file/table; raises InputError on bad input."""


def _read_files(uri: str) -> list[SourcePart]:
    filesystem, target = filesystem_for(uri)
    if has_wildcard(target):
        names = filesystem.glob(target)
        if not names:
            raise InputError("the wildcard matched no files; check the pattern and the directory", source=uri)
    else:
        names = [target]
    return [SourcePart(name, parse_bytes(filesystem.read_bytes(name), name)) for name in names]


def _is_local_file(uri: str) -> bool:
    """Return True when ``uri`` is an existing local file (``file://`` or a plain path), never raising."""
    scheme, rest = split_scheme(uri)
    if scheme not in ("", "file"):
        return False
    try:
        return os.path.isfile(os.path.expanduser(rest))
    except (OSError, ValueError):
        return False


_SOURCE_READERS: dict[str, SourceReader] = {}


def register_source_reader(scheme: str, reader: SourceReader) -> None:
    """Make ``reader`` handle sources of ``scheme`` (e.g. ``"bq"``) instead of the file reader."""
    _SOURCE_READERS[scheme.lower()] = reader


def read_dataset(uri: str, *, source_name: str = "evaluation_dataset") -> Dataset:
    """Read every row of a comma-separated list of sources into one dataset.

    Args:
        uri: Sources separated by commas (whitespace around each is ignored). Each is a local path or
            ``file://`` URI or ``gs://bucket/object``, possibly with wildcards (``data/*.jsonl``; ``**``
            recurses), or a BigQuery table ``bq://project.dataset.table`` (all its rows). The format follows the
            extension: ``.jsonl``/``.ndjson``, ``.json``, ``.csv``, ``.parquet``; other extensions are
            read as JSONL.
        source_name: The parameter name used in error messages.

    Returns:
        The rows in source order, each with its file and 1-based line/row number.

    Raises:
        InputError: ``uri`` is empty or not a string; a file is missing, malformed or not UTF-8 (names the
            file and line); a scheme is unsupported; or there are no rows in total. When a comma-separated part
            cannot be read but the whole ``uri`` is an existing local file, the message says that commas separate
            files and to rename it.

    """
    sources = [part.strip() for part in uri.split(",") if part.strip()] if isinstance(uri, str) else []
    if not sources:
        raise InputError(f"expected one or more comma-separated file paths or URIs, got {uri!r}", source=source_name)
    rows, locations, units = [], [], {}
    for source in sources:
        reader = _SOURCE_READERS.get(split_scheme(source)[0], _read_files)
        try:
            parts = reader(source)
        except InputError as exc:
            if len(sources) > 1 and _is_local_file(uri.strip()):
                raise InputError(
                    f"file not found: {source!r}, but {uri.strip()!r} is a file. Commas separate files in "
                    f"{source_name}, so a file name cannot contain one: rename the file without commas (or match "
                    "it with a wildcard, '?' in place of each comma)",
                    source=source_name,
                ) from exc
            if exc.source == source and exc.row is None and exc.column is None:  # the file itself: name the parameter
                raise InputError(str(exc), source=source_name) from None
            raise
        for name, parsed in parts:
            units[name] = parsed.unit
            for number, row in parsed.rows:
                rows.append(row)
                locations.append((name, number))
    if not rows:
        raise InputError(
            f"evaluation dataset is empty: {uri!r} holds no rows (blank lines are skipped); pass files with "
            "at least one example",
            source=source_name,
        )
    return Dataset(rows=rows, locations=locations, source_name=source_name, uri=uri, units=units)
