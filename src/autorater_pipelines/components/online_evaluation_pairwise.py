"""Component ``online-evaluation-pairwise`` ("AutoSxS Autorater"): the judgments of every shard, merged.

Named as GCPC's autorater task, so code that reads Google's results by task name (``online-evaluation-pairwise``
→ ``judgments``, ``error_messages``) finds ours. The judging itself runs in the shards before it.
"""

from typing import NamedTuple

from kfp import dsl
from kfp.dsl import Dataset, Input, Output

from autorater_pipelines.components import IMAGE


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def online_evaluation_pairwise(
    examples: Input[Dataset],
    id_columns: list,
    judgment_shards: Input[list[Dataset]],
    error_shards: Input[list[Dataset]],
    judgments: Output[Dataset],
    error_messages: Output[Dataset],
) -> NamedTuple("Outputs", judgments_uri=str, evaluation_count=int, error_count=int):
    """Merges the judgments and error messages of every judging shard into one JSONL file each, in dataset order.

    Fails if any example has no judgment or more than one, so no row is lost or doubled.

    Args:
        examples: JSONL of the examples that were judged (defines the order).
        id_columns: Columns whose values identify each example.
        judgment_shards: JSONL judgments of each shard.
        error_shards: JSONL error messages of each shard.

    Returns:
        judgments: One JSONL file, one judgment per example, in dataset order: ids, prompt parameters, `response_a`, `response_b`, `choice` (A, B, TIE or ERROR), `confidence`, `explanation`, `samples`, token counts (read it with `pandas.read_json(uri, lines=True)`).
        error_messages: One JSONL file of failed samples and rows in dataset order: ids, `stage`, `sample_index`, `error`, `row_judged`.
        judgments_uri: URI of the judgments file.
        evaluation_count: Number of judgments.
        error_count: Number of judgments whose choice is ERROR.
    """
    from autorater_pipelines.autosxs.merge import merge_shard_files

    count, error_count = merge_shard_files(  # streamed, file to file
        examples.path,
        id_columns,
        [s.path for s in judgment_shards],
        [s.path for s in error_shards],
        judgments.path,
        error_messages.path,
    )
    return (judgments.uri, count, error_count)
