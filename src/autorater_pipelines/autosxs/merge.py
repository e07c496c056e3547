"""The merge of judging shards, streamed: :func:`merge_shard_files`, file to file with memory bounded by one row.

Shard ``s`` of ``k`` judges examples ``s, s + k, s + 2k …`` and writes them in that order
(:func:`~autorater_pipelines.autosxs.shards.iter_shard`), so the dataset order is the shards taken in turn. The
merge reads the examples and every shard's files once, side by side, checks that each judgment is the one of the
example at its place (the same id) and writes each row with its error rows as it goes. Anything else (a shard
whose rows are not in that order, a missing, doubled or unknown judgment, an error row of no row there) falls
back to :func:`~autorater_pipelines.autosxs.shards.merge_shards` in memory, which orders what can be ordered
and raises the error naming the row; either way the files are those :func:`merge_shards` gives.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from autorater_pipelines import io
from autorater_pipelines.autosxs.shards import merge_shards

__all__ = ["merge_shard_files"]


class _NotInTurn(Exception):
    """The shards are not the round-robin split in order: merge in memory instead."""


def _shard_order(examples_path: str, id_columns: Sequence[str], judgment_paths: Sequence[str]) -> list[int]:
    """Which file holds shard 0, 1, …: the one whose first judgment is example 0, 1, … (collections may reorder)."""
    firsts = [next(iter(io.iter_jsonl(path)), None) for path in judgment_paths]
    heads = [io.id_key(e, id_columns) for e in itertools.islice(io.iter_jsonl(examples_path), len(judgment_paths))]
    order = []
    for head in heads:
        found = [i for i, first in enumerate(firsts) if first is not None and io.id_key(first, id_columns) == head]
        if len(found) != 1:
            raise _NotInTurn
        order.append(found[0])
    if len(order) != len(judgment_paths):  # fewer examples than shards: some shards are empty
        order += [i for i in range(len(judgment_paths)) if i not in order]
    return order


def _errors_of(errors: Iterator[dict[str, Any]], pending: list[dict[str, Any] | None], key: Any, cols: Any) -> list:
    """The error rows of the row ``key`` (they come next in its shard's file), sorted as :func:`merge_shards` does."""
    found = []
    while True:
        if pending[0] is None:
            pending[0] = next(errors, None)
        if pending[0] is None or io.id_key(pending[0], cols) != key:
            break
        found.append(pending[0])
        pending[0] = None
    return sorted(found, key=lambda e: e.get("sample_index") or 0)


def _merge_in_turn(
    examples_path: str,
    id_columns: Sequence[str],
    judgment_paths: Sequence[str],
    error_paths: Sequence[str],
    judgments: io.JsonlWriter,
    errors: io.JsonlWriter,
) -> int:
    order = _shard_order(examples_path, id_columns, judgment_paths)
    shards = [io.iter_jsonl(judgment_paths[i]) for i in order]
    error_files = [io.iter_jsonl(error_paths[i]) for i in order] if len(error_paths) == len(judgment_paths) else None
    pending: list[list[dict[str, Any] | None]] = [[None] for _ in shards]
    error_count = 0
    for position, example in enumerate(io.iter_jsonl(examples_path)):
        turn = position % len(shards)
        judgment = next(shards[turn], None)
        key = io.id_key(example, id_columns)
        if judgment is None or io.id_key(judgment, id_columns) != key:
            raise _NotInTurn
        judgments.write(judgment)
        error_count += judgment.get("choice") == "ERROR"
        if error_files is not None:
            for error in _errors_of(error_files[turn], pending[turn], key, id_columns):
                errors.write(error)
    if any(next(shard, None) is not None for shard in shards):
        raise _NotInTurn  # judgments of no example
    if error_files is None:
        raise _NotInTurn
    if any(p[0] is not None or next(e, None) is not None for p, e in zip(pending, error_files, strict=True)):
        raise _NotInTurn  # error rows of no row, or out of order
    return error_count


def merge_shard_files(
    examples_path: str,
    id_columns: Sequence[str],
    judgment_paths: Sequence[str],
    error_paths: Sequence[str],
    judgments_path: str,
    error_messages_path: str,
) -> tuple[int, int]:
    """Merge the shards' JSONL files into one judgments file and one error file, in the order of the examples.

    The files and the errors are :func:`~autorater_pipelines.autosxs.shards.merge_shards`'s (module docstring);
    both files appear only once the merge is complete.

    Args:
        examples_path: JSONL of the examples judged (defines the order).
        id_columns: Id columns of the examples.
        judgment_paths: Each shard's judgments (JSONL).
        error_paths: Each shard's error rows (JSONL), in the order of ``judgment_paths``.
        judgments_path: Where to write the merged judgments.
        error_messages_path: Where to write the merged error rows.

    Returns:
        ``(judgment count, count of judgments whose choice is ERROR)``.

    Raises:
        AutoraterError: a judgment is missing, duplicated or unknown (no row may be lost or doubled).
        InputError: a file is missing or a line is not JSON (names the file and line).
    """
    with contextlib.ExitStack() as files:
        judgments = files.enter_context(io.JsonlWriter(judgments_path))
        errors = files.enter_context(io.JsonlWriter(error_messages_path))
        try:
            error_count = _merge_in_turn(examples_path, id_columns, judgment_paths, error_paths, judgments, errors)
        except _NotInTurn:
            judgments.abort()
            errors.abort()
            return _merge_in_memory(
                examples_path, id_columns, judgment_paths, error_paths, judgments_path, error_messages_path
            )
        count = judgments.commit()
        errors.commit()
    return count, error_count


def _merge_in_memory(
    examples_path: str,
    id_columns: Sequence[str],
    judgment_paths: Sequence[str],
    error_paths: Sequence[str],
    judgments_path: str,
    error_messages_path: str,
) -> tuple[int, int]:
    merged, errors = merge_shards(
        io.read_jsonl(examples_path),
        id_columns,
        [io.read_jsonl(p) for p in judgment_paths],
        [io.read_jsonl(p) for p in error_paths],
    )
    io.write_jsonl(judgments_path, merged)
    io.write_jsonl(error_messages_path, errors)
    return len(merged), sum(_is_error(j) for j in merged)


def _is_error(judgment: Mapping[str, Any]) -> bool:
    return judgment.get("choice") == "ERROR"
