"""Component: the self-contained HTML report of an arena run."""

from kfp import dsl
from kfp.dsl import HTML, Artifact, Dataset, Input, Output

from autorater_pipelines.components import IMAGE


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def build_arena_report(
    leaderboard: Input[Dataset],
    judgments: Input[Dataset],
    metrics_json: Input[Artifact],
    error_messages: Input[Dataset],
    report: Output[HTML],
):
    """Builds a self-contained HTML report of the arena: the leaderboard with its intervals, the win matrix and the flagged pairs.

    Args:
        leaderboard: JSONL, one row per model (the ranking step's output).
        judgments: JSONL of the judged pairs.
        metrics_json: The arena metrics as one JSON object.
        error_messages: JSONL of failed samples and rows.

    Returns:
        report: One HTML page (no network needed): leaderboard with 95 % intervals, ranks, Elo and W/L/T, win-rate heatmap, style coefficients, and the pairs whose samples disagree or failed.
    """
    import os
    import shutil
    import tempfile

    from autorater_pipelines import report as reports

    with tempfile.TemporaryDirectory() as directory:  # the layout of an `autorater run arena` OUT
        for name, artifact in (
            ("leaderboard.jsonl", leaderboard),
            ("judgments.jsonl", judgments),
            ("metrics.json", metrics_json),
            ("error_messages.jsonl", error_messages),
        ):
            shutil.copyfile(artifact.path, os.path.join(directory, name))
        reports.write_report(directory, report.path)
