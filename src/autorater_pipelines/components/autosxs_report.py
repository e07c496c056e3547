"""Component: the AutoSxS HTML report and the human/autorater confusion matrix for the Vertex AI console."""

from kfp import dsl
from kfp.dsl import HTML, Artifact, ClassificationMetrics, Dataset, Input, Output

from autorater_pipelines.components import IMAGE


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def build_autosxs_report(
    judgments: Input[Dataset],
    metrics_json: Input[Artifact],
    error_messages: Input[Dataset],
    report: Output[HTML],
    confusion_matrix: Output[ClassificationMetrics],
):
    """Builds a self-contained HTML report of the judgments and logs the confusion matrix against human labels.

    Args:
        judgments: JSONL of judgments.
        metrics_json: The AutoSxS metrics as one JSON object.
        error_messages: JSONL of failed samples and rows.

    Returns:
        report: One HTML page (no network needed): win rates with 95 % intervals, tie rate, confidence histogram, position consistency, length bias, human alignment and confusion matrix, and a filterable table of every judgment with its samples.
        confusion_matrix: Human preference (rows) against autorater choice (columns) over A, B and TIE; empty without human_preference_column.
    """
    from autorater_pipelines import report as reports

    built = reports.write_artifact_report(
        "autosxs",
        rows_path=judgments.path,
        metrics_path=metrics_json.path,
        errors_path=error_messages.path,
        output_path=report.path,
    )
    if built.categories:
        confusion_matrix.log_confusion_matrix(list(built.categories), built.matrix)
