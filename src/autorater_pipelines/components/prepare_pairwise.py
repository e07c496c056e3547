"""Component: validate the AutoSxS dataset and render autorater prompt parameters."""

from typing import NamedTuple

from kfp import dsl
from kfp.dsl import Dataset, Output

from autorater_pipelines.components import IMAGE


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def prepare_pairwise_examples(
    evaluation_dataset: str,
    task: str,
    id_columns: list,
    autorater_prompt_parameters: dict,
    response_column_a: str,
    response_column_b: str,
    human_preference_column: str,
    model_a: str,
    model_b: str,
    model_a_prompt_parameters: dict,
    model_b_prompt_parameters: dict,
    model_a_parameters: dict,
    model_b_parameters: dict,
    autorater_model: str,
    autorater_parameters: dict,
    judgments_format: str,
    bigquery_destination_prefix: str,
    experimental_args: dict,
    project: str,
    location: str,
    prepared_examples: Output[Dataset],
    autorater_panel: list = [],  # noqa: B006 (KFP copies the default into the spec)
    panel_vote: str = "",
) -> NamedTuple("Outputs", example_count=int, shard_indices=list, shard_count=int):
    """Checks every run parameter and the evaluation dataset, and renders the autorater prompt parameters of every row.

    The one check of the run (later steps trust it): fails before any model call when a parameter or a row is
    bad (a value out of range, an unknown key, a malformed model spec, missing or duplicate ids, unknown columns or
    template variables, invalid human labels), naming the parameter, or the file, row and column.

    Args:
        evaluation_dataset: Comma-separated JSONL/JSON/CSV/Parquet files.
        task: Evaluation task `{task}[@{version}]`: `summarization@001`, `question_answering` (= `@latest`), or `custom[@...]`.
        id_columns: Columns whose values identify each example uniquely.
        autorater_prompt_parameters: Map of autorater prompt parameters (`inference_instruction`, `inference_context`, or a custom task's keys) to a column name, `{"column": name}` or `{"template": "... {{ column }} ..."}`.
        response_column_a: Dataset column with model A's responses; without such a column and with model_a set, the field of model A's output to use (`content`, `predictions`, …); empty = generated.
        response_column_b: As response_column_a, for model B.
        human_preference_column: Optional column with human preferences (A, B, TIE; Model A/Model B and model_a/model_b accepted, any case).
        model_a: Model A spec; its responses are generated when response_column_a is empty or not a dataset column.
        model_b: Model B spec; its responses are generated when response_column_b is empty or not a dataset column.
        model_a_prompt_parameters: Model A prompt: `{"prompt": ...}` or `{"contents": ..., "system_instruction": ...}` (Gemini; system_instruction optional); values a column name, `{"column": name}` or `{"template": "..."}` (`{{ default_instruction }}` available).
        model_b_prompt_parameters: Model B prompt, as model_a_prompt_parameters.
        model_a_parameters: Model A generation settings, validated here when model A's responses are generated.
        model_b_parameters: Model B generation settings, as model_a_parameters.
        autorater_model: Autorater model spec, validated here so a typo fails before judging.
        autorater_parameters: Autorater parameters, validated here.
        judgments_format: Export format (`jsonl`, `json` or `bigquery`), validated here.
        bigquery_destination_prefix: BigQuery destination for the `bigquery` format (`project.dataset[.table_prefix]`), validated here.
        experimental_args: Experimental arguments, e.g. `custom_task_definition`.
        project: Google Cloud project for Vertex AI models (checked here, not called).
        location: Google Cloud region for Vertex AI models.
        autorater_panel: Jurors' model specs, validated here (each as `autorater_model`, named `autorater_panel[i]`).
        panel_vote: How the panel votes (`majority` or `mean`), validated here.

    Returns:
        prepared_examples: JSONL of prepared examples: id columns, rendered prompt parameters, `response_a`, `response_b`, human preference.
        example_count: Number of prepared examples (one per dataset row).
        shard_indices: `[0, 1, ..., shards - 1]` from `autorater_parameters.shards` (default 1): one judging task per shard.
        shard_count: Number of judging shards.
    """
    params = {name: value for name, value in locals().items() if name != "prepared_examples"}  # by name
    from autorater_pipelines import autosxs

    run = autosxs.prepare_run(params, prepared_examples.path)
    shards = run.params.autorater_parameters.shards
    return (run.row_count or 0, list(range(shards)), shards)
