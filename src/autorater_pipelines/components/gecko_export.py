"""Component: export Gecko results in the requested format."""

from typing import NamedTuple

from kfp import dsl
from kfp.dsl import Dataset, Input, Output

from autorater_pipelines.components import IMAGE


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def export_gecko_results(
    results: Input[Dataset],
    output_format: str,
    bigquery_destination_prefix: str,
    project: str,
    evaluation_results: Output[Dataset],
) -> NamedTuple("Outputs", evaluation_results_path=str):
    """Writes the Gecko result rows in `output_format`.

    Args:
        results: JSONL of result rows from the scoring step.
        output_format: `jsonl` (one object per line), `json` (one array) or `bigquery` (a new table `[prefix_]results_<YYYYMMDD_HHMMSS>_<6 hex>`, and the JSONL file).
        bigquery_destination_prefix: `project.dataset` or `project.dataset.table_prefix` for the `bigquery` format; the dataset must exist.
        project: Project that runs the BigQuery load job (empty: the destination's project).

    Returns:
        evaluation_results: The exported result rows.
        evaluation_results_path: URI of the exported result rows: the file, or `bq://project.dataset.table` with `bigquery`.
    """
    from autorater_pipelines.gecko import steps as gecko_steps

    exported = gecko_steps.export_results(
        results_path=results.path,
        output_format=output_format,
        destination=evaluation_results.path,
        bigquery_destination_prefix=bigquery_destination_prefix,
        project=project,
    )
    return (exported.bigquery_table or evaluation_results.uri,)
