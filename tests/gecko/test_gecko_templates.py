"""Prompt templates in Jinja2 and in the Vertex AI SDK's {placeholder} syntax."""

import json

import pytest

from autorater_pipelines import gecko
from autorater_pipelines.errors import InputError
from autorater_pipelines.gecko.templates import rubrics_text, syntax_of
from autorater_pipelines.testing import ModelEmulator

QUIET = {"progress": False, "cache_dir": "off"}
GCP = {"project": "p", "location": "us-central1"}

# Our own wording, in the shape of the Vertex AI Gecko sample's templates: a JSON example with {n}[keyword]
# markup and a literal {"…"} object, the placeholders {prompt}, {rubrics} and {image}.
GENERATOR = """Write one yes/no question per keyword of the description.
Answer in this format:
{
  "keywords": "A {1}[red] {2}[bicycle]",
  "qas": [{"question_id": 1, "question": "is the bicycle red?", "answer": "yes", "choices": ["yes", "no"]}]
}
Description:
{prompt}
Answer:
"""
VALIDATOR = """# Instructions
Answer each question about the picture with yes or no:
{rubrics}

# Image
{image}

# Output Format
<question>
Question: repeat the original question
Verdict: yes|no
</question>
"""
RUBRIC = {
    "keywords": "A {1}[red] {2}[bicycle]",
    "qas": [
        {"question_id": 1, "question": "Is the bicycle red?", "answer": "yes", "choices": ["yes", "no"]},
        {"question_id": 2, "question": "Is there a bicycle?", "answer": "yes", "choices": ["yes", "no"]},
    ],
}


def responder(request):
    if request.response_schema and "qas" in request.response_schema.get("properties", {}):
        return json.dumps(RUBRIC)
    return (
        "<question>\nQuestion: Is the bicycle red?\nVerdict: no\n</question>\n"
        "<question>\nQuestion: Is there a bicycle?\nVerdict: yes\n</question>"
    )


def test_syntax_is_read_from_the_text():
    assert syntax_of(GENERATOR) == "vertex" and syntax_of(VALIDATOR) == "vertex"
    assert syntax_of("Prompt: {{ prompt }}") == "jinja" and syntax_of("{% if x %}{% endif %}") == "jinja"
    assert syntax_of('{"a": {"b": 1}}') == "vertex"  # nested JSON is not Jinja2
    assert rubrics_text([{"question": "Is it red?", "choices": ["yes", "no"]}]) == "<question>Is it red?<choices>yes,no"


def test_vertex_templates_end_to_end(media_file):
    path = media_file("png")
    rows = [{"uid": 1, "prompt": "A red bicycle", "media": str(path)}]
    with ModelEmulator(responder=responder) as emu:
        rubrics = gecko.generate_rubrics(
            rows,
            id_columns=["uid"],
            prompt_column="prompt",
            media_type="image",
            generator=gecko.RubricGenerator.of(
                model="gemini-2.5-flash", parameters={**QUIET, "base_url": emu.url}, prompt_template=GENERATOR, **GCP
            ),
        )
        validated = gecko.validate(
            rubrics.rows,
            id_columns=["uid"],
            media_column="media",
            media_type="image",
            validator=gecko.Validator.of(
                model="gemini-2.5-flash", parameters={**QUIET, "base_url": emu.url}, prompt_template=VALIDATOR, **GCP
            ),
        )
        generation, validation = emu.requests
    # Only {prompt} is replaced; the JSON example and the keyword markup reach the model as written.
    assert generation.prompt_text.endswith("Description:\nA red bicycle\nAnswer:\n")
    assert '"keywords": "A {1}[red] {2}[bicycle]"' in generation.prompt_text
    # The image is a part where {image} stands, between the text before and after it; the questions are
    # the SDK's <question>…<choices>… lines; no JSON schema forces a format the template did not ask for.
    parts = validation.body["contents"][0]["parts"]
    assert [("text" if "text" in p else "media") for p in parts] == ["text", "media", "text"]
    assert parts[0]["text"].endswith(
        "yes or no:\n<question>Is the bicycle red?<choices>yes,no\n<question>Is there a bicycle?<choices>yes,no\n\n"
        "# Image\n"
    )
    assert parts[2]["text"].startswith("\n\n# Output Format\n<question>\nQuestion: repeat")
    assert validation.response_schema is None
    (row,) = gecko.score(validated.rows, id_columns=["uid"]).results
    assert [q["verdict"] for q in row["qa_results"]] == ["no", "yes"] and row["final_score"] == 0.5
    # Blog-format questions carry no keyword_id: their question_id numbers the keyword they check.
    assert [q["keyword_id"] for q in row["qa_results"]] == [1, 2] and row["keyword_coverage"] == 1.0


def test_jinja_templates_keep_media_first_and_may_show_the_rubrics(media_file):
    rows = [
        {
            "uid": 1,
            "prompt": "A red bicycle",
            "media": str(media_file("png")),
            "qas": [{"question_id": "q1", "question": "Is it red?", "choices": ["yes", "no"], "answer": "yes"}],
        }
    ]
    with ModelEmulator(responder=lambda r: "Verdict: yes") as emu:
        validated = gecko.validate(
            rows,
            id_columns=["uid"],
            media_column="media",
            media_type="image",
            prompt_column="prompt",
            validator=gecko.Validator.of(
                model="gemini-2.5-flash",
                parameters={**QUIET, "base_url": emu.url, "questions_per_call": 1},
                prompt_template="For '{{ prompt }}': {{ question.question }} {{ rubrics }}",
                **GCP,
            ),
        )
        (request,) = emu.requests
    parts = request.body["contents"][0]["parts"]
    assert "text" not in parts[0] and parts[1]["text"] == (
        "For 'A red bicycle': Is it red? <question>Is it red?<choices>yes,no"
    )
    assert validated.rows[0]["answers"]["q1"][0]["verdict"] == "yes"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"prompt_template": "Answer about the image: {image}"},
            r"the template never uses \{rubrics\}.*not see the questions",
        ),
        ({"prompt_template": "{{ media_type }}"}, r"the template never uses \{\{ questions \}\} or \{\{ rubrics \}\}"),
        ({"prompt_template": "{rubrics} for {prompt}"}, r"placeholder \{prompt\} is not available.*set prompt_column"),
        ({"prompt_template": "{question} {image}"}, r"placeholder \{question\} is not available"),
        (
            {"prompt_template": "{{ questions }} {{ nope }}"},
            r"cannot render template: 'nope' is undefined; available variables",
        ),
    ],
)
def test_a_validator_template_missing_what_the_call_needs_fails_before_any_call(media_file, kwargs, message):
    rows = [{"uid": 1, "media": str(media_file("png")), "qas": [{"question_id": "q1", "question": "Red?"}]}]
    with ModelEmulator(responder=responder) as emu:
        with pytest.raises(InputError, match="validator_prompt_template: " + message):
            gecko.validate(
                rows,
                id_columns=["uid"],
                media_column="media",
                media_type="image",
                validator=gecko.Validator.of(
                    model="gemini-2.5-flash", parameters={**QUIET, "base_url": emu.url}, **GCP, **kwargs
                ),
            )
        assert emu.requests == []


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ('Write questions.\n{\n  "keywords": "{1}[x]"\n}', r"the template never uses \{prompt\}"),
        ("{prompt} {rubrics}", r"placeholder \{rubrics\} is not available in this template"),
        ("{{ question_types }}", r"the template never uses \{\{ prompt \}\}"),
    ],
)
def test_a_generator_template_without_the_prompt_fails(template, message):
    with pytest.raises(InputError, match="rubric_generation_prompt_template: " + message):
        gecko.generate_rubrics(
            [{"uid": 1, "prompt": "p"}],
            id_columns=["uid"],
            prompt_column="prompt",
            media_type="image",
            generator=gecko.RubricGenerator.of(model="replay/none.jsonl", parameters=QUIET, prompt_template=template),
        )


def test_column_names_work_as_placeholders_as_in_the_sdk(media_file, caplog):
    # The SDK fills {name} from the column of that name: {caption} is the prompt column, {response} the media.
    rows = [{"uid": 1, "caption": "A red bicycle", "response": str(media_file("png"))}]
    with ModelEmulator(responder=responder) as emu:
        rubrics = gecko.generate_rubrics(
            rows,
            id_columns=["uid"],
            prompt_column="caption",
            media_type="image",
            generator=gecko.RubricGenerator.of(
                model="gemini-2.5-flash",
                parameters={**QUIET, "base_url": emu.url},
                prompt_template="Questions for: {caption} {unknown}",
                **GCP,
            ),
        )
        gecko.validate(
            rubrics.rows,
            id_columns=["uid"],
            media_column="response",
            media_type="image",
            validator=gecko.Validator.of(
                model="gemini-2.5-flash",
                parameters={**QUIET, "base_url": emu.url},
                prompt_template="Look: {response} Then answer: {rubrics}",
                **GCP,
            ),
        )
        generation, validation = emu.requests
    assert generation.prompt_text == "Questions for: A red bicycle {unknown}"
    assert "{unknown}" in caplog.text and "left as literal text" in caplog.text
    parts = validation.body["contents"][0]["parts"]
    assert parts[0]["text"] == "Look: " and "text" not in parts[1] and parts[2]["text"].startswith(" Then answer: <q")
