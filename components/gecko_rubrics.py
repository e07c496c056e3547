"""Component: check the Gecko run parameters and dataset, then parse or generate a rubric per row."""

from typing import NamedTuple

from kfp import dsl
from kfp.dsl import Dataset, Output

from autorater_pipelines.components import IMAGE


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def prepare_gecko_rubrics(
    evaluation_dataset: str,
    id_columns: list,
    prompt_column: str,
    media_column: str,
    media_type: str,
    rubrics_column: str,
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
    rubrics: Output[Dataset],
    rubric_errors: Output[Dataset],
) -> NamedTuple("Outputs", evaluation_count=int, rubric_count=int):
    """Checks every run parameter and the dataset, then gives each row a rubric: parsed from `rubrics_column` when it is set, else generated from `prompt_column`.

    The one check of the run (later steps trust it): fails before any model call on bad parameters (unknown keys, values out of range, malformed model specs, a Vertex AI model with no project, templates that do not render) or bad data (missing columns, missing or duplicate ids). Rows whose rubric is missing, not JSON or could not be generated become error rows.

    Args:
        evaluation_dataset: Comma-separated JSONL/JSON/CSV/Parquet files.
        id_columns: Columns whose values identify each row uniquely.
        prompt_column: Column with the text-to-image/video prompt (needed when rubrics are generated).
        media_column: Column with the image/video: gs:// URI, http(s) URL, local path, or Vertex `contents` JSON.
        media_type: `image` (yes/no questions) or `video` (multiple choice a-d).
        rubrics_column: Column with supplied rubrics (`{"keywords", "qas": [...]}` or a list of questions); empty = generate rubrics.
        rubric_generation_model: Rubric generator model spec; empty = the default Gemini Flash model.
        rubric_generation_parameters: Rubric generator settings: `temperature`, `base_url`, `max_concurrency`, `requests_per_minute`, `max_retries`, `timeout_s`, `cache_dir`.
        rubric_generation_prompt_template: Override of the rubric generation prompt in Jinja2 (variables `prompt`, `question_types`, `media_type`) or Vertex AI SDK syntax (`{prompt}`; other braces literal); empty = built-in.
        validator_model: Validator model spec, checked here so a typo fails before any model call.
        validator_parameters: Validator settings, checked here.
        validator_prompt_template: Validator prompt override, checked here.
        scoring: Scoring options, checked here.
        output_format: Export format (`jsonl`, `json` or `bigquery`), checked here.
        bigquery_destination_prefix: BigQuery destination of the `bigquery` format, checked here.
        project: Google Cloud project for Vertex AI models.
        location: Google Cloud region for Vertex AI models.

    Returns:
        rubrics: JSONL, one row per dataset row with a usable rubric: the dataset columns plus `keywords`, `qas` (question_id, question, question_type, choices, answer, justification, dependencies, keyword_id) and `rubric_warnings`.
        rubric_errors: JSONL of rows without a usable rubric: ids, `stage`, `error_kind`, `error_message`, `raw`.
        evaluation_count: Number of rows in the evaluation dataset.
        rubric_count: Number of rows with a usable rubric.
    """
    params = {name: value for name, value in locals().items() if name not in ("rubrics", "rubric_errors")}
    from autorater_pipelines.gecko import steps as gecko_steps

    summary = gecko_steps.prepare_run(params, rubrics.path, rubric_errors.path)
    return (summary.evaluation_count, summary.rubric_count)
