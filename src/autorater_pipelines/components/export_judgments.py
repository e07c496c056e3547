"""Component: export judgments in the requested format."""

from typing import NamedTuple

from kfp import dsl
from kfp.dsl import Dataset, Input, Output

from autorater_pipelines.components import IMAGE


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def export_pairwise_judgments(
    judgments: Input[Dataset],
    judgments_format: str,
    bigquery_destination_prefix: str,
    project: str,
    evaluation_dataset: Output[Dataset],
) -> NamedTuple("Outputs", evaluation_dataset_path=str):
    """Writes the evaluation dataset with judgments in `judgments_format`.

    Args:
        judgments: JSONL of judgments from the judge step.
        judgments_format: `jsonl` (one object per line), `json` (one array) or `bigquery` (a new table named from `bigquery_destination_prefix`).
        bigquery_destination_prefix: `project.dataset` or `project.dataset.table_prefix`; the `bigquery` format creates table `[<table_prefix>_]judgments_<YYYYMMDD_HHMMSS>_<6 hex>` (UTC) in that dataset, which must exist.
        project: Google Cloud project that runs the BigQuery load job (empty: the destination's project).

    Returns:
        evaluation_dataset: The exported evaluation dataset with judgments (JSONL for `jsonl` and `bigquery`, a JSON array for `json`).
        evaluation_dataset_path: URI of the exported evaluation dataset with judgments: `bq://project.dataset.table` for `bigquery`.
    """
    from autorater_pipelines import autosxs

    result = autosxs.export_judgments(
        judgments_path=judgments.path,  # streamed
        judgments_format=judgments_format,
        destination=evaluation_dataset.path,
        bigquery_destination_prefix=bigquery_destination_prefix,
        project=project,
    )
    return (result.bigquery_table or evaluation_dataset.uri,)
