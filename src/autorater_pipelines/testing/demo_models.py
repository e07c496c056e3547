"""Scripted stand-ins for every model of a run, for offline demos: each request is answered by what it asks.

``python -m autorater_pipelines.testing.emulator --judge length`` (AutoSxS) and ``--judge gecko`` serve these, so
every documented parameter set gives a sensible demo without a real model:

- an AutoSxS **judge** request (the prompt shows the two fenced responses, or the structured output asks for a
  ``choice`` / pointwise scores) gets :func:`~autorater_pipelines.testing.judges.length_judge`'s answer;
- a Gecko **rubric generation** request (structured output with ``qas``, or a prompt asking for ``"qas"``) gets
  a valid rubric for the prompt it names (:func:`rubric_for`): its content words marked as keywords, one yes/no
  question each (multiple choice a–d for video); a **text** rubric request (``media_type: "text"``: its schema's
  question types are text ones) gets pass/fail rubrics "Does the response mention 'word'?" (:func:`text_rubric_for`),
  a rubric request whose prompt contains ``FAIL_RUBRIC`` gets a reply with no usable rubric;
- a Gecko **validator** request gets answers in the format it asks for: the ``{"answers": [...]}`` JSON for
  ``[question_id] question`` lines, else one word (``yes``/``no``) or one option letter (:func:`validator_answer`);
  a text rubric "Does the response mention 'word'?" is answered by looking: ``yes`` when the response shown
  under ``Response:`` contains the word (case aside), else ``no``;
- anything else is a **generation** request (models A/B): :func:`generated_response`, a short answer drawn from
  the prompt's own sentences whose wording depends on the model's name, so two models' answers differ in length.

Every answer is a pure function of the request (model name and text): runs are reproducible, and a response cache
serves the same answers again.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from autorater_pipelines.testing._protocols import EmulatedRequest
from autorater_pipelines.testing.judges import length_judge, responses_in_prompt

__all__ = [
    "generated_response",
    "gecko_model",
    "is_judge_request",
    "is_rubric_request",
    "length_judge_and_models",
    "rubric_for",
    "text_rubric_for",
    "validator_answer",
]

_STOPWORDS = frozenset(
    "a an the and or of on in at to with without by for from into onto over under above below next near "
    "is are be its it this that these those some while as up down out off who which there their".split()
)
_COLORS = frozenset("red orange yellow green blue purple pink brown black white gray grey golden silver".split())
_NUMBERS = frozenset("one two three four five six seven eight nine ten single pair couple several many".split())
_DISTRACTORS = ("a cat", "a car", "a tree", "a house", "a boat", "a chair", "water", "snow")
_LEADS = (
    "",
    "In short: ",
    "According to the text, ",
    "Based on the information given, ",
    "Briefly, ",
    "From what the prompt states, ",
    "The answer: ",
    "As the passage explains, ",
)
_TAILS = (
    "",
    " I hope this helps.",
    " That is the short answer.",
    " Let me know if you need more detail.",
    " This follows directly from the prompt.",
)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_LABEL = re.compile(r"^\s*[A-Za-z_ ]{1,24}:\s+")
_QUESTION_LINE = re.compile(
    r"^\[([^\]\n]+)\] (.+?)(?: Answer yes or no\.| Options: (.*)| Answer in a few words\.)?$", re.M
)


def _hash(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x00".join(parts).encode("utf-8")).digest()[:8], "big")


def is_judge_request(request: EmulatedRequest) -> bool:
    """An AutoSxS judge request: its prompt shows the fenced responses, or its schema asks for a verdict."""
    properties = (request.response_schema or {}).get("properties", {})
    return bool(responses_in_prompt(request.prompt_text)) or "choice" in properties or "response_a_score" in properties


def is_rubric_request(request: EmulatedRequest) -> bool:
    """A Gecko rubric-generation request: structured output with ``qas``, or a prompt that asks for ``"qas"``."""
    return "qas" in (request.response_schema or {}).get("properties", {}) or '"qas"' in request.prompt_text


def _is_validator_request(request: EmulatedRequest) -> bool:
    properties = (request.response_schema or {}).get("properties", {})
    text = request.prompt_text
    return "answers" in properties or '"answers"' in text or bool(re.search(r"^Question: ", text, re.M))


def generated_response(request: EmulatedRequest) -> str:
    """A plausible answer of model ``request.model`` to a generation prompt (module docstring).

    The prompt's statements (sentences that are not questions, labels such as ``CONTEXT:`` removed) are the
    material; the model's name picks a lead-in and how many of them to use, so model A and model B answer the
    same prompt differently. A prompt with nothing to draw on gets a short refusal to guess.
    """
    text = request.prompt_text or ""
    statements = []
    for line in text.splitlines():
        for sentence in _SENTENCE.findall(_LABEL.sub("", line)):
            sentence = sentence.strip()
            if len(sentence) > 3 and not sentence.endswith("?"):
                statements.append(sentence if sentence[-1] in ".!" else sentence + ".")
    seed = _hash(request.model, text)
    if not statements:
        return "I cannot tell from the prompt alone; it gives no details to answer from."
    count = 1 + seed % min(3, len(statements))
    voice = _hash("voice", request.model)  # how this model words its answers: a lead-in and a closing remark
    lead, tail = _LEADS[voice % len(_LEADS)], _TAILS[(voice >> 20) % len(_TAILS)]
    body = " ".join(statements[:count])
    return lead + (body[0].lower() + body[1:] if lead and body[:2] != body[:2].upper() else body) + tail


def _prompt_of_rubric_request(text: str) -> str:
    """The generation prompt a rubric request is about: the text after its last ``Prompt:`` label."""
    marker = text.rfind("Prompt:")
    return (text[marker + len("Prompt:") :] if marker >= 0 else text).strip().splitlines()[0].strip() if text else ""


def _question_type(word: str) -> str:
    lowered = word.lower()
    if lowered in _COLORS:
        return "color"
    if lowered in _NUMBERS or lowered.isdigit():
        return "counting"
    if lowered.endswith("ing"):
        return "activity"
    return "object"


def rubric_for(prompt: str, *, video: bool = False) -> dict[str, Any]:
    """A valid Gecko rubric for ``prompt``: up to 8 content words marked ``{n}[word]``, one question each.

    Image: yes/no questions with answer ``yes``; video: multiple choice a–d, the keyword at a position that
    varies with the word, distractors from a fixed list. ``question_type``: ``color``, ``counting``,
    ``activity`` (``-ing`` words) or ``object``.
    """
    words = prompt.split()
    keywords: list[tuple[int, str]] = []
    marked = []
    for word in words:
        core = word.strip(".,;:!?\"'()")
        if core and core.lower() not in _STOPWORDS and core.isalpha() and len(keywords) < 8:
            keywords.append((len(keywords) + 1, core))
            marked.append(word.replace(core, f"{{{len(keywords)}}}[{core}]", 1))
        else:
            marked.append(word)
    qas = []
    for keyword_id, word in keywords:
        qtype = _question_type(word)
        qa: dict[str, Any] = {
            "keyword_id": keyword_id,
            "question_type": qtype,
            "justification": f"The prompt says {word!r}.",
        }
        if video:
            letters = "abcd"
            right = letters[_hash(word) % 4]
            distractors = iter(d for d in _DISTRACTORS if d != word.lower())
            qa["question"] = f"Which of these does the video show for keyword {keyword_id} ({qtype})?"
            qa["choices"] = {k: (word if k == right else next(distractors)) for k in letters}
            qa["answer"] = right
        else:
            qa["question"] = {
                "color": f"Is something {word} in the image?",
                "counting": f"Does the image show {word} of what the prompt names?",
                "activity": f"Is anything {word} in the image?",
            }.get(qtype, f"Is there {'an' if word[0].lower() in 'aeiou' else 'a'} {word} in the image?")
            qa["answer"] = "yes"
        qas.append(qa)
    return {"keywords": " ".join(marked), "qas": qas}


_MENTION = re.compile(r"^Does the response mention '([^'\n]+)'\?")


def text_rubric_for(prompt: str) -> dict[str, Any]:
    """Pass/fail text rubrics for ``prompt``: its content words (up to 8) marked, one "mention" rubric each."""
    marked = rubric_for(prompt)
    words = {qa["keyword_id"]: qa["justification"].split("'")[1] for qa in marked["qas"]}
    qas = [
        {
            "keyword_id": kid,
            "question": f"Does the response mention '{word}'?",
            "question_type": "content",
            "answer": "yes",
            "justification": f"The prompt asks about {word!r}.",
        }
        for kid, word in words.items()
    ]
    return {"keywords": marked["keywords"], "qas": qas}


def _response_shown(text: str) -> str:
    """The response of a text validator request: after ``Response:``, up to the first question line."""
    start = text.find("\nResponse:\n")
    if start < 0:
        return ""
    rest = text[start + len("\nResponse:\n") :]
    end = re.search(r"^(?:\[[^\]\n]+\] |Question: )", rest, re.M)
    return rest[: end.start()] if end else rest


def validator_answer(request: EmulatedRequest) -> str:
    """Answers to a validator request in the format it asks for (module docstring).

    Mostly ``yes`` (one question in five, chosen by its text, ``no``); options get a letter chosen by the
    question's text; free-form questions a short phrase.
    """
    text = request.prompt_text

    response = _response_shown(text).lower()

    def one(question: str, options: str | None, yes_no: bool) -> str:
        mention = _MENTION.match(question)
        if mention and response:
            return "yes" if mention.group(1).lower() in response else "no"
        seed = _hash(question)
        if options:
            letters = re.findall(r"(?:^|; )([a-z])\) ", options)
            return letters[seed % len(letters)] if letters else "a"
        if yes_no:
            return "no" if seed % 5 == 0 else "yes"
        return "it looks as described"

    lines = [
        (m.group(1), m.group(2), m.group(3), "Answer yes or no." in m.group(0)) for m in _QUESTION_LINE.finditer(text)
    ]
    properties = (request.response_schema or {}).get("properties", {})
    if lines or "answers" in properties or '"answers"' in text:
        answers = [{"question_id": qid, "answer": one(q, opts, yn)} for qid, q, opts, yn in lines]
        return json.dumps({"answers": answers})
    question = re.search(r"^Question: (.*)$", text, re.M)
    options = re.search(r"^Options: (.*)$", text, re.M)
    asked = question.group(1) if question else text
    return one(asked, options.group(1) if options else None, "yes or no" in text)


def length_judge_and_models(request: EmulatedRequest) -> str:
    """``--judge length``: judge requests get the length judge, generation requests a plausible response."""
    if is_judge_request(request):
        return length_judge(request)
    return generated_response(request)


def gecko_model(request: EmulatedRequest) -> str:
    """``--judge gecko``: a rubric for rubric requests, answers for validator requests, else a generated response."""
    if is_rubric_request(request):
        schema = json.dumps(request.response_schema or {})
        prompt = _prompt_of_rubric_request(request.prompt_text)
        if "FAIL_RUBRIC" in prompt:
            return json.dumps({"keywords": prompt, "qas": []})
        if '"instruction_following"' in schema or "pass/fail rubrics" in request.prompt_text:
            return json.dumps(text_rubric_for(prompt))
        video = '"choices"' in schema or "multiple choice with four options" in request.prompt_text
        return json.dumps(rubric_for(_prompt_of_rubric_request(request.prompt_text), video=video))
    if _is_validator_request(request):
        return validator_answer(request)
    if is_judge_request(request):
        return length_judge(request)
    return generated_response(request)
