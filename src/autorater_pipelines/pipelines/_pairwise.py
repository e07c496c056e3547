"""What the pairwise pipelines (``autosxs``, ``arena``) share: the judging shards, a nested pipeline."""

from typing import Any, Dict, List, NamedTuple

from kfp import dsl
from kfp.dsl import Dataset, Input

from autorater_pipelines.components.judge_pairwise import judge_pairwise_examples
from autorater_pipelines.pipelines._retry import retry_model_step

__all__ = ["ShardOutputs", "judge_in_shards"]


class ShardOutputs(NamedTuple):
    """Collected outputs of the judging shards."""

    judgments: List[Dataset]
    error_messages: List[Dataset]


# Shards run as a nested pipeline: its ParallelFor iterates over a pipeline input. (The KFP local runner
# cannot iterate over a task output directly, and mis-resolves task outputs used inside the loop.)
@dsl.pipeline(name="judge-in-shards", description="Judges the examples in parallel shards.")
def judge_in_shards(
    examples: Input[Dataset],
    shard_indices: List[int],
    shard_count: int,
    task: str,
    id_columns: List[str],
    autorater_model: str,
    autorater_parameters: Dict[str, Any],
    project: str,
    location: str,
    experimental_args: Dict[str, Any],
    autorater_panel: List[str] = [],  # noqa: B006 (KFP copies the default into the spec)
    panel_vote: str = "",
) -> ShardOutputs:
    """Judges every shard of the examples with the autorater; one task per shard.

    Args:
        examples: JSONL of examples with both responses.
        shard_indices: `[0, ..., shard_count - 1]`.
        shard_count: Number of shards.
        task: Evaluation task `{task}@{version}`.
        id_columns: Columns whose values identify each example.
        autorater_model: Autorater model spec.
        autorater_parameters: Autorater settings.
        project: Google Cloud project for Vertex AI models.
        location: Google Cloud region for Vertex AI models.
        experimental_args: Experimental arguments.
        autorater_panel: Jurors' model specs judging instead of `autorater_model` (empty = one judge).
        panel_vote: How the panel votes: `majority` (default) or `mean`.

    Returns:
        judgments: JSONL judgments of each shard.
        error_messages: JSONL error messages of each shard.
    """
    with dsl.ParallelFor(items=shard_indices, name="judging-shards") as shard_index:
        judge = judge_pairwise_examples(
            prepared_examples=examples,
            task=task,
            id_columns=id_columns,
            autorater_model=autorater_model,
            autorater_parameters=autorater_parameters,
            project=project,
            location=location,
            experimental_args=experimental_args,
            autorater_panel=autorater_panel,
            panel_vote=panel_vote,
            shard_index=shard_index,
            shard_count=shard_count,
            pipeline_root=dsl.PIPELINE_ROOT_PLACEHOLDER,
        ).set_display_name("Judge shard")
        retry_model_step(judge)  # resumes from the cache
    return ShardOutputs(
        judgments=dsl.Collected(judge.outputs["judgments"]),
        error_messages=dsl.Collected(judge.outputs["error_messages"]),
    )
