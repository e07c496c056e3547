"""Component: check the Gecko run parameters and dataset before any model call."""

from typing import NamedTuple

from kfp import dsl
from kfp.dsl import Dataset, Output

from autorater_pipelines.components import IMAGE


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def check_gecko_run(
    evaluation_dataset: str,
    id_columns: list,
    prompt_column: str,
    media_column: str,
    media_type: str,
    response_columns: dict,
    response_model: str,
    response_model_parameters: dict,
    rubrics_column: str,
    rubric_group: str,
    rubric_generation_model: str,
    rubric_generation_parameters: dict,
    rubric_generation_prompt_template: str,
    validator_model: str,
    validator_parameters: dict,
    validator_prompt_template: str,
    scoring: dict,
    output_format: str,
    bigquery_destination_prefix: str,
    project: str,
    location: str,
    rows: Output[Dataset],
) -> NamedTuple("Outputs", evaluation_count=int):
    """Checks every run parameter and the evaluation dataset, and writes the dataset rows for the rubric step.

    The one check of the run (later steps trust it): fails before any model call on bad parameters (unknown keys, values out of range, malformed model specs, a Vertex AI model with no project, templates that do not render) or bad data (missing columns, missing or duplicate ids). It calls no model and has no retry policy, so a bad parameter fails once.

    Args:
        evaluation_dataset: Comma-separated JSONL/JSON/CSV/Parquet files.
        id_columns: Columns whose values identify each row uniquely.
        prompt_column: Column with the text-to-image/video prompt (needed when rubrics are generated).
        media_column: Column with the image/video: gs:// URI, http(s) URL, local path, or Vertex `contents` JSON.
        media_type: `image` (yes/no questions), `video` (multiple choice a-d) or `text` (pass/fail rubrics).
        response_columns: `{candidate name: column}` to compare several candidates' responses on the same rubrics of each prompt (rubrics made once per prompt); empty = `media_column`.
        response_model: Response model spec, checked here: generates each row's text response from `prompt_column` into `media_column` (AutoSxS's inference step; replay key: id columns and `model` = "response"); empty = responses read from the data.
        response_model_parameters: Settings of response_model, as AutoSxS's `model_a_parameters` (`temperature`, `max_output_tokens`, `base_url`, `max_concurrency`, `cache_dir` …).
        rubrics_column: Column with supplied rubrics; empty = generate rubrics.
        rubric_group: The group of a Vertex AI `rubric_groups` column to use; empty = the only group.
        rubric_generation_model: Rubric generator model spec, checked here so a typo fails before any model call.
        rubric_generation_parameters: Rubric generator settings, checked here.
        rubric_generation_prompt_template: Rubric generation prompt override, checked here.
        validator_model: Validator model spec, checked here.
        validator_parameters: Validator settings, checked here.
        validator_prompt_template: Validator prompt override, checked here.
        scoring: Scoring options, checked here.
        output_format: Export format (`jsonl`, `json` or `bigquery`), checked here.
        bigquery_destination_prefix: BigQuery destination of the `bigquery` format, checked here.
        project: Google Cloud project for Vertex AI models (checked here, not called).
        location: Google Cloud region for Vertex AI models.

    Returns:
        rows: JSONL of the dataset rows, local media paths resolved against their dataset file.
        evaluation_count: Number of rows in the evaluation dataset.
    """
    params = {name: value for name, value in locals().items() if name != "rows"}  # by name
    from autorater_pipelines.gecko import steps as gecko_steps

    return (gecko_steps.check_run(params, rows.path).evaluation_count,)
