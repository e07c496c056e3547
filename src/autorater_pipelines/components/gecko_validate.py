"""Component: the validator answers every rubric question looking at the row's image or video."""

from typing import NamedTuple

from kfp import dsl
from kfp.dsl import Dataset, Input, Output

from autorater_pipelines.components import IMAGE


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def validate_gecko_media(
    rubrics: Input[Dataset],
    id_columns: list,
    media_column: str,
    media_type: str,
    validator_model: str,
    validator_parameters: dict,
    validator_prompt_template: str,
    project: str,
    location: str,
    prompt_column: str,
    pipeline_root: str,
    response_columns: dict,
    response_model: str,
    response_model_parameters: dict,
    validations: Output[Dataset],
    validation_errors: Output[Dataset],
) -> NamedTuple("Outputs", validated_count=int):
    """Asks the multimodal validator every rubric question about each row's media and keeps every answer.

    Args:
        rubrics: JSONL of rubric rows from the rubric step.
        id_columns: Columns whose values identify each row (and key replay recordings).
        media_column: Column with the image/video: gs:// URI, http(s) URL, local path, or Vertex `contents` JSON.
        media_type: `image` or `video`; every media file must be of this kind.
        validator_model: Validator model spec: a Gemini model (`gemini-2.5-flash`, `publishers/google/models/...`, `projects/.../endpoints/...`), `openai/<model>`, or `replay/<jsonl path>`; empty = the default Gemini Flash model.
        validator_parameters: `questions_per_call` (0 = all questions of a row in one call, 1 = one per call), `sampling_count`, `logprobs`, `temperature`, `base_url`, `max_concurrency`, `requests_per_minute`, `max_retries`, `timeout_s`, `cache_dir`, `strict` (fail the step when the model calls stop early, after writing every row; default false: rows not called are error rows with the reason), `media_probe` (`error` (default): first check that the validator sees images (a plain red and a plain blue square) and stop the run with one error naming the model and endpoint if it does not; `warn`: score anyway, the failure recorded in metrics.json and the report; `off`).
        validator_prompt_template: Override of the validator prompt in Jinja2 (variables `media_type`, `rubrics`, `questions`, or `question` with questions_per_call=1, and `prompt`) or Vertex AI SDK syntax (`{rubrics}`, `{question}`, `{prompt}`, `{image}`/`{video}` where the media part goes; other braces literal); empty = built-in (JSON answers). Replies in JSON or as `<question>` / `Verdict:` blocks are read.
        project: Google Cloud project for Vertex AI models.
        location: Google Cloud region for Vertex AI models.
        prompt_column: Column with the generation prompt, shown to the validator by templates that use `prompt` (empty: none).
        pipeline_root: The pipeline root; on Cloud Storage the response cache defaults to `<pipeline_root>/autorater-cache`, so a retried task or a re-run repeats no finished call.
        response_columns: `{candidate name: column}` to compare several candidates' responses on the same rubrics of each prompt (rubrics made once per prompt); each candidate's column is validated (rows carry `candidate`, also a replay key); empty = `media_column`.
        response_model: Model spec generating each row's text response from `prompt_column` into `media_column` (AutoSxS's inference step; replay key: id columns and `model` = "response"); empty = responses read from the data.
        response_model_parameters: Settings of response_model, as AutoSxS's `model_a_parameters` (`temperature`, `max_output_tokens`, `base_url`, `max_concurrency`, `cache_dir` …).

    Returns:
        validations: JSONL of validation rows: rubric row plus `answers` (every validator sample per question_id: verdict, raw, error, choice_probs), `raw_responses`, `validator`; enough to re-score without model calls.
        validation_errors: JSONL of rows whose media cannot be used (missing, unreadable, unknown or wrong media type) or whose response could not be generated (stage `inference`): ids, `stage`, `error_kind`, `error_message`.
        validated_count: Number of rows sent to the validator.
    """
    from autorater_pipelines.gecko import steps as gecko_steps

    count = gecko_steps.validate_media(
        rubrics_path=rubrics.path,
        id_columns=id_columns,
        media_column=media_column,
        media_type=media_type,
        validator_model=validator_model,
        validator_parameters=validator_parameters,
        validator_prompt_template=validator_prompt_template,
        project=project,
        location=location,
        prompt_column=prompt_column,
        validations_path=validations.path,
        errors_path=validation_errors.path,
        pipeline_root=pipeline_root,
        response_columns=response_columns,
        response_model=response_model,
        response_model_parameters=response_model_parameters,
    )
    return (count,)
