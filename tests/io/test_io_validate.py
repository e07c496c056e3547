import pytest

from autorater_pipelines.errors import InputError
from autorater_pipelines.io import Dataset, check_unique_ids, id_key, read_dataset, require_columns


def make(rows, source="d.jsonl"):
    return Dataset(rows=rows, locations=[(source, i + 1) for i in range(len(rows))], units={source: "line"},
                   uri=source)


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
    assert check_unique_ids(ds, ["id", "sub"]) == [("1", 1), ("1", 2)]
    assert id_key({"id": "1", "sub": 2}, ["sub", "id"]) == (2, "1")


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
