"""Component: generate the responses of the arena's ``models`` that the dataset does not hold."""

from typing import NamedTuple

from kfp import dsl
from kfp.dsl import Dataset, Input, Output

from autorater_pipelines.components import IMAGE


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def generate_arena_responses(
    prepared_examples: Input[Dataset],
    id_columns: list,
    models: dict,
    project: str,
    location: str,
    pipeline_root: str,
    examples_with_responses: Output[Dataset],
) -> NamedTuple("Outputs", generated_count=int, failed_count=int):
    """Generates each model of `models` once per prompt and fills its responses into the pair examples.

    Passes the examples through unchanged when `models` is empty (every response came from `response_columns`).

    Args:
        prepared_examples: JSONL pair examples of the prepare step; a generated model's side carries `model_a_prompt` / `model_b_prompt`.
        id_columns: Columns whose values identify each prompt (the replay key of a generation, with `model` = the model's name).
        models: Model name → `{"model": spec, "prompt_parameters": {...}, "parameters": {...}}`, as the pipeline's `models` (online, or Vertex AI batch prediction with `parameters.mode: batch`).
        project: Google Cloud project for Vertex AI models.
        location: Google Cloud region for Vertex AI models.
        pipeline_root: The pipeline root; on Cloud Storage the response cache defaults to `<pipeline_root>/autorater-cache`, so a retried task or a re-run repeats no finished call.

    Returns:
        examples_with_responses: JSONL pair examples with `response_a` and `response_b` filled; a failed generation keeps None and carries `inference_error_a` / `inference_error_b` (the pair is not judged: an ERROR judgment with the reason in error_messages).
        generated_count: Number of responses requested from models (models × prompts).
        failed_count: Number of responses whose generation failed.
    """
    from autorater_pipelines import models as model_calls
    from autorater_pipelines.arena import steps

    model_calls.use_pipeline_root_cache(pipeline_root)
    counts = steps.generate_run(
        prepared_examples.path,
        models,
        id_columns,
        examples_with_responses.path,
        project=project,
        location=location,
    )
    return (counts["generated_count"], counts["failed_count"])
