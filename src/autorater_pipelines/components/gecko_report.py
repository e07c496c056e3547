"""Component: the Gecko HTML report for the Vertex AI console."""

from kfp import dsl
from kfp.dsl import HTML, Artifact, Dataset, Input, Output

from autorater_pipelines.components import IMAGE


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def build_gecko_report(
    results: Input[Dataset],
    metrics_json: Input[Artifact],
    error_messages: Input[Dataset],
    id_columns: list,
    prompt_column: str,
    media_column: str,
    report: Output[HTML],
):
    """Builds a self-contained HTML report of the Gecko results.

    Args:
        results: JSONL of result rows.
        metrics_json: The Gecko metrics as one JSON object.
        error_messages: JSONL of rows that failed at any stage.
        id_columns: Columns whose values identify each row.
        prompt_column: Column of the generation prompt (empty: detected).
        media_column: Column of the image or video.

    Returns:
        report: One HTML page (no network needed): final_score distribution, accuracy per question type, every row with its media (local images embedded, other media linked), keywords and each question's expected answer, verdict and score, parse failures and error messages.
    """
    from autorater_pipelines import report as reports

    reports.write_artifact_report(
        "gecko",
        rows_path=results.path,
        metrics_path=metrics_json.path,
        errors_path=error_messages.path,
        output_path=report.path,
        id_columns=id_columns,
        prompt_column=prompt_column or None,
        media_column=media_column or None,
    )
