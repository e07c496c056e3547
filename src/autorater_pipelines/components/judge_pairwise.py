"""Component: judge prepared examples side by side with the autorater."""

from typing import NamedTuple

from kfp import dsl
from kfp.dsl import Dataset, Input, Output

from autorater_pipelines.components import IMAGE


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def judge_pairwise_examples(
    prepared_examples: Input[Dataset],
    task: str,
    id_columns: list,
    autorater_model: str,
    autorater_parameters: dict,
    project: str,
    location: str,
    experimental_args: dict,
    shard_index: int,
    shard_count: int,
    pipeline_root: str,
    judgments: Output[Dataset],
    error_messages: Output[Dataset],
    autorater_panel: list = [],  # noqa: B006 (KFP copies the default into the spec)
    panel_vote: str = "",
) -> NamedTuple("Outputs", evaluation_count=int, error_count=int):
    """Judges one shard of the examples with the autorater, in both presentation orders, and votes over samples.

    Args:
        prepared_examples: JSONL of prepared examples from the prepare step.
        task: Evaluation task `{task}@{version}`.
        id_columns: Columns whose values identify each example.
        autorater_model: Autorater model spec: a Gemini model (`gemini-2.5-flash`, `publishers/google/models/...`, `projects/.../endpoints/...`), `openai/<model>`, or `replay/<jsonl path>`; empty = the default Gemini Flash model.
        autorater_parameters: `sampling_count` (default 2), `flip` (default true; false; "random"), `flip_column`, `identical_responses`, `position_calibration`, `temperature`, `base_url`, `max_concurrency`, `requests_per_minute`, `max_retries`, `timeout_s`, `cache_dir`, `verdict_pattern` + `verdict_map` + `verdict_match`, `retry_unparseable`, `preference` (AutoSxS: `discrete` (default) or `probability`: each row's preference for model A from the verdict token's logprobs, needs `logprobs`), `strict` (fail the step when the model calls stop early; default false: the judgments so far are written and the rest are ERROR rows with the reason).
        project: Google Cloud project for Vertex AI models.
        location: Google Cloud region for Vertex AI models.
        experimental_args: Experimental arguments, e.g. `custom_task_definition`.
        shard_index: Which shard of the examples this task judges (0-based): every `shard_count`-th example from `shard_index`.
        shard_count: Number of shards the examples are split into. The shards share their pace through small files next to `prepared_examples` (`<uri>.pace/shard-<i>.json`): a declared `requests_per_minute` is divided among the shards running at the time (a shard that finishes hands its share over), and without one the shards find the quota together.
        pipeline_root: The pipeline root; on Cloud Storage the response cache defaults to `<pipeline_root>/autorater-cache`, so a retried task or a re-run repeats no finished call.
        autorater_panel: Jurors' model specs (two or more): each judges every example alone, with `autorater_parameters`, its own cache and quota, and the panel votes over their row verdicts; empty = judge with `autorater_model`.
        panel_vote: How the panel votes: `majority` (default; the verdict of a strict majority of the jurors that voted, else TIE) or `mean` (the mean preference for model A, A = 1, TIE = 0.5, B = 0: above 0.5 is A, below is B, 0.5 is TIE).

    Returns:
        error_messages: JSONL of failed samples and rows: ids, `stage`, `sample_index`, `error`, `row_judged`.
        judgments: JSONL, one judgment per example of the shard: ids, prompt parameters, `response_a`, `response_b`, `choice` (A, B, TIE or ERROR), `confidence`, `explanation`, `samples`, token counts; with a panel also `jurors` (each juror's verdict), `panel_vote` and `panel_preference_a`, and each sample names its `juror`.
        evaluation_count: Number of judgments written by this shard.
        error_count: Number of this shard's judgments whose choice is ERROR.
    """
    from autorater_pipelines import autosxs, io, models

    models.use_pipeline_root_cache(pipeline_root)
    _, _, summary = autosxs.judge_examples(
        examples=autosxs.iter_shard(io.JsonlFile(prepared_examples.path), shard_index, shard_count),  # streamed
        task=task,
        id_columns=id_columns,
        autorater_model=autorater_model,
        autorater_parameters=autorater_parameters,
        project=project,
        location=location,
        experimental_args=experimental_args,
        judgments_path=judgments.path,
        error_messages_path=error_messages.path,
        shard_count=shard_count,
        shard_index=shard_index,
        pace_dir=f"{prepared_examples.uri}.pace" if shard_count > 1 else None,  # the shards' shared pace
        autorater_panel=autorater_panel,
        panel_vote=panel_vote,
        collect=False,  # rows are written as they finish: memory bounded by the calls in flight
    )
    return (summary.evaluation_count, summary.error_count)
