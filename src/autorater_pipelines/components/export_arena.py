"""Component: export the arena's judgments and leaderboard in the requested format."""

from typing import NamedTuple

from kfp import dsl
from kfp.dsl import Dataset, Input, Output

from autorater_pipelines.components import IMAGE


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def export_arena_results(
    judgments: Input[Dataset],
    leaderboard: Input[Dataset],
    judgments_format: str,
    bigquery_destination_prefix: str,
    project: str,
    judgments_export: Output[Dataset],
    leaderboard_export: Output[Dataset],
) -> NamedTuple("Outputs", judgments_path=str, leaderboard_path=str):
    """Writes the arena's judgments and leaderboard in `judgments_format`, as AutoSxS exports its judgments.

    Args:
        judgments: JSONL of the judged pairs from the judge step.
        leaderboard: JSONL of the leaderboard from the ranking step.
        judgments_format: `jsonl` (one object per line), `json` (one array per file) or `bigquery` (a new table for each, named from `bigquery_destination_prefix`, and the JSONL files).
        bigquery_destination_prefix: `project.dataset` or `project.dataset.table_prefix`; the `bigquery` format creates tables `[<table_prefix>_]judgments_<stamp>` and `[<table_prefix>_]leaderboard_<stamp>` (one stamp `<YYYYMMDD_HHMMSS>_<6 hex>`, UTC) in that dataset, which must exist.
        project: Google Cloud project that runs the BigQuery load jobs (empty: the destination's project).

    Returns:
        judgments_export: The exported judgments (JSONL for `jsonl` and `bigquery`, a JSON array for `json`).
        leaderboard_export: The exported leaderboard (JSONL for `jsonl` and `bigquery`, a JSON array for `json`).
        judgments_path: URI of the exported judgments: `bq://project.dataset.table` for `bigquery`.
        leaderboard_path: URI of the exported leaderboard: `bq://project.dataset.table` for `bigquery`.
    """
    from autorater_pipelines import io
    from autorater_pipelines.arena.export import export_arena

    result = export_arena(
        judgments=io.read_jsonl(judgments.path),
        leaderboard=io.read_jsonl(leaderboard.path),
        judgments_format=judgments_format,
        judgments_destination=judgments_export.path,
        leaderboard_destination=leaderboard_export.path,
        bigquery_destination_prefix=bigquery_destination_prefix,
        project=project,
    )
    return (
        result.judgments.bigquery_table or judgments_export.uri,
        result.leaderboard.bigquery_table or leaderboard_export.uri,
    )
