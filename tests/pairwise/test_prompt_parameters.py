import pytest

from autorater_pipelines.errors import InputError
from autorater_pipelines.pairwise.prompt_parameters import compile_prompt_parameters, format_value

COLUMNS = ["id", "question", "document", "tags", "meta", "count"]
EXTRA = {"default_instruction": "Summarize the following text."}


def compile_(params, columns=COLUMNS, extra=EXTRA):
    return compile_prompt_parameters(
        params, available_columns=columns, source_name="autorater_prompt_parameters", extra_variables=extra
    )


def test_column_template_and_default_instruction():
    pp = compile_(
        {
            "inference_instruction": {"template": "{{ default_instruction }} Focus on: {{ question }}"},
            "inference_context": {"column": "document"},
        }
    )
    assert pp.names == ["inference_instruction", "inference_context"]
    assert pp.columns == {"question", "document"}
    assert len(pp) == 2
    row = {"id": 1, "question": "costs", "document": "Doc text."}
    assert pp.render(row, location="d.jsonl line 1") == {
        "inference_instruction": "Summarize the following text. Focus on: costs",
        "inference_context": "Doc text.",
    }


def test_none_and_empty_params():
    assert compile_(None).render({}, location="x") == {}
    assert compile_({}).names == []


def test_non_string_values():
    pp = compile_(
        {
            "t": {"column": "tags"},
            "m": {"column": "meta"},
            "c": {"column": "count"},
            "tmpl": {"template": "{{ tags }} | {{ meta }} | {{ tags[0] }} | {{ tags | length }} | {{ count }}"},
        }
    )
    row = {"tags": ["a", "é"], "meta": {"k": True}, "count": 3}
    assert pp.render(row, location="x") == {
        "t": '["a", "é"]',
        "m": '{"k": true}',
        "c": "3",
        "tmpl": '["a", "é"] | {"k": true} | a | 2 | 3',
    }
    assert format_value(1.5) == "1.5" and format_value(False) == "False"


def test_value_with_template_syntax_is_rendered_literally():
    pp = compile_({"c": {"column": "question"}, "t": {"template": "Q: {{ question }}"}})
    row = {"question": "{{ 7*7 }} {% for x in range(3) %}{{ ''.__class__ }}{% endfor %}"}
    out = pp.render(row, location="x")
    assert out["c"] == row["question"]
    assert out["t"] == "Q: " + row["question"]
    assert "49" not in out["t"]


def test_template_expressions_work():
    pp = compile_({"t": {"template": "{{ 7*7 }} {{ question | upper }}{% if document %} + doc{% endif %}"}})
    assert pp.render({"question": "q", "document": "d"}, location="x") == {"t": "49 Q + doc"}


def test_column_wins_over_extra_variable():
    pp = compile_({"t": {"template": "{{ default_instruction }}"}}, columns=[*COLUMNS, "default_instruction"])
    assert pp.render({"default_instruction": "from row"}, location="x") == {"t": "from row"}
    assert pp.render({}, location="x") == {"t": EXTRA["default_instruction"]}


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ("nope", r"^autorater_prompt_parameters: expected a mapping of parameter name to"),
        (
            {"p": 3},
            r"^autorater_prompt_parameters\.p: expected \{\"column\": \"my_column\"\}, .* or \"my_column\", got 3",
        ),
        ({"p": ""}, r"^autorater_prompt_parameters\.p: 'column' must be a non-empty string, got ''"),
        (
            {"p": {"colum": "question"}},
            r"^autorater_prompt_parameters\.p: unknown key\(s\) \['colum'\] in .*valid keys are 'column' and "
            r"'template'",
        ),
        ({"p": {"column": "question", "template": "x"}}, r"expected exactly one of 'column' or 'template'"),
        ({"p": {}}, r"expected exactly one of 'column' or 'template', got \{\}"),
        ({"p": {"column": 3}}, r"'column' must be a non-empty string, got 3"),
        ({"p": {"template": "  "}}, r"'template' must be a non-empty string, got '  '"),
        ({"": {"column": "question"}}, r"parameter names must be non-empty strings, got ''"),
    ],
)
def test_malformed_params(params, message):
    with pytest.raises(InputError, match=message):
        compile_(params)


def test_a_bare_string_names_a_column():
    """Google's sample notebooks write ``{"content": "content"}`` for ``{"content": {"column": "content"}}``."""
    pp = compile_({"inference_context": "document", "q": {"column": "question"}})
    assert pp.parameters[0].column == "document" and pp.parameters[0].template is None
    assert pp.render({"question": "Why?", "document": "Because."}, location="x") == {
        "inference_context": "Because.",
        "q": "Why?",
    }
    with pytest.raises(InputError, match=r"column 'documnet' is not in the dataset.*Did you mean 'document'"):
        compile_({"inference_context": "documnet"})


def test_missing_column_lists_available_columns():
    with pytest.raises(
        InputError,
        match=r"^autorater_prompt_parameters\.inference_context, column 'documnet': column 'documnet' is "
        r"not in the dataset; available columns: \['id', 'question', 'document', 'tags', 'meta', 'count'\]\. "
        r"Did you mean 'document'\?",
    ):
        compile_({"inference_context": {"column": "documnet"}})


def test_unknown_template_variable_names_parameter_variable_and_columns():
    with pytest.raises(
        InputError,
        match=r"^autorater_prompt_parameters\.inference_instruction, column 'questoin': template variable "
        r"'questoin' is not a column of the dataset; available columns: \['id', 'question', .*\]; other "
        r"variables: \['default_instruction'\]\. Did you mean 'question'\?",
    ):
        compile_({"inference_instruction": {"template": "{{ default_instruction }} {{ questoin }}"}})


def test_default_instruction_unavailable_without_extra_variables():
    with pytest.raises(InputError, match=r"template variable 'default_instruction' is not a column"):
        compile_({"p": {"template": "{{ default_instruction }}"}}, extra={})


def test_template_syntax_error():
    message = r"\.p: template syntax error on line 2: .*template: '\\nhi \{\{ question '"
    with pytest.raises(InputError, match=message):
        compile_({"p": {"template": "\nhi {{ question "}})
    with pytest.raises(InputError, match=r"template syntax error on line 1: No filter named 'shout'"):
        compile_({"p": {"template": "{{ question | shout }}"}})


@pytest.mark.parametrize(
    "template",
    [
        "{{ ''.__class__.__mro__ }}",
        "{{ question.__class__ }}",
        "{{ question['__class__'] }}",
        "{{ cycler.__init__.__globals__ }}",
    ],
)
def test_private_attribute_access_is_refused_at_compile_time(template):
    with pytest.raises(InputError, match=r"\.p: the template accesses the private attribute '__\w+__'"):
        compile_({"p": {"template": template}}, extra={**EXTRA, "cycler": None})


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("{{ question | attr('__class__') }}", r"refused by the sandbox \(access to attribute '__class__'"),
        ("{{ 'a' * 100000000 }}", r"refused by the sandbox \(repetition would produce more than"),
        ("{{ 2 ** 100000000 }}", r"refused by the sandbox \(exponent 100000000 is larger than"),
        ("{{ '{0.__class__}'.format(question) }}", r"refused by the sandbox \(access to attribute '__class__'"),
    ],
)
def test_sandbox_refusals_become_input_errors(template, message):
    pp = compile_({"p": {"template": template}})
    prefix = r"^d\.jsonl line 3: the template of autorater_prompt_parameters\.p was "
    with pytest.raises(InputError, match=prefix + message):
        pp.render({"question": "q"}, location="d.jsonl line 3")


def test_render_error_in_template_names_row():
    pp = compile_({"p": {"template": "{{ count / 0 }}"}})
    message = r"^x line 2: the template of .*\.p failed on this row \(ZeroDivisionError"
    with pytest.raises(InputError, match=message):
        pp.render({"count": 1}, location="x line 2")


@pytest.mark.parametrize(
    ("row", "state"),
    [({"question": None}, r"null \(None\)"), ({"question": float("nan")}, r"null \(nan\)"), ({}, "missing")],
)
@pytest.mark.parametrize("spec", [{"column": "question"}, {"template": "Q: {{ question }}"}])
def test_missing_or_null_value_names_row_and_column(row, state, spec):
    pp = compile_({"inference_instruction": spec})
    with pytest.raises(
        InputError,
        match=rf"^d\.jsonl line 9, column 'question': autorater_prompt_parameters\.inference_instruction "
        rf"reads this column but the value is {state}",
    ):
        pp.render(row, location="d.jsonl line 9")
