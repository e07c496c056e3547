"""Component: parse or generate a rubric for every checked Gecko row."""

from typing import NamedTuple

from kfp import dsl
from kfp.dsl import Dataset, Input, Output

from autorater_pipelines.components import IMAGE


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def prepare_gecko_rubrics(
    rows: Input[Dataset],
    id_columns: list,
    prompt_column: str,
    media_type: str,
    rubrics_column: str,
    rubric_group: str,
    rubric_generation_model: str,
    rubric_generation_parameters: dict,
    rubric_generation_prompt_template: str,
    project: str,
    location: str,
    pipeline_root: str,
    rubrics: Output[Dataset],
    rubric_errors: Output[Dataset],
) -> NamedTuple("Outputs", rubric_count=int, rubric_prompt_version=str):
    """Gives each checked row a rubric: parsed from `rubrics_column` when it is set, else generated from `prompt_column`.

    Rows whose rubric is missing, not JSON or could not be generated become error rows.

    Args:
        rows: JSONL of the dataset rows from the check step.
        id_columns: Columns whose values identify each row (and key replay recordings).
        prompt_column: Column with the text-to-image/video prompt (needed when rubrics are generated).
        media_type: `image` (yes/no questions) or `video` (multiple choice a-d).
        rubrics_column: Column with supplied rubrics (`{"keywords", "qas": [...]}`, a list of questions, or Vertex AI `rubric_groups`); empty = generate rubrics.
        rubric_group: The group of a Vertex AI `rubric_groups` column to use; empty = the only group.
        rubric_generation_model: Rubric generator model spec; empty = the default Gemini Flash model.
        rubric_generation_parameters: Rubric generator settings: `temperature`, `base_url`, `max_concurrency`, `requests_per_minute`, `max_retries`, `timeout_s`, `cache_dir`, `strict` (fail the step when the model calls stop early, after writing every row; default false: rows not called are error rows with the reason).
        rubric_generation_prompt_template: Override of the rubric generation prompt in Jinja2 (variables `prompt`, `question_types`, `media_type`) or Vertex AI SDK syntax (`{prompt}`; other braces literal); empty = built-in.
        project: Google Cloud project for Vertex AI models.
        location: Google Cloud region for Vertex AI models.
        pipeline_root: The pipeline root; on Cloud Storage the response cache defaults to `<pipeline_root>/autorater-cache`, so a retried task or a re-run repeats no finished call.

    Returns:
        rubrics: JSONL, one row per dataset row with a usable rubric: the dataset columns plus `keywords`, `qas` (question_id, question, question_type, choices, answer, justification, dependencies, keyword_id) and `rubric_warnings`.
        rubric_errors: JSONL of rows without a usable rubric: ids, `stage`, `error_kind`, `error_message`, `raw`.
        rubric_count: Number of rows with a usable rubric.
        rubric_prompt_version: The rubric prompt: `text-rubrics-v1` (built-in text prompt), `image-rubrics-builtin`/`video-rubrics-builtin`, `custom-<12 hex of the template's SHA-256>` or `supplied` (rubrics_column).
    """
    from autorater_pipelines.gecko import steps as gecko_steps

    summary = gecko_steps.rubrics_for_rows(
        rows_path=rows.path,
        id_columns=id_columns,
        media_type=media_type,
        prompt_column=prompt_column,
        rubrics_column=rubrics_column,
        rubric_group=rubric_group,
        rubric_generation_model=rubric_generation_model,
        rubric_generation_parameters=rubric_generation_parameters,
        rubric_generation_prompt_template=rubric_generation_prompt_template,
        project=project,
        location=location,
        rubrics_path=rubrics.path,
        errors_path=rubric_errors.path,
        pipeline_root=pipeline_root,
    )
    return (summary.rubric_count, summary.prompt_version)
