"""The arena's export step: its judgments and leaderboard as JSONL, JSON or new BigQuery tables, as AutoSxS's.

``judgments_format`` means what it means for AutoSxS (:mod:`autorater_pipelines.pairwise.export`): ``jsonl`` (one
object per line), ``json`` (one array per file) or ``bigquery`` (the JSONL files, and each loaded into a new table
of its own in one load job: all rows or none). Both go through the one export of result rows,
:func:`autorater_pipelines.evaluation.export.export_rows`; the judgments with AutoSxS's column types
(:data:`~autorater_pipelines.pairwise.export.JUDGMENTS_BIGQUERY_FIELDS`), the leaderboard with
:data:`LEADERBOARD_BIGQUERY_FIELDS`. The two tables share one stamp: ``[<table_prefix>_]judgments_<stamp>`` and
``[<table_prefix>_]leaderboard_<stamp>``, ``<stamp>`` = ``<YYYYMMDD_HHMMSS>_<6 hex>`` (UTC), so a run's tables are
found together; an export never appends to or overwrites a table.
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from autorater_pipelines import io
from autorater_pipelines.evaluation.export import ExportResult, export_rows
from autorater_pipelines.pairwise.export import JUDGMENTS_BIGQUERY_FIELDS, check_judgments_format

__all__ = ["LEADERBOARD_BIGQUERY_FIELDS", "ArenaExport", "export_arena"]

_FLOAT, _INTEGER, _STRING = ({"type": t, "mode": "NULLABLE"} for t in ("FLOAT", "INTEGER", "STRING"))
LEADERBOARD_BIGQUERY_FIELDS: dict[str, dict[str, Any]] = {
    "model": _STRING,
    **dict.fromkeys(("score", "score_ci_lower", "score_ci_upper", "elo", "elo_ci_lower", "elo_ci_upper"), _FLOAT),
    **dict.fromkeys(("rank", "rank_upper", "rank_lower"), _INTEGER),
    **dict.fromkeys(("battles", "wins", "losses", "ties", "mean_response_length"), _FLOAT),
    **dict.fromkeys(("win_rate_vs_baseline", "win_rate_vs_baseline_ci_lower", "win_rate_vs_baseline_ci_upper"), _FLOAT),
    **dict.fromkeys(
        ("score_style_controlled", "score_style_controlled_ci_lower", "score_style_controlled_ci_upper"), _FLOAT
    ),
}
"""BigQuery types of the leaderboard's columns (REST form): battle counts are FLOAT (a strong verdict weighs
``strong_verdict_weight`` battles), ranks INTEGER; a column the rows lack (no baseline, no style control) is not
in the table."""


class ArenaExport(NamedTuple):
    """Where the arena's export put its rows."""

    judgments: ExportResult
    leaderboard: ExportResult


def export_arena(
    *,
    judgments: Sequence[Mapping[str, Any]],
    leaderboard: Sequence[Mapping[str, Any]],
    judgments_format: str,
    judgments_destination: str,
    leaderboard_destination: str,
    bigquery_destination_prefix: str = "",
    project: str = "",
    bigquery_api_endpoint: str | None = None,
    now: dt.datetime | None = None,
) -> ArenaExport:
    """Write the judgments and the leaderboard in ``judgments_format`` (module docstring); return where they are.

    Args:
        judgments: The judgment rows (one per judged pair and prompt).
        leaderboard: The leaderboard rows, best first.
        judgments_format: ``jsonl``, ``json`` or ``bigquery``.
        judgments_destination: File path (or ``gs://`` URI) of the judgments file.
        leaderboard_destination: File path (or ``gs://`` URI) of the leaderboard file.
        bigquery_destination_prefix: ``project.dataset`` or ``project.dataset.table_prefix``; required for
            ``bigquery``, ignored otherwise.
        project: Project that runs (and pays for) the load jobs; empty = the destination's project.
        bigquery_api_endpoint: BigQuery endpoint override; None = ``$BIGQUERY_EMULATOR_HOST`` or Google's.
        now: The export time of the table names (default: the current UTC time).

    Returns:
        The files written and, for ``bigquery``, the tables (``bq://project.dataset.table``).

    Raises:
        InputError: an unsupported format, a missing or invalid ``bigquery_destination_prefix`` (before anything is
            written), an invalid column name of the judgments (before anything is written), a missing dataset, or a
            rejected load (the judgments are loaded first: a failed leaderboard load leaves the judgments table).
    """
    fmt = check_judgments_format(judgments_format)
    tables: dict[str, io.BigQueryTable | None] = {"judgments": None, "leaderboard": None}
    if fmt == "bigquery":
        stamp, token = now or dt.datetime.now(dt.timezone.utc), secrets.token_hex(3)
        for kind in tables:
            tables[kind] = io.judgments_table(bigquery_destination_prefix, now=stamp, token=token, kind=kind)
    common: dict[str, Any] = {"fmt": fmt, "project": project, "bigquery_api_endpoint": bigquery_api_endpoint}
    exported_judgments = export_rows(
        judgments,
        destination=judgments_destination,
        table=tables["judgments"],
        fields=JUDGMENTS_BIGQUERY_FIELDS,
        what="arena judgments",
        **common,
    )
    exported_leaderboard = export_rows(
        leaderboard,
        destination=leaderboard_destination,
        table=tables["leaderboard"],
        fields=LEADERBOARD_BIGQUERY_FIELDS,
        what="arena leaderboard",
        **common,
    )
    return ArenaExport(exported_judgments, exported_leaderboard)
