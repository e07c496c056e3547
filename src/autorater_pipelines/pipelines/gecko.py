"""The ``gecko`` pipeline: rubric-based evaluation of generated images and videos (Gecko, arXiv 2404.16820)."""

from typing import Any, NamedTuple

from kfp import dsl
from kfp.dsl import Dataset, Metrics

from autorater_pipelines.components.gecko_check import check_gecko_run
from autorater_pipelines.components.gecko_export import export_gecko_results
from autorater_pipelines.components.gecko_report import build_gecko_report
from autorater_pipelines.components.gecko_rubrics import prepare_gecko_rubrics
from autorater_pipelines.components.gecko_score import score_gecko_validations
from autorater_pipelines.components.gecko_validate import validate_gecko_media
from autorater_pipelines.pipelines._placeholders import LOCATION_PLACEHOLDER, PROJECT_ID_PLACEHOLDER
from autorater_pipelines.pipelines._retry import retry_model_step


class PipelineOutput(NamedTuple):
    """Outputs of the gecko pipeline (described in its docstring)."""

    evaluation_count: int
    evaluation_results_path: str
    rubrics: Dataset
    validations: Dataset
    results: Dataset
    error_messages: Dataset
    gecko_metrics: Metrics


@dsl.pipeline(
    name="gecko-template",
    description="Rubric-based evaluation of generated images and videos (Gecko) with open rubric generator and validator models.",
)
def gecko_pipeline(  # noqa: B006
    evaluation_dataset: str,
    id_columns: list[str],
    media_column: str = "",
    prompt_column: str = "",
    media_type: str = "image",
    response_columns: dict[str, str] = {},
    response_model: str = "",
    response_model_parameters: dict[str, Any] = {},
    rubrics_column: str = "",
    rubric_group: str = "",
    rubric_generation_model: str = "gemini-2.5-flash",
    validator_model: str = "gemini-2.5-flash",
    rubric_generation_parameters: dict[str, Any] = {},
    validator_parameters: dict[str, Any] = {},
    rubric_generation_prompt_template: str = "",
    validator_prompt_template: str = "",
    scoring: dict[str, Any] = {},
    project: str = PROJECT_ID_PLACEHOLDER,
    location: str = LOCATION_PLACEHOLDER,
    output_format: str = "jsonl",
    bigquery_destination_prefix: str = "",
) -> PipelineOutput:
    """Evaluates generated images or videos against their prompts with question-answer rubrics.

    Args:
        evaluation_dataset: Comma-separated list of JSONL/JSON/CSV/Parquet files (local paths, gs:// objects with wildcards, bq://project.dataset.table) with one row per generated image or video.
        id_columns: The columns which distinguish unique evaluation rows (also the replay keys).
        media_column: Column with the image or video (or the response text, media_type `text`; empty with response_columns): a gs:// URI, an http(s) URL, a local path (relative to its dataset file), or the Vertex `{"contents":[{"parts":[{"file_data":...}]}]}` JSON string.
        prompt_column: Column with the text-to-image/video prompt; rubrics are generated from it when `rubrics_column` is empty.
        media_type: `image` (generated yes/no questions with a question type), `video` (generated multiple-choice questions a-d) or `text` (media_column holds the response text; generated pass/fail rubrics for the prompt).
        response_columns: `{candidate name: column}` (media_column empty) to compare candidates: each prompt's rubrics are made once and every candidate's column is validated against them; result and error rows name their `candidate`, metrics.json gives each candidate's metrics, `win_rates` and `per_rubric_comparison`.
        response_model: Model spec (as rubric_generation_model) generating each row's text response from prompt_column (media_type `text`) into media_column (default `response`, a column the dataset must not have), as AutoSxS's inference step; replay files are keyed by the id columns and `model` = "response"; empty = responses read from media_column.
        response_model_parameters: Settings of response_model, as AutoSxS's `model_a_parameters`: `temperature`, `max_output_tokens`, `top_p`, `seed`, `base_url`, `max_concurrency`, `requests_per_minute`, `max_retries`, `timeout_s`, `cache_dir`.
        rubrics_column: Column with supplied rubrics (`{"keywords": ..., "qas": [{"question_id", "question", "question_type", "choices", "answer", "dependencies"}]}` or a list of questions, or Vertex AI `rubric_groups` `{group: [{"rubric_id", "content": {"property": {"description"}}, "type", "importance"}]}`); when set, rubric generation is skipped.
        rubric_group: The group of a Vertex AI `rubric_groups` column to use (each `rubric_id` is a question id); empty = the only group.
        rubric_generation_model: Rubric generator model spec: a Gemini model on Vertex AI (`gemini-2.5-flash`, `publishers/google/models/...`, `projects/P/locations/L/endpoints/E`), `openai/<model>`, or `replay/<jsonl>` keyed by the id columns.
        validator_model: Multimodal validator model spec (as rubric_generation_model); replay files are keyed by the id columns (all questions in one call) or the id columns and `question_id` (one question per call).
        rubric_generation_parameters: Rubric generator settings: `temperature`, `max_output_tokens`, `base_url`, `max_concurrency`, `requests_per_minute`, `max_retries`, `timeout_s`, `cache_dir` (default on Vertex AI: `<pipeline root>/autorater-cache`), `strict` (fail the step when the model calls stop early; default false: rows not called are error rows with the reason).
        validator_parameters: Validator settings: `questions_per_call` (absent or 0 = all questions of a row in one call, 1 = one question per call), `sampling_count` (answers per question, voted), `logprobs`, `temperature`, `base_url`, `max_concurrency`, `requests_per_minute`, `max_retries`, `timeout_s`, `cache_dir`, `strict` (as for rubric generation), `media_probe` (`error` (default): before validating, check that the validator sees images, with a plain red and a plain blue square, and stop the run naming the model and endpoint if it does not; `warn`: score anyway, recorded in metrics.json and the report; `off`).
        rubric_generation_prompt_template: Override of the rubric generation prompt, in Jinja2 (variables `prompt`, `question_types`, `media_type`) or Vertex AI SDK syntax (`{prompt}` replaced, other braces literal); empty = built-in.
        validator_prompt_template: Override of the validator prompt, in Jinja2 (variables `media_type`, `rubrics`, `questions` or `question` with questions_per_call=1, `prompt`) or Vertex AI SDK syntax (`{rubrics}`, `{question}`, `{prompt}`; `{image}`/`{video}` place the media; other braces literal); empty = built-in. Replies as JSON answers or `<question>` / `Verdict:` blocks are read.
        scoring: Scoring options: `dependency_masking` (bool, a question scores 0 when a parent question is wrong, DSG), `logprob_weighting` (bool, score = probability of the expected answer; needs questions_per_call=1 and logprobs), `missing_answer_policy` (`error`, `zero` or `skip`), `unparseable_answer_policy` (`skip`: answers naming no choice are left out of final_score; `zero`: they score 0, the TIFA/DSG protocol).
        project: Google Cloud project of Vertex AI model calls (default: the pipeline job's project).
        location: Google Cloud region of Vertex AI model calls (default: the pipeline job's region).
        output_format: Format of the exported results: `jsonl`, `json` or `bigquery` (a new table in bigquery_destination_prefix's dataset).
        bigquery_destination_prefix: `project.dataset` or `project.dataset.table_prefix` for output_format `bigquery`: each run creates `[table_prefix_]results_<YYYYMMDD_HHMMSS>_<6 hex>`; the dataset must exist.

    Returns:
        evaluation_count: The number of dataset rows evaluated (scored or listed in error_messages).
        evaluation_results_path: The path to the exported results in output_format.
        rubrics: JSONL of rubric rows: dataset columns, `keywords`, `qas`, `rubric_warnings`.
        validations: JSONL of validation rows with every validator answer (re-scoring needs no model calls).
        results: JSONL of result rows: dataset columns (and `candidate` with response_columns), `keywords`, `qa_results`, `final_score`.
        error_messages: JSONL of rows that failed at any stage, with the stage and the reason.
        gecko_metrics: Mean final score, accuracy per question type, parse failures and row counts (metrics.json: also the rubric prompt version and, with response_columns, each candidate's metrics, win_rates and per_rubric_comparison).
    """
    check = check_gecko_run(
        evaluation_dataset=evaluation_dataset,
        id_columns=id_columns,
        prompt_column=prompt_column,
        media_column=media_column,
        media_type=media_type,
        response_columns=response_columns,
        response_model=response_model,
        response_model_parameters=response_model_parameters,
        rubrics_column=rubrics_column,
        rubric_group=rubric_group,
        rubric_generation_model=rubric_generation_model,
        rubric_generation_parameters=rubric_generation_parameters,
        rubric_generation_prompt_template=rubric_generation_prompt_template,
        validator_model=validator_model,
        validator_parameters=validator_parameters,
        validator_prompt_template=validator_prompt_template,
        scoring=scoring,
        output_format=output_format,
        bigquery_destination_prefix=bigquery_destination_prefix,
        project=project,
        location=location,
    ).set_display_name("Check parameters and dataset")
    rubrics = prepare_gecko_rubrics(
        rows=check.outputs["rows"],
        id_columns=id_columns,
        prompt_column=prompt_column,
        media_type=media_type,
        rubrics_column=rubrics_column,
        rubric_group=rubric_group,
        rubric_generation_model=rubric_generation_model,
        rubric_generation_parameters=rubric_generation_parameters,
        rubric_generation_prompt_template=rubric_generation_prompt_template,
        project=project,
        location=location,
        pipeline_root=dsl.PIPELINE_ROOT_PLACEHOLDER,
    ).set_display_name("Rubrics (parse or generate)")
    retry_model_step(rubrics)  # resumes from the cache
    validate = validate_gecko_media(
        rubrics=rubrics.outputs["rubrics"],
        id_columns=id_columns,
        media_column=media_column,
        media_type=media_type,
        validator_model=validator_model,
        validator_parameters=validator_parameters,
        validator_prompt_template=validator_prompt_template,
        project=project,
        location=location,
        prompt_column=prompt_column,
        pipeline_root=dsl.PIPELINE_ROOT_PLACEHOLDER,
        response_columns=response_columns,
        response_model=response_model,
        response_model_parameters=response_model_parameters,
    ).set_display_name("Validator answers")
    retry_model_step(validate)  # resumes from the cache
    score = score_gecko_validations(
        validations=validate.outputs["validations"],
        rubric_errors=rubrics.outputs["rubric_errors"],
        validation_errors=validate.outputs["validation_errors"],
        id_columns=id_columns,
        scoring=scoring,
        response_columns=response_columns,
        rubric_prompt_version=rubrics.outputs["rubric_prompt_version"],
    ).set_display_name("Gecko scores and metrics")
    build_gecko_report(
        results=score.outputs["results"],
        metrics_json=score.outputs["metrics_json"],
        error_messages=score.outputs["error_messages"],
        id_columns=id_columns,
        prompt_column=prompt_column,
        media_column=media_column,
    ).set_display_name("Gecko report")
    export = export_gecko_results(
        results=score.outputs["results"],
        output_format=output_format,
        bigquery_destination_prefix=bigquery_destination_prefix,
        project=project,
    ).set_display_name("Export results")
    return PipelineOutput(
        evaluation_count=score.outputs["evaluation_count"],
        evaluation_results_path=export.outputs["evaluation_results_path"],
        rubrics=rubrics.outputs["rubrics"],
        validations=validate.outputs["validations"],
        results=score.outputs["results"],
        error_messages=score.outputs["error_messages"],
        gecko_metrics=score.outputs["gecko_metrics"],
    )
