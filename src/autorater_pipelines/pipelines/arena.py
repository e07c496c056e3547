"""The ``arena`` pipeline: rank many models from pairwise judgments (Bradley–Terry with bootstrap intervals)."""

from typing import Any, Dict, List, NamedTuple

from kfp import dsl
from kfp.dsl import Dataset, Metrics

from autorater_pipelines.components.arena_report import build_arena_report
from autorater_pipelines.components.export_arena import export_arena_results
from autorater_pipelines.components.generate_arena_responses import generate_arena_responses
from autorater_pipelines.components.online_evaluation_pairwise import online_evaluation_pairwise
from autorater_pipelines.components.prepare_arena import prepare_arena_pairs
from autorater_pipelines.components.rank_arena import rank_arena_models
from autorater_pipelines.pipelines._pairwise import judge_in_shards
from autorater_pipelines.pipelines._placeholders import LOCATION_PLACEHOLDER, PROJECT_ID_PLACEHOLDER
from autorater_pipelines.pipelines._retry import retry_model_step


class PipelineOutput(NamedTuple):
    """Outputs of the arena pipeline (described in its docstring)."""

    leaderboard: Dataset
    judgments: Dataset
    error_messages: Dataset
    arena_metrics: Metrics
    judgments_path: str
    leaderboard_path: str


@dsl.pipeline(name="arena-template", description="Ranks many models from pairwise judgments by an open autorater.")
def arena_pipeline(  # noqa: B006
    evaluation_dataset: str,
    task: str,
    id_columns: List[str],
    autorater_prompt_parameters: Dict[str, Any],
    response_columns: Dict[str, str] = {},
    models: Dict[str, Any] = {},
    pairing: str = "all",
    baseline: str = "",
    opponents_per_prompt: int = 1,
    seed: int = 0,
    bootstrap_rounds: int = 100,
    style_control: bool = False,
    ties: str = "half",
    strong_verdict_weight: int = 3,
    autorater_model: str = "gemini-2.5-flash",
    autorater_parameters: Dict[str, Any] = {},
    autorater_panel: List[str] = [],
    panel_vote: str = "",
    experimental_args: Dict[str, Any] = {},
    judgments_format: str = "jsonl",
    bigquery_destination_prefix: str = "",
    project: str = PROJECT_ID_PLACEHOLDER,
    location: str = LOCATION_PLACEHOLDER,
) -> PipelineOutput:
    """Ranks many models on the same prompts: every pair is judged as AutoSxS judges a row, every judged sample is a battle, Bradley–Terry gives the leaderboard with prompt-bootstrap 95 % intervals.

    Args:
        evaluation_dataset: Comma-separated list of JSONL/JSON/CSV/Parquet files (local paths or `gs://` URIs, wildcards allowed), or a BigQuery table `bq://project.dataset.table`, one row per prompt with the responses of `response_columns`' models.
        task: The judge's task `{task}[@{version}]`: `summarization`, `question_answering` or `arena_hard` (Arena-Hard's verdict `[[A>>B]]` … `[[B>>A]]`, strong verdicts weighed by `strong_verdict_weight`) with version `001` or `latest`, or `custom[@...]` with `experimental_args.custom_task_definition` (as AutoSxS's).
        id_columns: The columns which distinguish unique prompts.
        autorater_prompt_parameters: Map of autorater prompt parameters to columns or templates (as AutoSxS's), e.g. `{"inference_instruction": {"column": "question"}}`.
        response_columns: Model name → dataset column with that model's responses, e.g. `{"tuned-v1": "response_v1", "base": "response_base"}`; the names are the leaderboard's rows (2 or more with `models`).
        models: Model name → `{"model": spec, "prompt_parameters": {"prompt": ...}, "parameters": {...}}`: models whose responses are generated, once per prompt, as AutoSxS's `model_a` (same model specs, prompt forms and settings; `parameters.mode: batch` runs Vertex AI batch prediction), then judged like `response_columns`' models; a failed generation leaves that model's pairs on that prompt unjudged, with the reason in `error_messages`. E.g. `{"tuned-v2": {"model": "openai/tuned-v2", "prompt_parameters": {"prompt": {"column": "question"}}}}`.
        pairing: Which pairs are judged on each prompt: `all` (every pair), `baseline` (every model against `baseline`), `sampled` (`opponents_per_prompt` seeded random opponents per model and prompt).
        baseline: Baseline model name: its score is 0 and the leaderboard gains `win_rate_vs_baseline`; required with `pairing: baseline`; empty = scores centred at mean 0.
        opponents_per_prompt: With `pairing: sampled`, opponents drawn for each model on each prompt (default 1).
        seed: Seed of the sampled pairs and of the bootstrap (same seed, same intervals).
        bootstrap_rounds: Bootstrap refits over prompts for the 95 % intervals (default 100, at most 2000; 0 = no intervals).
        style_control: Add the length and Markdown-density differences of each pair's responses as Bradley–Terry covariates (Chatbot Arena / Arena-Hard v2): `score_style_controlled` with its interval, and the coefficients in the metrics.
        ties: How ties enter the fit: `half` (half a win to each side, default) or `rao_kupper`.
        strong_verdict_weight: How many battles a strong verdict (`A>>B`, `B>>A`: task `arena_hard`, or `verdict_map` values of that scale) counts as (default 3, Arena-Hard's).
        autorater_model: Judge model spec: a Gemini model on Vertex AI, `openai/<model>`, or `replay/<jsonl>` (lines keyed by the id columns, `model_a`, `model_b`, `flipped`, `sample_index`).
        autorater_parameters: Judge settings, as AutoSxS's: `sampling_count` (default 2), `flip` (default true: both orders; "random": one order per pair, half of the pairs swapped), `identical_responses`, `temperature`, `base_url`, `max_concurrency`, `requests_per_minute`, `verdict_pattern` + `verdict_map`, `shards`, `cache_dir`, ...
        autorater_panel: A panel of judges instead of `autorater_model`, as AutoSxS's: two or more model specs (Gemini, `openai/...` and `replay/...` may be mixed); every juror judges every pair alone with `autorater_parameters` (its own cache and quota) and each battle is the panel's verdict (`panel_vote`). Empty (default) = one judge.
        panel_vote: How the panel votes on a pair: `majority` (default; the verdict of a strict majority of the jurors that voted, else a tie) or `mean` (the voters' mean preference for model A: above 0.5 A, below B, 0.5 a tie). Only with `autorater_panel`.
        experimental_args: Experimentally released arguments, e.g. `custom_task_definition`.
        judgments_format: Format of the exported judgments and leaderboard, as AutoSxS's: `jsonl`, `json` (one array per file), or `bigquery` (a new table for each in `bigquery_destination_prefix`; `judgments_path` and `leaderboard_path` are then `bq://project.dataset.table`).
        bigquery_destination_prefix: `project.dataset` or `project.dataset.table_prefix` for the `bigquery` format: tables `[<table_prefix>_]judgments_<stamp>` and `[<table_prefix>_]leaderboard_<stamp>` (one stamp `<YYYYMMDD_HHMMSS>_<6 hex>`, UTC); the dataset must exist.
        project: Google Cloud project of Vertex AI model calls (default: the pipeline job's project).
        location: Google Cloud region of Vertex AI model calls (default: the pipeline job's region).

    Returns:
        leaderboard: JSONL, one row per model, best first: `model`, `score`, `score_ci_lower`, `score_ci_upper`, `elo`, `win_rate_vs_baseline`, `rank`, `rank_lower`, `rank_upper`, `battles`, `wins`, `losses`, `ties`, `mean_response_length`, `score_style_controlled` (+ CI).
        judgments: JSONL, one judgment per judged pair and prompt: id columns, `model_a`, `model_b`, `response_a`, `response_b`, `choice`, `confidence`, `explanation`, `samples`.
        error_messages: JSONL of failed samples and pairs with the reason.
        arena_metrics: Scores and separability (the full metrics, win matrix included, are the ranking step's `metrics_json`).
        judgments_path: URI of the exported judgments (`judgments_format`): `bq://project.dataset.table` for `bigquery`.
        leaderboard_path: URI of the exported leaderboard (`judgments_format`): `bq://project.dataset.table` for `bigquery`.
    """
    prepare = prepare_arena_pairs(
        evaluation_dataset=evaluation_dataset,
        task=task,
        id_columns=id_columns,
        autorater_prompt_parameters=autorater_prompt_parameters,
        response_columns=response_columns,
        models=models,
        pairing=pairing,
        baseline=baseline,
        opponents_per_prompt=opponents_per_prompt,
        seed=seed,
        bootstrap_rounds=bootstrap_rounds,
        style_control=style_control,
        ties=ties,
        strong_verdict_weight=strong_verdict_weight,
        autorater_model=autorater_model,
        autorater_parameters=autorater_parameters,
        autorater_panel=autorater_panel,
        panel_vote=panel_vote,
        experimental_args=experimental_args,
        judgments_format=judgments_format,
        bigquery_destination_prefix=bigquery_destination_prefix,
        project=project,
        location=location,
    ).set_display_name("Prepare pairs")
    responses = generate_arena_responses(
        prepared_examples=prepare.outputs["prepared_examples"],
        id_columns=id_columns,
        models=models,
        project=project,
        location=location,
        pipeline_root=dsl.PIPELINE_ROOT_PLACEHOLDER,
    ).set_display_name("Generate responses")
    retry_model_step(responses)  # resumes from the cache
    shards = judge_in_shards(
        examples=responses.outputs["examples_with_responses"],
        shard_indices=prepare.outputs["shard_indices"],
        shard_count=prepare.outputs["shard_count"],
        task=task,
        id_columns=prepare.outputs["pair_id_columns"],
        autorater_model=autorater_model,
        autorater_parameters=autorater_parameters,
        autorater_panel=autorater_panel,
        panel_vote=panel_vote,
        project=project,
        location=location,
        experimental_args=experimental_args,
    ).set_display_name("Judge shards")
    judge = online_evaluation_pairwise(
        examples=responses.outputs["examples_with_responses"],
        id_columns=prepare.outputs["pair_id_columns"],
        judgment_shards=shards.outputs["judgments"],
        error_shards=shards.outputs["error_messages"],
    ).set_display_name("Arena judgments")
    rank = rank_arena_models(
        judgments=judge.outputs["judgments"],
        id_columns=id_columns,
        baseline=baseline,
        bootstrap_rounds=bootstrap_rounds,
        seed=seed,
        style_control=style_control,
        ties=ties,
        strong_verdict_weight=strong_verdict_weight,
    ).set_display_name("Arena leaderboard")
    build_arena_report(
        leaderboard=rank.outputs["leaderboard"],
        judgments=judge.outputs["judgments"],
        metrics_json=rank.outputs["metrics_json"],
        error_messages=judge.outputs["error_messages"],
    ).set_display_name("Arena report")
    export = export_arena_results(
        judgments=judge.outputs["judgments"],
        leaderboard=rank.outputs["leaderboard"],
        judgments_format=judgments_format,
        bigquery_destination_prefix=bigquery_destination_prefix,
        project=project,
    ).set_display_name("Export judgments and leaderboard")
    return PipelineOutput(
        leaderboard=rank.outputs["leaderboard"],
        judgments=judge.outputs["judgments"],
        error_messages=judge.outputs["error_messages"],
        arena_metrics=rank.outputs["arena_metrics"],
        judgments_path=export.outputs["judgments_path"],
        leaderboard_path=export.outputs["leaderboard_path"],
    )
