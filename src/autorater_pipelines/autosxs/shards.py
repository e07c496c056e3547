"""Judging in shards: which examples each judging task takes, and the merge back into dataset order."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence, Sized
from typing import Any

from autorater_pipelines import io
from autorater_pipelines.autosxs.params import AutoraterParameters
from autorater_pipelines.errors import AutoraterError

__all__ = ["iter_shard", "merge_shards", "select_shard", "shard_count"]


def shard_count(params: Mapping[str, Any] | AutoraterParameters | None) -> int:
    """Number of judging shards from ``autorater_parameters["shards"]`` (default 1).

    Each shard is one KFP task of a ``ParallelFor`` (one machine on Vertex AI) judging every ``shards``-th
    example; the merge step restores the dataset order.

    Raises:
        InputError: ``autorater_parameters`` is invalid (``shards`` not an integer from 1 to 1000 …).
    """
    return AutoraterParameters.parse(params, source="autorater_parameters").shards


def select_shard(examples: Sequence[Mapping[str, Any]], shard_index: int, shards: int) -> list[Mapping[str, Any]]:
    """The examples of one shard: every ``shards``-th example starting at ``shard_index`` (0-based)."""
    if not 0 <= shard_index < shards:
        raise ValueError(f"shard_index {shard_index} is outside 0..{shards - 1}")
    return list(examples[shard_index::shards])


class _Shard:
    """Every ``shards``-th example of a sized stream, sized itself (for the progress bar's total)."""

    def __init__(self, examples: Iterable[Mapping[str, Any]], shard_index: int, shards: int) -> None:
        self.examples, self.shard_index, self.shards = examples, shard_index, shards

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        return itertools.islice(self.examples, self.shard_index, None, self.shards)

    def __len__(self) -> int:
        return len(range(self.shard_index, len(self.examples), self.shards))  # type: ignore[arg-type]


def iter_shard(examples: Iterable[Mapping[str, Any]], shard_index: int, shards: int) -> Iterable[Mapping[str, Any]]:
    """:func:`select_shard` on a stream (``io.iter_jsonl(path)``, ``io.JsonlFile(path)``): the same examples, none held.

    The result has a ``len`` when ``examples`` has one (``io.JsonlFile`` counts its lines); it is iterated once
    per pass over ``examples``.
    """
    if not 0 <= shard_index < shards:
        raise ValueError(f"shard_index {shard_index} is outside 0..{shards - 1}")
    if isinstance(examples, Sized):
        return _Shard(examples, shard_index, shards)
    return itertools.islice(examples, shard_index, None, shards)


def merge_shards(
    examples: Sequence[Mapping[str, Any]],
    id_columns: Sequence[str],
    judgment_shards: Sequence[Sequence[Mapping[str, Any]]],
    error_shards: Sequence[Sequence[Mapping[str, Any]]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Merge per-shard judgments and errors back into the order of ``examples`` (deterministic).

    Raises:
        AutoraterError: a judgment is missing, duplicated or unknown (no row may be lost or doubled).
    """
    position = {io.id_key(e, id_columns): i for i, e in enumerate(examples)}
    ordered: list[dict[str, Any] | None] = [None] * len(examples)
    for shard in judgment_shards:
        for judgment in shard:
            index = position.get(io.id_key(judgment, id_columns))
            if index is None or ordered[index] is not None:
                state = "unknown" if index is None else "duplicated"
                raise AutoraterError(f"merging shards: judgment {io.id_key(judgment, id_columns)!r} is {state}")
            ordered[index] = dict(judgment)
    missing = [io.id_key(e, id_columns) for e, j in zip(examples, ordered, strict=True) if j is None]
    if missing:
        raise AutoraterError(f"merging shards: {len(missing)} examples have no judgment, e.g. {missing[:3]!r}")
    errors = [dict(e) for shard in error_shards for e in shard]
    errors.sort(key=lambda e: (position.get(io.id_key(e, id_columns), -1), e.get("sample_index") or 0))
    return [j for j in ordered if j is not None], errors
