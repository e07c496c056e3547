"""Component: rank the models of an arena from its judgments (Bradley–Terry with bootstrap intervals)."""

from kfp import dsl
from kfp.dsl import Artifact, Dataset, Input, Metrics, Output

from autorater_pipelines.components import IMAGE


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def rank_arena_models(
    judgments: Input[Dataset],
    id_columns: list,
    baseline: str,
    bootstrap_rounds: int,
    seed: int,
    style_control: bool,
    ties: str,
    strong_verdict_weight: int,
    leaderboard: Output[Dataset],
    metrics_json: Output[Artifact],
    arena_metrics: Output[Metrics],
) -> int:
    """Turns every judged sample into a battle and fits the leaderboard: Bradley–Terry scores with prompt-bootstrap 95 % intervals, ranks, win matrix, separability, style control.

    Args:
        judgments: JSONL of the judged pairs (`model_a`, `model_b`, `samples`, ...).
        id_columns: Columns whose values identify each prompt (the bootstrap resamples prompts).
        baseline: Baseline model (score 0, win rates against it); empty = scores centred at mean 0.
        bootstrap_rounds: Bootstrap rounds over prompts (0 = no intervals).
        seed: Seed of the bootstrap.
        style_control: Add length and Markdown-density covariates (`score_style_controlled`).
        ties: `half` (half a win each) or `rao_kupper`.
        strong_verdict_weight: Battles a strong verdict (`A>>B`) counts as.

    Returns:
        leaderboard: JSONL, one row per model, best first: `model`, `score`, `score_ci_lower`, `score_ci_upper`, `elo`, `win_rate_vs_baseline`, `rank`, `rank_lower`, `rank_upper`, `battles`, `wins`, `losses`, `ties`, `mean_response_length`, `score_style_controlled` (+ CI).
        metrics_json: JSON: battle counts, leaderboard, win matrix, separability, style coefficients, what the numbers are computed over.
        arena_metrics: Numeric metrics shown in the Vertex AI console: each model's score and the separability.
        Output: Number of battles (weighted).
    """
    from autorater_pipelines.arena import steps

    metrics = steps.rank_run(
        judgments.path,
        id_columns,
        {
            "baseline": baseline,
            "bootstrap_rounds": bootstrap_rounds,
            "seed": seed,
            "style_control": style_control,
            "ties": ties,
            "strong_verdict_weight": strong_verdict_weight,
        },
        leaderboard.path,
        metrics_json.path,
    )
    for row in metrics["leaderboard"].values():
        arena_metrics.log_metric(f"score_{row['model']}", row["score"])
    if metrics["separability"] is not None:
        arena_metrics.log_metric("separability", metrics["separability"])
    arena_metrics.log_metric("battle_count", metrics["battle_count"])
    return int(metrics["battle_count"])
