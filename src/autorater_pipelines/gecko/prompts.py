"""Gecko prompt templates (our own wording) and the JSON schemas of the expected answers.

Templates are Jinja2 rendered in the shared bounded sandbox
(:class:`autorater_pipelines.evaluation.templates.BoundedEnvironment`) with strict undefined variables, so a
user override can use the same variables but cannot reach Python internals, and is refused when it runs too
long, loops too much or renders too much text. Variables:

- rubric generation: ``prompt`` (the generation prompt), ``question_types`` (list of str), ``media_type``,
  ``guidelines`` (``rubric_generation_parameters.guidelines``, "" when unset).
- validation, all questions in one call: ``media_type``, ``questions`` — list of
  ``{"question_id", "question", "options": [{"label", "text"}], "yes_no": bool}``.
- validation, one question per call: ``media_type``, ``question`` (one item as above).
- validation of ``media_type: "text"``: also ``response`` (the response text) and ``prompt``.

Method: Gecko (Wiles et al., arXiv 2404.16820) — keywords marked in the prompt, one question per
keyword, a VQA judge answering each question.
"""

from __future__ import annotations

from typing import Any

import jinja2

from autorater_pipelines.errors import InputError
from autorater_pipelines.evaluation.templates import BoundedEnvironment
from autorater_pipelines.gecko._common import IMAGE_QUESTION_TYPES, TEXT_QUESTION_TYPES

__all__ = [
    "RUBRIC_SCHEMAS",
    "RUBRIC_TEMPLATES",
    "RUBRIC_TEXT_TEMPLATE",
    "TEXT_RUBRIC_PROMPT_VERSION",
    "VALIDATE_TEXT_ALL_TEMPLATE",
    "VALIDATE_TEXT_ONE_TEMPLATE",
    "VALIDATE_ALL_SCHEMA",
    "VALIDATE_ALL_TEMPLATE",
    "VALIDATE_ONE_TEMPLATE",
    "compile_template",
    "parse_template",
    "render",
]

_RUBRIC_COMMON = """\
Your job is to turn a text prompt into a checklist for judging a generated {{ media }}.

Step 1 - keywords. Copy the prompt word for word and wrap every piece of visual content a faithful \
{{ media }} must show in the markup {n}[words], numbering from 1 in reading order. Content means \
things, people, animals, food, actions, attributes, counts, colors, materials, shapes, positions, \
places and written text. Leave filler words unmarked.

Step 2 - questions. Write exactly one question for each keyword. A viewer must be able to answer \
it by looking at the {{ media }} alone, without reading the prompt. Give the keyword number it \
checks as keyword_id, a question_type from this list: {{ question_types | join(", ") }}, and one \
short sentence of justification.
"""

RUBRIC_IMAGE_TEMPLATE = (
    _RUBRIC_COMMON.replace("{{ media }}", "image")
    + """\
Every question is a yes/no question. answer is the answer a faithful image gives - "yes", or "no" \
when the prompt rules something out ("a street with no cars": "Are there cars?" -> "no").

Example for the prompt "Two brown dogs sleeping on a blue sofa":
{"keywords": "{1}[Two] {2}[brown] {3}[dogs] {4}[sleeping] on a {5}[blue] {6}[sofa]",
 "qas": [
  {"keyword_id": 1, "question": "Are there exactly two dogs?", "question_type": "counting", "answer": "yes",
   "justification": "The prompt asks for two dogs."},
  {"keyword_id": 2, "question": "Are the dogs brown?", "question_type": "color", "answer": "yes",
   "justification": "The dogs are described as brown."},
  {"keyword_id": 3, "question": "Are there dogs?", "question_type": "animal", "answer": "yes",
   "justification": "Dogs are the subject."},
  {"keyword_id": 4, "question": "Are the dogs sleeping?", "question_type": "activity", "answer": "yes",
   "justification": "The dogs are sleeping."},
  {"keyword_id": 5, "question": "Is the sofa blue?", "question_type": "color", "answer": "yes",
   "justification": "The sofa is blue."},
  {"keyword_id": 6, "question": "Is there a sofa?", "question_type": "object", "answer": "yes",
   "justification": "The dogs lie on a sofa."}]}

Reply with one JSON object of this shape and nothing else.

Prompt: {{ prompt }}
"""
)

RUBRIC_VIDEO_TEMPLATE = (
    _RUBRIC_COMMON.replace("{{ media }}", "video")
    + """\
Every question is multiple choice with four options labelled a, b, c and d, exactly one of which \
matches the prompt; the other three must be plausible but clearly wrong. answer is the letter of \
the matching option. Ask about what happens over time when the prompt describes motion or change.

Example for the prompt "A red kite rising above a beach":
{"keywords": "A {1}[red] {2}[kite] {3}[rising] above a {4}[beach]",
 "qas": [
  {"keyword_id": 1, "question": "What color is the kite?", "question_type": "color",
   "choices": {"a": "green", "b": "red", "c": "yellow", "d": "black"}, "answer": "b",
   "justification": "The kite is red."},
  {"keyword_id": 2, "question": "What is flying in the air?", "question_type": "object",
   "choices": {"a": "a kite", "b": "a balloon", "c": "a bird", "d": "a plane"}, "answer": "a",
   "justification": "The prompt shows a kite."},
  {"keyword_id": 3, "question": "How does the kite move?", "question_type": "activity",
   "choices": {"a": "it falls", "b": "it stays still", "c": "it rises", "d": "it spins on the ground"},
   "answer": "c", "justification": "The kite is rising."},
  {"keyword_id": 4, "question": "Where does the scene take place?", "question_type": "location",
   "choices": {"a": "a forest", "b": "a city street", "c": "a snowfield", "d": "a beach"}, "answer": "d",
   "justification": "The kite is above a beach."}]}

Reply with one JSON object of this shape and nothing else.

Prompt: {{ prompt }}
"""
)

TEXT_RUBRIC_PROMPT_VERSION = "text-rubrics-v1"
"""Version of :data:`RUBRIC_TEXT_TEMPLATE`; a change of its wording gets a new version (metrics.json names it)."""

RUBRIC_TEXT_TEMPLATE = """\
Your job is to turn a user's prompt into a checklist of pass/fail rubrics for judging a response to it \
(adaptive rubrics: each rubric is specific to this prompt).

Step 1 - requirements. Copy the prompt word for word and wrap every requirement a good response must \
meet in the markup {n}[words], numbering from 1 in reading order: what it must do or contain, facts \
it must get right, constraints of length, format, language, tone or audience. Leave filler words unmarked.

Step 2 - rubrics. Write one rubric for each requirement, and at most three more for what any excellent \
response to this prompt needs (accurate, complete, clear, safe) when the prompt implies it. Each rubric is a \
yes/no question about the response alone, answerable by a reader who sees the prompt and the response: \
"Does the response name all three deadlines?". Give the requirement number it checks as keyword_id \
(leave it out for the extra rubrics), a question_type from this list: {{ question_types | join(", ") }}, \
and one short sentence of justification. answer is "yes" for what a good response does, "no" for what it \
must not do ("Does the response use technical jargon?" -> "no" for a child audience).
{% if guidelines %}
Guidelines from the user (follow them when writing the rubrics): {{ guidelines }}
{% endif %}
Example for the prompt "List three tips for a job interview, in under 50 words":
{"keywords": "List {1}[three] {2}[tips for a job interview], {3}[in under 50 words]",
 "qas": [
  {"keyword_id": 1, "question": "Does the response give exactly three tips?", "question_type": \
"instruction_following", "answer": "yes", "justification": "The prompt asks for three tips."},
  {"keyword_id": 2, "question": "Is every tip about preparing for or behaving in a job interview?", \
"question_type": "content", "answer": "yes", "justification": "The tips must be on topic."},
  {"keyword_id": 3, "question": "Is the response under 50 words?", "question_type": "format", "answer": "yes", \
"justification": "The prompt limits the length."},
  {"question": "Is every tip sound, practical advice?", "question_type": "accuracy", "answer": "yes", \
"justification": "Advice must be correct to be useful."}]}

Reply with one JSON object of this shape and nothing else.

Prompt: {{ prompt }}
"""
"""Default rubric-generation template for ``media_type: "text"`` (our own wording, in the spirit of the
general-quality adaptive rubrics of Google's evaluation service), version :data:`TEXT_RUBRIC_PROMPT_VERSION`."""

RUBRIC_TEMPLATES: dict[str, str] = {
    "image": RUBRIC_IMAGE_TEMPLATE,
    "video": RUBRIC_VIDEO_TEMPLATE,
    "text": RUBRIC_TEXT_TEMPLATE,
}
"""Default rubric-generation templates by media type."""

_QA_PROPERTIES: dict[str, Any] = {
    "keyword_id": {"type": "integer"},
    "question": {"type": "string"},
    "question_type": {"type": "string", "enum": list(IMAGE_QUESTION_TYPES)},
    "justification": {"type": "string"},
}


def _rubric_schema(video: bool, text: bool = False) -> dict[str, Any]:
    properties = dict(_QA_PROPERTIES)
    required = ["keyword_id", "question", "question_type", "answer"]
    if text:  # extra rubrics check no marked requirement
        properties["question_type"] = {"type": "string", "enum": list(TEXT_QUESTION_TYPES)}
        required.remove("keyword_id")
    if video:
        properties["choices"] = {
            "type": "object",
            "properties": {k: {"type": "string"} for k in "abcd"},
            "required": list("abcd"),
        }
        properties["answer"] = {"type": "string", "enum": list("abcd")}
        required.append("choices")
    else:
        properties["answer"] = {"type": "string", "enum": ["yes", "no"]}
    qa = {"type": "object", "properties": properties, "required": required}
    return {
        "type": "object",
        "properties": {"keywords": {"type": "string"}, "qas": {"type": "array", "items": qa}},
        "required": ["keywords", "qas"],
    }


RUBRIC_SCHEMAS: dict[str, dict[str, Any]] = {
    "image": _rubric_schema(False),
    "video": _rubric_schema(True),
    "text": _rubric_schema(False, text=True),
}
"""Structured-output schemas (the OpenAPI subset Gemini accepts) for rubric generation."""

_OPTIONS = (
    "{% if q.yes_no %}Answer yes or no.{% elif q.options %}Options: {% for o in q.options %}"
    "{{ o.label }}) {{ o.text }}{% if not loop.last %}; {% endif %}{% endfor %}"
    "{% else %}Answer in a few words.{% endif %}"
)

VALIDATE_ALL_TEMPLATE = (
    """\
Look carefully at the {{ media_type }} and answer each question below about what it actually shows \
(not about what it was meant to show). For yes/no questions answer "yes" or "no"; for questions \
with options answer with the option's letter only.

{% for q in questions -%}
[{{ q.question_id }}] {{ q.question }} """
    + _OPTIONS
    + """
{% endfor %}
Reply with one JSON object and nothing else:
{"answers": [{"question_id": "<id in brackets>", "answer": "<yes, no or a letter>"}, ...]}
with one entry per question.
"""
)
"""Default validator template, all questions of a row in one call."""

VALIDATE_ONE_TEMPLATE = """\
Look carefully at the {{ media_type }} and answer the question about what it actually shows.
{% set q = question %}
Question: {{ q.question }}
{% if q.yes_no %}Reply with the single word yes or no.
{%- elif q.options %}Options: {% for o in q.options %}{{ o.label }}) {{ o.text }}\
{% if not loop.last %}; {% endif %}{% endfor %}
Reply with the option's letter only.
{%- else %}Reply in a few words.{% endif %}
"""
"""Default validator template, one question per call (the answer is the first token, for logprobs)."""

VALIDATE_ALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answers": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"question_id": {"type": "string"}, "answer": {"type": "string"}},
                "required": ["question_id", "answer"],
            },
        }
    },
    "required": ["answers"],
}
"""Structured-output schema of the all-questions-in-one-call validator answer."""

VALIDATE_TEXT_ALL_TEMPLATE = (
    """\
Read the prompt and the response below, then answer each rubric question about what the response \
actually says (not what it was meant to say). Answer "yes" or "no" for yes/no questions; for questions \
with options answer with the option's letter only.

Prompt:
{{ prompt }}

Response:
{{ response }}

{% for q in questions -%}
[{{ q.question_id }}] {{ q.question }} """
    + _OPTIONS
    + """
{% endfor %}
Reply with one JSON object and nothing else:
{"answers": [{"question_id": "<id in brackets>", "answer": "<yes, no or a letter>"}, ...]}
with one entry per question.
"""
)
"""Default validator template for ``media_type: "text"``, all rubrics of a row in one call."""

VALIDATE_TEXT_ONE_TEMPLATE = """\
Read the prompt and the response below, then answer the rubric question about what the response actually says.

Prompt:
{{ prompt }}

Response:
{{ response }}
{% set q = question %}
Question: {{ q.question }}
{% if q.yes_no %}Reply with the single word yes or no.
{%- elif q.options %}Options: {% for o in q.options %}{{ o.label }}) {{ o.text }}\
{% if not loop.last %}; {% endif %}{% endfor %}
Reply with the option's letter only.
{%- else %}Reply in a few words.{% endif %}
"""
"""Default validator template for ``media_type: "text"``, one rubric per call."""

_ENV = BoundedEnvironment()


def compile_template(text: str, *, source: str) -> jinja2.Template:
    """Compile a (possibly user-supplied) template in the sandbox.

    Args:
        text: Jinja2 template text.
        source: Parameter name for error messages, e.g. ``rubric_generation_prompt_template``.

    Returns:
        The compiled template.

    Raises:
        InputError: the text is empty or not valid Jinja2.

    """
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"prompt template must be non-empty text, got {text!r}", source=source)
    try:
        return _ENV.from_string(text)
    except jinja2.TemplateSyntaxError as exc:
        msg = f"invalid template syntax at line {exc.lineno}: {exc.message}"
        raise InputError(msg, source=source) from None


def parse_template(text: str) -> Any:
    """Parse template text into its Jinja2 AST (for :func:`jinja2.meta.find_undeclared_variables`)."""
    return _ENV.parse(text)


def render(template: jinja2.Template, *, source: str, **variables: Any) -> str:
    """Render a compiled template with ``variables``.

    Raises:
        InputError: the template uses an unknown variable or an operation the sandbox forbids, or one of its
            expressions fails (``{{ 1/0 }}``); the message names the available variables.

    """
    try:
        return template.render(**variables)
    except jinja2.TemplateError as exc:
        raise InputError(
            f"cannot render template: {exc}; available variables: {sorted(variables)}", source=source
        ) from None
    except (ArithmeticError, TypeError, ValueError, LookupError, AttributeError, RecursionError) as exc:
        # an expression of the template failed ({{ 1/0 }}, a filter given the wrong type): the user's error
        raise InputError(
            f"cannot render template: {type(exc).__name__}: {exc}; available variables: {sorted(variables)}",
            source=source,
        ) from None
