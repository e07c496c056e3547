"""Component: generate model A / model B responses that the dataset does not hold."""

from typing import NamedTuple

from kfp import dsl
from kfp.dsl import Dataset, Input, Output

from autorater_pipelines.components import IMAGE


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def generate_pairwise_responses(
    prepared_examples: Input[Dataset],
    id_columns: list,
    model_a: str,
    model_b: str,
    model_a_parameters: dict,
    model_b_parameters: dict,
    project: str,
    location: str,
    pipeline_root: str,
    examples_with_responses: Output[Dataset],
) -> NamedTuple("Outputs", generated_count=int, failed_count=int):
    """Generates the responses of model A and/or model B when the dataset has no response column for them.

    Passes the examples through unchanged when both response columns were given.

    Args:
        prepared_examples: JSONL of prepared examples; those with `model_a_prompt` / `model_b_prompt` need generation.
        id_columns: Columns whose values identify each example.
        model_a: Model A spec: a Gemini model (`gemini-2.5-flash`, `publishers/google/models/...`, `projects/P/locations/L/endpoints/E`), `openai/<model>`, or `replay/<jsonl>` (keyed by id columns and `model` = "a").
        model_b: Model B spec, as model_a (replay key `model` = "b").
        model_a_parameters: Generation settings for model A: `temperature`, `max_output_tokens` (or GCPC's `maxOutputTokens`), `top_p` (or `topP`), `seed`, and `base_url`, `max_concurrency`, `requests_per_minute`, `max_retries`, `timeout_s`, `cache_dir`. String values such as "0.2" are accepted.
        model_b_parameters: Generation settings for model B, as model_a_parameters.
        project: Google Cloud project for Vertex AI models.
        location: Google Cloud region for Vertex AI models.
        pipeline_root: The pipeline root; on Cloud Storage the response cache defaults to `<pipeline_root>/autorater-cache`, so a retried task or a re-run repeats no finished call.

    Returns:
        examples_with_responses: JSONL of the examples with `response_a` and `response_b` filled; failed generations keep None and carry `inference_error_a` / `inference_error_b`.
        generated_count: Number of responses requested from models.
        failed_count: Number of responses whose generation failed (they become ERROR judgments).
    """
    from autorater_pipelines import io, models
    from autorater_pipelines.autosxs import inference

    models.use_pipeline_root_cache(pipeline_root)
    examples = io.read_jsonl(prepared_examples.path)
    counts = inference.fill_missing_responses(
        examples,
        id_columns=id_columns,
        models={"a": model_a, "b": model_b},
        parameters={"a": model_a_parameters, "b": model_b_parameters},
        project=project,
        location=location,
    )
    io.write_jsonl(examples_with_responses.path, examples)
    return (counts["generated_count"], counts["failed_count"])
