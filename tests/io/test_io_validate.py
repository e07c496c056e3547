import pytest

from autorater_pipelines.errors import InputError
from autorater_pipelines.io import Dataset, canonical_id_value, check_unique_ids, id_key, read_dataset, require_columns


def make(rows, source="d.jsonl"):
    return Dataset(rows=rows, locations=[(source, i + 1) for i in range(len(rows))], units={source: "line"}, uri=source)


def test_columns_are_union_in_first_seen_order():
    ds = make([{"a": 1, "b": 2}, {"c": 3, "a": 4}])
    assert ds.columns == ["a", "b", "c"]


def test_rows_and_locations_must_match():
    with pytest.raises(ValueError, match="2 rows but 1 locations"):
        Dataset(rows=[{}, {}], locations=[("x", 1)])


def test_require_columns_lists_existing_columns_and_suggests():
    ds = make([{"input": "q", "output_1": "x", "output_2": "y"}])
    require_columns(ds, {"response_column_a": "output_1", "human_preference_column": ""})
    with pytest.raises(
        InputError,
        match=r"^response_column_b: column 'output_3' is not in evaluation_dataset 'd\.jsonl'; "
        r"columns found: \['input', 'output_1', 'output_2'\]\. Did you mean 'output_2'\? "
        r"Set response_column_b to one",
    ):
        require_columns(ds, {"response_column_a": "output_1", "response_column_b": "output_3"})


def test_require_columns_rejects_non_string():
    with pytest.raises(InputError, match=r"response_column_a: expected a column name \(string\), got 3"):
        require_columns(make([{"a": 1}]), {"response_column_a": 3})


def test_unique_ids_returns_keys():
    ds = make([{"id": "1", "sub": 1}, {"id": "1", "sub": 2}])
    assert check_unique_ids(ds, ["id", "sub"]) == [("1", "1"), ("1", "2")]
    assert id_key({"id": "1", "sub": 2}, ["sub", "id"]) == ("2", "1")
    assert id_key({"id": "1"}, ["id", "sub"]) == ("1", None)
    assert repr(id_key({"id": 7, "sub": "x"}, ["id", "sub"])) == "(7, 'x')"  # messages quote ids as written


def test_duplicate_ids_name_both_rows():
    ds = make([{"id": "a"}, {"id": "b"}, {"id": "a"}])
    with pytest.raises(
        InputError,
        match=r"d\.jsonl, row 3: duplicate id \{'id': 'a'\}: d\.jsonl line 1 and d\.jsonl line 3 have the "
        r"same",
    ):
        check_unique_ids(ds, ["id"])


def test_duplicate_ids_across_files(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"id": 1}\n')
    (tmp_path / "b.jsonl").write_text('{"id": 2}\n{"id": 1}\n')
    ds = read_dataset(f"{tmp_path / 'a.jsonl'},{tmp_path / 'b.jsonl'}")
    with pytest.raises(InputError, match=r"a\.jsonl line 1 and .*b\.jsonl line 2"):
        check_unique_ids(ds, ["id"])


def test_csv_ids_stay_strings(tmp_path):
    (tmp_path / "d.csv").write_text("id,text\n007,a\n7,b\n")
    ds = read_dataset(str(tmp_path / "d.csv"))
    assert check_unique_ids(ds, ["id"]) == [("007",), ("7",)]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"x": 1}, r"d\.jsonl, row 2, column 'id': the id value is missing"),
        ({"id": None}, r"d\.jsonl, row 2, column 'id': the id value is null \(None\)"),
        ({"id": float("nan")}, r"column 'id': the id value is null \(nan\)"),
        ({"id": [1]}, r"column 'id': id values must be strings or numbers, got \[1\]"),
    ],
)
def test_bad_id_values(row, message):
    with pytest.raises(InputError, match=message):
        check_unique_ids(make([{"id": 1}, row]), ["id"])


@pytest.mark.parametrize(
    ("id_columns", "message"),
    [
        ("id", r"id_columns: expected a list of column names, got 'id'"),
        ([], r"id_columns: is empty"),
        (["id", ""], r"id_columns: expected non-empty column names, got ''"),
        (["idx"], r"id_columns\[0\]: column 'idx' is not in .*Did you mean 'id'"),
    ],
)
def test_bad_id_columns_parameter(id_columns, message):
    with pytest.raises(InputError, match=message):
        check_unique_ids(make([{"id": 1}]), id_columns)


@pytest.mark.parametrize(
    ("a", "b"),
    [(7, "7"), (7.0, "7"), (7.0, 7), (True, "true"), (False, "False"), (-3, -3.0), (1.5, "1.5")],
)
def test_id_key_is_canonical_text(a, b):
    assert id_key({"id": a}, ["id"]) == id_key({"id": b}, ["id"])
    assert isinstance(id_key({"id": a}, ["id"]), tuple)
    assert canonical_id_value(a) == canonical_id_value(b)


def test_id_key_keeps_distinct_ids_distinct():
    assert canonical_id_value(7.5) != canonical_id_value(7)
    assert canonical_id_value("007") != canonical_id_value(7)
    assert canonical_id_value("7 ") != canonical_id_value("7")
    assert canonical_id_value(1) != canonical_id_value(True)


def test_merge_shards_joins_judgments_whatever_the_id_type():
    from autorater_pipelines.autosxs import merge_shards

    examples = [{"id": 1}, {"id": "b"}]
    judgments, _ = merge_shards(examples, ["id"], [[{"id": "b", "c": 2}], [{"id": "1", "c": 1}]], [[], []])
    assert [j["c"] for j in judgments] == [1, 2]


@pytest.mark.parametrize(("first", "second"), [(7, "7"), (7.0, 7), (True, "true")])
def test_duplicate_ids_across_types_name_both_rows(first, second):
    ds = make([{"id": first}, {"id": "x"}, {"id": second}])
    message = (
        rf"d\.jsonl, row 3: duplicate id \{{'id': {first!r}\}} and \{{'id': {second!r}\}} \(ids are compared as "
        r"text.*\): d\.jsonl line 1 and d\.jsonl line 3 have the same"
    )
    with pytest.raises(InputError, match=message):
        check_unique_ids(ds, ["id"])


def test_int_jsonl_id_and_string_csv_id_are_duplicates(tmp_path):
    (tmp_path / "n.jsonl").write_text('{"id": 1, "t": "a"}\n{"id": 2, "t": "b"}\n')
    (tmp_path / "n.csv").write_text("id,t\n1,a again\n")
    ds = read_dataset(f"{tmp_path / 'n.jsonl'},{tmp_path / 'n.csv'}")
    with pytest.raises(InputError, match=r"n\.csv, row 2: duplicate id .*n\.jsonl line 1 and .*n\.csv line 2"):
        check_unique_ids(ds, ["id"])


def test_require_columns_of_data_without_rows_says_so():
    """Hostile trial (issue 25): an empty frame said "columns found: []", as if the column were misspelt."""
    with pytest.raises(
        InputError,
        match=r"^response_column_a: column 'a' cannot be checked: the DataFrame has no rows, so no columns; pass data",
    ):
        require_columns(Dataset([], [], source_name="the DataFrame"), {"response_column_a": "a"})
