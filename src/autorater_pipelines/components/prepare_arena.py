"""Component: check an arena run and build its pair examples."""

from typing import NamedTuple

from kfp import dsl
from kfp.dsl import Dataset, Output

from autorater_pipelines.components import IMAGE


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def prepare_arena_pairs(
    evaluation_dataset: str,
    task: str,
    id_columns: list,
    autorater_prompt_parameters: dict,
    response_columns: dict,
    models: dict,
    pairing: str,
    baseline: str,
    opponents_per_prompt: int,
    seed: int,
    bootstrap_rounds: int,
    style_control: bool,
    ties: str,
    strong_verdict_weight: int,
    autorater_model: str,
    autorater_parameters: dict,
    experimental_args: dict,
    judgments_format: str,
    bigquery_destination_prefix: str,
    project: str,
    location: str,
    prepared_examples: Output[Dataset],
    autorater_panel: list = [],  # noqa: B006 (KFP copies the default into the spec)
    panel_vote: str = "",
) -> NamedTuple(
    "Outputs", pair_count=int, judge_call_count=int, pair_id_columns=list, shard_indices=list, shard_count=int
):
    """Checks every run parameter and the dataset, and writes one example per judged pair and prompt.

    The one check of the run (later steps trust it): fails before any model call when a parameter or a row is
    bad, naming the parameter, or the file, row and column.

    Args:
        evaluation_dataset: Comma-separated JSONL/JSON/CSV/Parquet files, or `bq://project.dataset.table`.
        task: The judge's task `{task}[@{version}]`, as AutoSxS's.
        id_columns: Columns whose values identify each prompt uniquely.
        autorater_prompt_parameters: Map of autorater prompt parameters to a column or `{"template": ...}`.
        response_columns: Model name → dataset column with its responses.
        models: Model name → `{"model": spec, "prompt_parameters": {...}, "parameters": {...}}`: models whose responses are generated (2 or more models with `response_columns`); their specs and prompts are checked here.
        pairing: `all`, `baseline` or `sampled`.
        baseline: Baseline model name (score 0; required with `pairing: baseline`).
        opponents_per_prompt: Opponents drawn per model and prompt with `pairing: sampled`.
        seed: Seed of the sampled pairs and of the bootstrap.
        bootstrap_rounds: Bootstrap rounds over prompts (0–2000), checked here.
        style_control: Style-controlled scores, checked here.
        ties: `half` or `rao_kupper`, checked here.
        strong_verdict_weight: Battles a strong verdict counts as, checked here.
        autorater_model: Judge model spec, validated here.
        autorater_parameters: Judge settings, validated here.
        autorater_panel: Jurors' model specs judging instead of `autorater_model`, validated here (named `autorater_panel[i]`).
        panel_vote: How the panel votes (`majority` or `mean`), validated here.
        experimental_args: Experimental arguments, e.g. `custom_task_definition`.
        judgments_format: Export format of the judgments and the leaderboard (`jsonl`, `json` or `bigquery`), validated here.
        bigquery_destination_prefix: BigQuery destination for the `bigquery` format (`project.dataset[.table_prefix]`), validated here.
        project: Google Cloud project for Vertex AI models (checked here, not called).
        location: Google Cloud region for Vertex AI models.

    Returns:
        prepared_examples: JSONL, one example per judged pair and prompt: id columns, `model_a`, `model_b` (names sorted), rendered prompt parameters, `response_a`, `response_b` (None for a model of `models`, whose rendered prompt is in `model_a_prompt` / `model_b_prompt`).
        pair_count: Number of pair examples.
        judge_call_count: Number of judge calls (pairs × `sampling_count`).
        pair_id_columns: The id columns of a pair: `id_columns` + `model_a`, `model_b`.
        shard_indices: `[0, 1, ..., shards - 1]` from `autorater_parameters.shards` (default 1).
        shard_count: Number of judging shards.
    """
    params = {name: value for name, value in locals().items() if name != "prepared_examples"}  # by name
    from autorater_pipelines.arena import steps

    run = steps.prepare_run(params, prepared_examples.path)
    pairs = len(run.rows or [])
    shards = run.params.autorater_parameters.shards
    calls = pairs * run.params.autorater_parameters.sampling_count
    return (pairs, calls, run.params.pair_id_columns, list(range(shards)), shards)
