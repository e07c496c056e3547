"""Component ``model-evaluation-text-generation-pairwise`` ("AutoSxS Metrics"): metrics and Model Registry evaluations.

Named as GCPC's metrics task, with its outputs: ``autosxs_metrics`` (whose metadata carries
``autosxs_model_a_win_rate`` and ``autosxs_model_b_win_rate`` beside our keys) and ``model_a_evaluation_path``
/ ``model_b_evaluation_path`` (the ModelEvaluation resource names, which ``aiplatform.PipelineJob`` reads).
"""

from typing import NamedTuple

from kfp import dsl
from kfp.dsl import Artifact, Dataset, Input, Metrics, Output

from autorater_pipelines.components import IMAGE


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def model_evaluation_text_generation_pairwise(
    judgments: Input[Dataset],
    human_preference_column: str,
    model_a: str,
    model_b: str,
    task: str,
    evaluation_dataset: str,
    autosxs_metrics: Output[Metrics],
    metrics_json: Output[Artifact],
    model_evaluations: Output[Artifact],
) -> NamedTuple("Outputs", evaluation_count=int, model_a_evaluation_path=str, model_b_evaluation_path=str):
    """Computes win rates with 95 % confidence intervals, position consistency and human alignment, and writes a ModelEvaluation to each Model Registry model compared.

    Args:
        judgments: JSONL of judgments from the autorater step.
        human_preference_column: Column of human preferences; empty = no alignment metrics.
        model_a: Model A spec; a Model Registry model (`projects/P/locations/L/models/M[@version]`) receives a ModelEvaluation.
        model_b: Model B spec, as model_a.
        task: The evaluation task, recorded in the ModelEvaluations.
        evaluation_dataset: The evaluation dataset, recorded in the ModelEvaluations.

    Returns:
        autosxs_metrics: Numeric metrics shown in the Vertex AI console: `autosxs_model_a_win_rate` and `autosxs_model_b_win_rate` (as Google's AutoSxS), `autorater_model_a_win_rate`, `autorater_model_b_win_rate`, `autorater_tie_rate`, `position_consistency`, and with human labels `accuracy`, `precision`, `recall`, `f1_score`, `cohens_kappa`, confusion counts.
        metrics_json: The same metrics and counts as one JSON object (None where a rate has no denominator).
        model_evaluations: JSON object per Model Registry model (`a`, `b`): `model`, `resource_name` of the imported ModelEvaluation, `error` when the import failed (the run continues).
        evaluation_count: Number of judgments (all rows, including ERROR).
        model_a_evaluation_path: Resource name of the ModelEvaluation imported into model A (empty: model A is not a Model Registry model, or the import failed).
        model_b_evaluation_path: Resource name of the ModelEvaluation imported into model B, as model_a_evaluation_path.
    """
    from autorater_pipelines import autosxs, io
    from autorater_pipelines.autosxs import model_registry

    result = autosxs.aggregate_judgments(
        judgments=io.JsonlFile(judgments.path),  # streamed: running aggregates
        human_preference_column=human_preference_column,
        metrics_path=metrics_json.path,
    )
    for name, value in autosxs.console_metrics(result).items():
        autosxs_metrics.log_metric(name, value)
    imported = model_registry.import_pairwise_evaluations(
        model_a=model_a,
        model_b=model_b,
        metrics=result,
        task=task,
        evaluation_dataset=evaluation_dataset,
        judgments_uri=judgments.uri,
    )
    io.write_json(model_evaluations.path, imported)
    names = [imported.get(side, {}).get("resource_name") or "" for side in ("a", "b")]
    return (result["evaluation_count"], names[0], names[1])
