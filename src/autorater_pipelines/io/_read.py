"""``read_dataset``: a comma-separated list of sources → one :class:`Dataset`.

Each source is dispatched on its URI scheme through a registry of *source readers*. File schemes
(local paths, ``file://``, ``gs://``: any scheme with a registered file system) share one reader that
expands wildcards and parses each file by extension. ``bq://project.dataset.table`` has its own reader
(:mod:`._bigquery`), registered by the package's ``__init__`` with :func:`register_source_reader`.

:func:`check_sources` makes every check of a source that needs no request (the URI's form: ``bq://`` names,
``gs://`` bucket and object, a known scheme); :func:`read_dataset` makes the same checks first, so a dry run that
reads nothing refuses exactly the malformed URIs a run refuses, with the same message.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import NamedTuple

from autorater_pipelines.errors import InputError
from autorater_pipelines.io._dataset import Dataset
from autorater_pipelines.io._formats import ParsedFile, parse_bytes
from autorater_pipelines.io._fs import check_file_uri, filesystem_for, has_wildcard, split_scheme

__all__ = ["SourcePart", "check_sources", "read_dataset", "register_source_reader"]


class SourcePart(NamedTuple):
    """The rows of one file or table, as returned by a source reader."""

    name: str
    """The file URI or table name that locations refer to."""
    parsed: ParsedFile
    """The rows with their 1-based numbers and the unit those count."""


SourceReader = Callable[[str], list[SourcePart]]
"""Reads one source URI (no commas) into one part per file/table; raises InputError on bad input."""
SourceCheck = Callable[[str], object]
"""Checks one source URI's form without any request; raises InputError when the reader would refuse it unread."""


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


class _Source(NamedTuple):
    read: SourceReader
    check: SourceCheck


def _no_check(uri: str) -> None:
    """A reader registered without a check: its URIs' form is its own business."""


_SOURCE_READERS: dict[str, _Source] = {}
_FILES = _Source(_read_files, check_file_uri)


def register_source_reader(scheme: str, reader: SourceReader, *, check: SourceCheck | None = None) -> None:
    """Make ``reader`` handle sources of ``scheme`` (e.g. ``"bq"``) instead of the file reader.

    Args:
        scheme: The URI scheme, without ``://``.
        reader: Reads one source of the scheme.
        check: Checks a source's form without any request (what ``reader`` refuses before reaching the service);
            :func:`check_sources` calls it. The reader should call it first too.
    """
    _SOURCE_READERS[scheme.lower()] = _Source(reader, check or _no_check)


def _split_sources(uri: str, source_name: str) -> list[str]:
    sources = [part.strip() for part in uri.split(",") if part.strip()] if isinstance(uri, str) else []
    if not sources:
        raise InputError(f"expected one or more comma-separated file paths or URIs, got {uri!r}", source=source_name)
    return sources


def _named(exc: InputError, uri: str, source: str, sources: list[str], source_name: str) -> InputError:
    """The error of one source as :func:`read_dataset` reports it (a problem of the source names the parameter)."""
    if len(sources) > 1 and _is_local_file(uri.strip()):
        return InputError(
            f"file not found: {source!r}, but {uri.strip()!r} is a file. Commas separate files in "
            f"{source_name}, so a file name cannot contain one: rename the file without commas (or match "
            "it with a wildcard, '?' in place of each comma)",
            source=source_name,
        )
    if exc.source == source and exc.row is None and exc.column is None:
        return InputError(str(exc), source=source_name)
    return exc


def check_sources(uri: str, *, source_name: str = "evaluation_dataset") -> None:
    """Refuse a comma-separated list of sources that :func:`read_dataset` would refuse before any request.

    Nothing is read and no client is created: each source's form is checked (``bq://project.dataset.table``
    names, a ``gs://`` bucket and object name, a supported scheme), with the message :func:`read_dataset` gives.
    ``autorater submit --dry-run`` (and ``submit``'s check of data it leaves to the first step) call it.

    Args:
        uri: The sources, as :func:`read_dataset` takes them.
        source_name: The parameter name used in error messages.

    Raises:
        InputError: ``uri`` is empty or not a string, or one source is malformed; the same message as
            :func:`read_dataset`'s.
    """
    sources = _split_sources(uri, source_name)
    for source in sources:
        try:
            _SOURCE_READERS.get(split_scheme(source)[0], _FILES).check(source)
        except InputError as exc:
            raise _named(exc, uri, source, sources, source_name) from None


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
    sources = _split_sources(uri, source_name)
    check_sources(uri, source_name=source_name)  # every malformed source refused before the first request
    rows, locations, units = [], [], {}
    for source in sources:
        try:
            parts = _SOURCE_READERS.get(split_scheme(source)[0], _FILES).read(source)
        except InputError as exc:
            raise _named(exc, uri, source, sources, source_name) from None
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
