import pytest

from autorater_pipelines import autosxs
from autorater_pipelines.errors import AutoraterError, InputError

EXAMPLES = [{"id": i} for i in range(7)]


def test_shards_partition_the_examples_and_merge_restores_the_order():
    shards = [autosxs.select_shard(EXAMPLES, i, 3) for i in range(3)]
    assert sorted(e["id"] for s in shards for e in s) == list(range(7))
    judgments = [[{**e, "choice": "A"} for e in s] for s in reversed(shards)]  # any collection order
    errors = [[{"id": 5, "sample_index": 1}, {"id": 5, "sample_index": 0}], [{"id": 2, "sample_index": 0}]]
    merged, merged_errors = autosxs.merge_shards(EXAMPLES, ["id"], judgments, errors)
    assert [j["id"] for j in merged] == list(range(7))
    assert [(e["id"], e["sample_index"]) for e in merged_errors] == [(2, 0), (5, 0), (5, 1)]


def test_merge_refuses_lost_or_doubled_rows():
    shards = [autosxs.select_shard(EXAMPLES, i, 2) for i in range(2)]
    with pytest.raises(AutoraterError, match=r"merging shards: 3 examples have no judgment"):
        autosxs.merge_shards(EXAMPLES, ["id"], [shards[0]], [])
    with pytest.raises(AutoraterError, match=r"judgment \(0,\) is duplicated"):
        autosxs.merge_shards(EXAMPLES, ["id"], [shards[0], shards[0]], [])


@pytest.mark.parametrize("value", [0, -1, 2.5, "x", True, 1001])
def test_bad_shard_counts(value):
    with pytest.raises(InputError, match=r"shards must be an integer from 1 to 1000"):
        autosxs.shard_count({"shards": value})


def test_shard_count_accepts_kfp_floats_and_is_not_a_model_parameter():
    assert autosxs.shard_count({"shards": 4.0}) == 4
    assert autosxs.shard_count({"shards": "4"}) == 4  # numbers as strings, as every numeric parameter
    _, model_params = autosxs.split_autorater_parameters({"shards": 4, "temperature": 0.0})
    assert model_params == {"temperature": 0.0}
