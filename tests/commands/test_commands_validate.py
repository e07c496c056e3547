"""Parameter type checks against a template's declared types (commands/_validate.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from autorater_pipelines.commands._validate import check_param_types, parameter_type, type_problem
from autorater_pipelines.errors import InputError
from autorater_pipelines.pipelines._local import template_inputs

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "ir_type, good, bad",
    [
        ("STRING", ["", "gs://b/d.jsonl"], [1, True, ["a"], {"a": 1}]),
        ("NUMBER_INTEGER", [0, 3, -1], [True, False, 2.5, 3.0, "3"]),
        ("NUMBER_DOUBLE", [0, 0.5, 3], [True, "0.5"]),
        ("BOOLEAN", [True, False], [0, 1, "true", "false"]),
        ("LIST", [[], ["id"]], ["id", '["id"]', {"a": 1}]),
        ("STRUCT", [{}, {"a": {"b": 1}}], ['{"a": 1}', ["a"], 1]),
    ],
)
def test_each_ir_type_accepts_its_json_type_only(ir_type, good, bad):
    for value in good:
        assert type_problem("p", value, ir_type) is None, value
    for value in bad:
        assert type_problem("p", value, ir_type) is not None, value


@pytest.mark.parametrize(
    "kfp_type, ir_type",
    [
        ("String", "STRING"),
        ("Integer", "NUMBER_INTEGER"),
        ("Float", "NUMBER_DOUBLE"),
        ("Boolean", "BOOLEAN"),
        ("List", "LIST"),
        ("Dict", "STRUCT"),
        ("STRUCT", "STRUCT"),
        ("system.Dataset@0.0.1", None),
    ],
)
def test_kfp_type_names_map_to_ir_names(kfp_type, ir_type):
    assert parameter_type(kfp_type) == ir_type


def test_message_names_parameter_expected_type_and_value_received():
    message = type_problem("id_columns", "question_id", "LIST")
    assert message == (
        "parameter 'id_columns' expects LIST (a JSON array), received a string: 'question_id' "
        '(a single column is still a list: ["question_id"])'
    )
    assert type_problem("n", True, "NUMBER_INTEGER") == (
        "parameter 'n' expects NUMBER_INTEGER (a JSON integer), received a boolean: True"
    )
    assert type_problem("n", 3.0, "NUMBER_INTEGER").endswith("received a number: 3.0 (write 3)")
    assert "it holds JSON text" in type_problem("d", '{"a": 1}', "STRUCT")
    assert "received null; omit it" in type_problem("x", None, type("Spec", (), {"type": "String", "optional": True}))


def test_long_values_are_shortened():
    message = type_problem("d", "x" * 500, "STRUCT")
    assert len(message) < 200 and message.endswith("...")


def test_artifact_inputs_cannot_take_values():
    assert "input artifact (system.Dataset@0.0.1)" in type_problem("data", "gs://x", "system.Dataset@0.0.1")


def test_check_against_the_compiled_autosxs_template_lists_every_problem():
    inputs = template_inputs(str(REPO / "compiled" / "autosxs.yaml"))
    params = {"id_columns": "id", "task": 1, "autorater_parameters": {"flip": True}, "not_in_template": 1}
    with pytest.raises(InputError) as info:
        check_param_types(params, inputs, source="params.json")
    message = str(info.value)
    assert message.startswith("params.json: ")
    assert re.search(r"'id_columns' expects LIST .* received a string: 'id'", message)
    assert "'task' expects STRING (a JSON string), received an integer: 1" in message
    assert "autorater_parameters" not in message and "not_in_template" not in message
