"""The ``autosxs`` pipeline: drop-in for GCPC's ``autosxs-template`` with an open autorater."""

from typing import Any, Dict, List, NamedTuple

from kfp import dsl
from kfp.dsl import Dataset, Metrics

from autorater_pipelines.components.autosxs_report import build_autosxs_report
from autorater_pipelines.components.export_judgments import export_pairwise_judgments
from autorater_pipelines.components.generate_responses import generate_pairwise_responses
from autorater_pipelines.components.model_evaluation_text_generation_pairwise import (
    model_evaluation_text_generation_pairwise,
)
from autorater_pipelines.components.online_evaluation_pairwise import online_evaluation_pairwise
from autorater_pipelines.components.prepare_pairwise import prepare_pairwise_examples
from autorater_pipelines.pipelines._pairwise import judge_in_shards
from autorater_pipelines.pipelines._placeholders import LOCATION_PLACEHOLDER, PROJECT_ID_PLACEHOLDER
from autorater_pipelines.pipelines._retry import retry_model_step


class PipelineOutput(NamedTuple):
    """Outputs of the autosxs pipeline (described in its docstring)."""

    model_a_evaluation_resource_name: str
    model_b_evaluation_resource_name: str
    evaluation_count: int
    evaluation_dataset_path: str
    judgments: Dataset
    error_messages: Dataset
    autosxs_metrics: Metrics


# Mutable defaults mirror GCPC's signature; KFP copies them into the compiled spec.
@dsl.pipeline(
    name="autosxs-template", description="Determines the SxS win rate between two models with an open autorater."
)
def autosxs_pipeline(  # noqa: B006
    evaluation_dataset: str,
    task: str,
    id_columns: List[str],
    autorater_prompt_parameters: Dict[str, Dict[str, str]],
    model_a: str = "",
    model_b: str = "",
    model_a_prompt_parameters: Dict[str, Dict[str, str]] = {},
    model_b_prompt_parameters: Dict[str, Dict[str, str]] = {},
    response_column_a: str = "",
    response_column_b: str = "",
    model_a_parameters: Dict[str, str] = {},
    model_b_parameters: Dict[str, str] = {},
    human_preference_column: str = "",
    project: str = PROJECT_ID_PLACEHOLDER,
    location: str = LOCATION_PLACEHOLDER,
    judgments_format: str = "jsonl",
    bigquery_destination_prefix: str = "",
    experimental_args: Dict[str, Any] = {},
    encryption_spec_key_name: str = "",
    autorater_model: str = "gemini-2.5-flash",
    autorater_parameters: Dict[str, Any] = {},
    autorater_panel: List[str] = [],
    panel_vote: str = "",
) -> PipelineOutput:
    """Evaluates two models side by side using an LLM autorater.

    Args:
        evaluation_dataset: Comma-separated list of JSONL/JSON/CSV/Parquet files (local paths or `gs://` URIs, wildcards allowed, e.g. `gs://bucket/data/*.jsonl`), or a BigQuery table `bq://project.dataset.table`, containing the evaluation examples.
        task: Evaluation task `{task}[@{version}]`: `summarization`, `question_answering` or `arena_hard` (Arena-Hard's verdict `[[A>B]]`; a strong verdict is a plain win here) with version `001` or `latest` (no version = latest), or `custom[@...]` with `experimental_args.custom_task_definition`.
        id_columns: The columns which distinguish unique evaluation examples.
        autorater_prompt_parameters: Map of autorater prompt parameters to columns or templates: `inference_instruction` (how to perform the task) and `inference_context` (content to reference), or a custom task's keys. Example: `{"inference_context": {"column": "my_prompt"}}` (a bare string `"my_prompt"` names a column too); templates are Jinja2, e.g. `{"template": "{{ default_instruction }} {{ document }}"}`.
        model_a: Model A spec whose responses are generated when `response_column_a` is empty or not a dataset column: a Gemini model (`gemini-2.5-flash`, `publishers/google/models/...`, `projects/P/locations/L/models/M[@version]` (Model Registry: also receives a ModelEvaluation), `projects/P/locations/L/endpoints/E`), `openai/<model>`, or `replay/<jsonl>`.
        model_b: Model B spec, as `model_a` (generated when `response_column_b` is empty or not a dataset column).
        model_a_prompt_parameters: Model A prompt when its responses are generated: `{"prompt": ...}` (text models) or `{"contents": ..., "system_instruction": ...}` (Gemini request body; `system_instruction` optional); each value a column (`"my_prompt"` or `{"column": "my_prompt"}`) or `{"template": "..."}` where `{{ default_instruction }}` is the task's default instruction.
        model_b_prompt_parameters: Model B prompt, as `model_a_prompt_parameters`.
        response_column_a: The dataset column with model A's pre-generated responses or, when the dataset has no such column and `model_a` is set, the field of model A's output holding its predictions (`content`, `predictions`, `response`, …: the generated text); empty = inferred (generated).
        response_column_b: As `response_column_a`, for model B.
        model_a_parameters: Parameters that govern model A's predictions: `temperature`, `max_output_tokens` (GCPC's `maxOutputTokens` is accepted too), `top_p` (or `topP`), `seed` (strings such as "0.2" accepted), and `base_url`, `max_concurrency`, `requests_per_minute`.
        model_b_parameters: Parameters that govern model B's predictions, as `model_a_parameters`.
        human_preference_column: Column with the human preference per example (A, B or TIE; `Model A`/`Model B` and `model_a`/`model_b` accepted, any case). Adds alignment metrics (accuracy, precision, recall, F1, Cohen's kappa).
        project: Google Cloud project of Vertex AI model calls (default: the pipeline job's project).
        location: Google Cloud region of Vertex AI model calls (default: the pipeline job's region).
        judgments_format: Format of the exported judgments: `jsonl`, `json`, or `bigquery` (a new table in `bigquery_destination_prefix`; `evaluation_dataset_path` is then `bq://project.dataset.table`).
        bigquery_destination_prefix: `project.dataset` or `project.dataset.table_prefix` for the `bigquery` format: each run creates table `[<table_prefix>_]judgments_<YYYYMMDD_HHMMSS>_<6 hex>` (UTC) in that existing dataset, never appending to or overwriting a table.
        experimental_args: Experimentally released arguments, e.g. `custom_task_definition`.
        encryption_spec_key_name: Customer-managed encryption key (accepted for compatibility; no Google Cloud resources are created yet).
        autorater_model: Autorater model spec: a Gemini model on Vertex AI (`gemini-2.5-flash`, `publishers/google/models/...`, `projects/P/locations/L/endpoints/E`), `openai/<model>` for OpenAI-compatible servers, or `replay/<jsonl>` for recorded outputs.
        autorater_parameters: Autorater settings: `sampling_count` (default 2), `flip` (true (default): both orders; false: model A first; "random": one order per row, exactly half the rows swapped, drawn from `seed`, with sampling_count 1), `flip_column` (a boolean column: true = model A shown second), `identical_responses` (`judge` (default) or `tie`: identical responses are a TIE without a call), `position_calibration` (`balanced`: pointwise scores averaged over both orders), `temperature`, `base_url`, `max_concurrency`, `requests_per_minute`, `max_retries`, `timeout_s`, `cache_dir`, `verdict_pattern` + `verdict_map` for free-text verdicts (`verdict_match`: `last` (default), `first` or `unique`), `retry_unparseable` (re-ask cached answers that could not be parsed; default on unless temperature is 0), `preference` (`discrete` (default) or `probability`: a weighted win rate from the verdict token's `logprobs`, AlpacaEval 2.0's), `shards` (parallel judging tasks, default 1).
        autorater_panel: A panel of judges instead of one autorater: two or more model specs (as `autorater_model`; Gemini, `openai/...` and `replay/...` may be mixed). Every juror judges every example alone with `autorater_parameters` (its own cache and quota); the panel votes over the jurors' row verdicts (`panel_vote`), a juror without a verdict in every scheduled order abstaining on that row. The metrics add each juror's own metrics (`jurors`) and the agreement between jurors (`juror_agreement`: Fleiss' kappa, pairwise agreement). Empty (default) = one judge, `autorater_model`, which must then be left at its default.
        panel_vote: How the panel votes on a row: `majority` (default; the verdict of a strict majority of the jurors that voted, else TIE; every juror abstained = ERROR) or `mean` (the mean of the voters' preferences for model A, A = 1, TIE = 0.5, B = 0: above 0.5 is A, below 0.5 is B, exactly 0.5 is TIE). Only with `autorater_panel`.

    Returns:
        model_a_evaluation_resource_name: Resource name of the ModelEvaluation (pairwise text-generation metrics) written to model A when it is a Model Registry model (`projects/P/locations/L/models/M[@version]`); empty otherwise or when the import failed (the reason is in the metrics step's `model_evaluations` and its log).
        model_b_evaluation_resource_name: As model_a_evaluation_resource_name, for model B.
        evaluation_count: The count of how many evaluations were included for this AutoSxS run.
        evaluation_dataset_path: The path to the overall evaluation dataset including judgments.
        judgments: JSONL of judgments, one per example.
        error_messages: JSONL of failed samples and rows with the reason.
        autosxs_metrics: Win rates, position consistency and alignment metrics.
    """
    prepare = prepare_pairwise_examples(
        evaluation_dataset=evaluation_dataset,
        task=task,
        id_columns=id_columns,
        autorater_prompt_parameters=autorater_prompt_parameters,
        response_column_a=response_column_a,
        response_column_b=response_column_b,
        human_preference_column=human_preference_column,
        model_a=model_a,
        model_b=model_b,
        model_a_prompt_parameters=model_a_prompt_parameters,
        model_b_prompt_parameters=model_b_prompt_parameters,
        model_a_parameters=model_a_parameters,
        model_b_parameters=model_b_parameters,
        autorater_model=autorater_model,
        autorater_parameters=autorater_parameters,
        autorater_panel=autorater_panel,
        panel_vote=panel_vote,
        judgments_format=judgments_format,
        bigquery_destination_prefix=bigquery_destination_prefix,
        experimental_args=experimental_args,
        project=project,
        location=location,
    ).set_display_name("Prepare examples")
    responses = generate_pairwise_responses(
        prepared_examples=prepare.outputs["prepared_examples"],
        id_columns=id_columns,
        model_a=model_a,
        model_b=model_b,
        model_a_parameters=model_a_parameters,
        model_b_parameters=model_b_parameters,
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
        id_columns=id_columns,
        autorater_model=autorater_model,
        autorater_parameters=autorater_parameters,
        autorater_panel=autorater_panel,
        panel_vote=panel_vote,
        project=project,
        location=location,
        experimental_args=experimental_args,
    ).set_display_name("Judge shards")
    # Task names and display names as GCPC's, so code that reads Google's results by task name finds ours.
    judge = online_evaluation_pairwise(
        examples=responses.outputs["examples_with_responses"],
        id_columns=id_columns,
        judgment_shards=shards.outputs["judgments"],
        error_shards=shards.outputs["error_messages"],
    ).set_display_name("AutoSxS Autorater")
    metrics = model_evaluation_text_generation_pairwise(
        judgments=judge.outputs["judgments"],
        human_preference_column=human_preference_column,
        model_a=model_a,
        model_b=model_b,
        task=task,
        evaluation_dataset=evaluation_dataset,
    ).set_display_name("AutoSxS Metrics")
    build_autosxs_report(
        judgments=judge.outputs["judgments"],
        metrics_json=metrics.outputs["metrics_json"],
        error_messages=judge.outputs["error_messages"],
    ).set_display_name("AutoSxS report")
    export = export_pairwise_judgments(
        judgments=judge.outputs["judgments"],
        judgments_format=judgments_format,
        bigquery_destination_prefix=bigquery_destination_prefix,
        project=project,
    ).set_display_name("Export judgments")
    return PipelineOutput(
        model_a_evaluation_resource_name=metrics.outputs["model_a_evaluation_path"],
        model_b_evaluation_resource_name=metrics.outputs["model_b_evaluation_path"],
        evaluation_count=metrics.outputs["evaluation_count"],
        evaluation_dataset_path=export.outputs["evaluation_dataset_path"],
        judgments=judge.outputs["judgments"],
        error_messages=judge.outputs["error_messages"],
        autosxs_metrics=metrics.outputs["autosxs_metrics"],
    )
