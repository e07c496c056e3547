"""Component: AutoSxS metrics from judgments."""

from typing import NamedTuple

from kfp import dsl
from kfp.dsl import Artifact, Dataset, Input, Metrics, Output

from autorater_pipelines.components import IMAGE


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def compute_pairwise_metrics(
    judgments: Input[Dataset],
    human_preference_column: str,
    autosxs_metrics: Output[Metrics],
    metrics_json: Output[Artifact],
) -> NamedTuple("Outputs", evaluation_count=int):
    """Computes win rates with 95 % confidence intervals, position consistency and human alignment.

    Args:
        judgments: JSONL of judgments from the judge step.
        human_preference_column: Column of human preferences; empty = no alignment metrics.

    Returns:
        metrics_json: The same metrics and counts as one JSON object (None where a rate has no denominator).
        autosxs_metrics: Numeric metrics shown in the Vertex AI console: `autorater_model_a_win_rate`, `autorater_model_b_win_rate`, `autorater_tie_rate`, `position_consistency`, and with human labels `accuracy`, `precision`, `recall`, `f1_score`, `cohens_kappa`, confusion counts.
        evaluation_count: Number of judgments (all rows, including ERROR).
    """
    from autorater_pipelines import autosxs, io

    result = autosxs.aggregate_judgments(
        judgments=io.read_jsonl(judgments.path),
        human_preference_column=human_preference_column,
        metrics_path=metrics_json.path,
    )
    for name, value in result.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            autosxs_metrics.log_metric(name, value)
    return (result["evaluation_count"],)
