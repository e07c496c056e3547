import json

import pytest

from autorater_pipelines import gecko
from autorater_pipelines.errors import InputError


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_relative_media_paths_resolve_against_the_dataset_file(tmp_path, media_file):
    media_file("png", name="cat.png")
    (tmp_path / "data").mkdir()
    uri = write(
        tmp_path / "data" / "d.jsonl",
        [
            {"id": 1, "prompt": "a cat", "img": "../cat.png"},
            {"id": 2, "prompt": "a dog", "img": "gs://b/dog.png"},
            {"id": 3, "prompt": "a cow", "img": '{"contents": []}'},
        ],
    )
    rows = gecko.load_dataset(uri, id_columns=["id"], media_column="img", prompt_column="prompt")
    assert rows[0]["img"] == str((tmp_path / "cat.png").resolve())
    assert rows[1]["img"] == "gs://b/dog.png" and rows[2]["img"] == '{"contents": []}'
    (part,) = gecko.resolve_media(rows[0]["img"], media_type="image")
    assert part.mime_type == "image/png"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"media_column": "img", "prompt_column": "text"}, "column 'text' is not in"),
        ({"media_column": "image", "prompt_column": "prompt"}, "column 'image' is not in"),
        ({"media_column": "img"}, "prompt_column is required when rubrics_column is not set"),
        ({"media_column": "", "prompt_column": "prompt"}, "media_column is required"),
        ({"media_column": "img", "rubrics_column": "rubric"}, "column 'rubric' is not in"),
    ],
)
def test_missing_columns_are_clear_errors(tmp_path, kwargs, message):
    uri = write(tmp_path / "d.jsonl", [{"id": 1, "prompt": "p", "img": "gs://b/x.png"}])
    with pytest.raises(InputError, match=message):
        gecko.load_dataset(uri, id_columns=["id"], **kwargs)


def test_duplicate_ids(tmp_path):
    uri = write(tmp_path / "d.jsonl", [{"id": 1, "prompt": "p", "img": "x.png"}] * 2)
    with pytest.raises(InputError, match="duplicate id"):
        gecko.load_dataset(uri, id_columns=["id"], media_column="img", prompt_column="prompt")


def test_supplied_rubrics_skip_the_prompt_column(tmp_path):
    uri = write(tmp_path / "d.jsonl", [{"id": 1, "img": "gs://b/x.png", "rubric": "[]"}])
    rows = gecko.load_dataset(uri, id_columns=["id"], media_column="img", rubrics_column="rubric")
    result = gecko.parse_supplied_rubrics(rows, id_columns=["id"], rubrics_column="rubric")
    assert result.rows == [] and result.errors[0]["error_kind"] == "empty_rubric"
