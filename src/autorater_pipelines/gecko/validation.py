"""Validation: a multimodal judge answers each rubric question while looking at the media.

Two modes (``validator_parameters.questions_per_call``):

- ``0`` (default): all questions of a row in one call; the judge replies with JSON
  ``{"answers": [{"question_id", "answer"}]}`` (structured output where the provider supports it, with
  the built-in prompt) or, as the Vertex AI Gecko sample asks, ``<question> Question: … Verdict: yes
  </question>`` blocks (:mod:`autorater_pipelines.gecko.replies`): JSON answers are matched by
  ``question_id``; blocks by the id they name, else by order with the echoed question checked, never a
  verdict given to another question. Replay key: the ``id_columns`` values (``sample_index`` optional).
- ``1``: one call per question; the reply is the answer itself, so its first token's
  log-probabilities (``logprobs`` parameter) give a probability per choice. Replay key: the
  ``id_columns`` values plus ``question_id`` (``sample_index`` optional) — docs/gecko.md "Gecko replay files".

``sampling_count`` > 1 repeats every call (``sample_index`` 0, 1, …); the scorer votes.

Validation row = rubric row + ``answers``: ``{question_id: [sample, ...]}`` with sample
``{"sample_index", "verdict" (answer text as given, or None), "raw" (whole reply, one-question mode),
"error" ({"kind", "message"} or None), "choice_probs" ({choice: p} or None)}``, plus
``raw_responses`` (all-questions mode: ``[{"sample_index", "text", "error"}]``) and ``validator``
(``{"model", "questions_per_call", "sampling_count"}``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from autorater_pipelines.evaluation.reasoning import UnfinishedReasoning, answer_after_reasoning
from autorater_pipelines.gecko import prompts, replies, templates
from autorater_pipelines.gecko._common import (
    MEDIA_REFUSED,
    NOT_CALLED,
    StageResult,
    call_model,
    check_media_type,
    check_rows,
    error_row,
    id_values,
)
from autorater_pipelines.gecko.answer_matching import choice_label, choice_probabilities, is_yes_no
from autorater_pipelines.gecko.media import MediaError, resolve_media
from autorater_pipelines.gecko.media_probe import MEDIA_UNSEEN, run_probe
from autorater_pipelines.gecko.params import Validator
from autorater_pipelines.models import ModelOutput, ModelRequest

__all__ = ["parse_all_answers", "validate", "validator_template"]

logger = logging.getLogger(__name__)

UNPARSEABLE = "unparseable_response"
_MEDIA_REASON = "media_input_not_supported"  # ModelError.reason of an endpoint that refuses images/videos
_DESC = "gecko validation"

parse_all_answers = replies.parse_json_answers


def _question_view(qa: Mapping[str, Any]) -> dict[str, Any]:
    choices = list(qa.get("choices") or [])
    return {
        "question_id": qa["question_id"],
        "question": qa["question"],
        "options": [{"label": choice_label(choices, i), "text": c} for i, c in enumerate(choices)],
        "yes_no": bool(choices) and is_yes_no(choices),
    }


def _error(output: ModelOutput) -> dict[str, str]:
    kind = output.error.kind.value if output.error else "blocked"
    message = output.error.message if output.error else "the model returned no text"
    return {"kind": kind, "message": message}


def _sample(
    index: int,
    verdict: Any = None,
    raw: str | None = None,
    error: dict | None = None,
    probs: dict[str, float] | None = None,
) -> dict[str, Any]:
    text = None if verdict is None else (verdict if isinstance(verdict, str) else _scalar_text(verdict))
    return {"sample_index": index, "verdict": text, "raw": raw, "error": error, "choice_probs": probs}


def _scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def validate(
    rows: Sequence[Mapping[str, Any]],
    *,
    id_columns: Sequence[str],
    media_column: str,
    media_type: str,
    validator: Validator,
    base_dir: str | os.PathLike[str] | None = None,
    prompt_column: str | None = None,
) -> StageResult:
    """Ask the validator model every rubric question about each row's media.

    Args:
        rows: Rubric rows (from :func:`generate_rubrics` or :func:`parse_supplied_rubrics`).
        id_columns: Columns that identify a row (and key replay recordings).
        media_column: Column with the image/video (see :mod:`autorater_pipelines.gecko.media`).
        media_type: ``image`` or ``video``.
        validator: The stage (:class:`~autorater_pipelines.gecko.params.Validator`, e.g.
            ``Validator.of("gemini-2.5-flash", {"questions_per_call": 1, "logprobs": 5})``): model spec
            (docs/models.md "Model specs": ``gemini-2.5-flash``, ``openai/<model>``, ``replay/<path.jsonl>``),
            ``validator_parameters`` (``questions_per_call`` 0 or 1, ``sampling_count``, ``media_probe`` and any
            :class:`GenerateConfig` field: ``temperature``, ``logprobs``, ``base_url`` …), project, location, and the
            prompt-template override of :data:`prompts.VALIDATE_ALL_TEMPLATE` or
            :data:`prompts.VALIDATE_ONE_TEMPLATE` (depending on the mode), in Jinja2 or Vertex AI SDK syntax
            (:mod:`autorater_pipelines.gecko.templates`). With an override, the reply format is the template's:
            JSON answers and ``<question> … Verdict: …`` blocks are both read
            (:mod:`autorater_pipelines.gecko.replies`).
        base_dir: Directory for relative local media paths.
        prompt_column: Column with the generation prompt, for templates that show it (``{prompt}``).

    Returns:
        ``StageResult(rows, errors)``: validation rows (module docstring) in input order; rows whose
        media cannot be resolved are error rows (stage ``media``). Failed calls are kept in the
        samples; the scorer decides (``missing_answer_policy``). When the model calls stop early, a row with
        a question that got no answer because its calls were never made is an error row (stage
        ``validation``, kind ``budget``, message ``not called: <reason> (k of n questions answered …)``), never
        a row scored on the questions that happened to be asked (nor scored 0 under ``missing_answer_policy``
        ``zero``); its answers are in the response cache, so a re-run asks only the others. When the endpoint
        refuses the media (a text-only model; the model layer stops at its first such answer), every row is an
        error row of kind ``media_not_supported`` with that one message, and no row is validated. Before the
        questions, the validator answers the media probe (:mod:`autorater_pipelines.gecko.media_probe`); when it
        fails under ``media_probe: "error"``, every row is an error row of kind ``media_not_seen`` with the probe's
        message (naming the model and the endpoint), and no row is validated.

    Raises:
        InputError: bad parameters, template, media column or id columns.
        ModelCallError: the process got SIGTERM.

    """
    media_type = check_media_type(media_type)
    check_rows(rows, id_columns=id_columns, required={"media_column": media_column})
    options = validator.options
    one, count = validator.one_question_per_call, options.sampling_count
    config = validator.generate_config()
    if config.logprobs and not one:
        logger.warning("validator_parameters.logprobs is only used with questions_per_call=1; ignored")
    template = validator_template(
        validator, prompt_column=prompt_column, media_column=media_column, media_type=media_type
    )
    plan = _Plan([], [], [], [])
    shape = _Shape(id_columns, media_column, media_type, base_dir, prompt_column, template, one, count)
    for row in rows:
        _plan_row(plan, row, shape)
    model = validator.get_model()
    probe: dict[str, Any] | None = None
    outputs: list[ModelOutput] = []
    if plan.requests:  # first, does the validator see media at all (gecko/media_probe.py)
        probe, refused_probe = run_probe(model, mode=options.media_probe, media_type=media_type)
        if probe["status"] == "failed" and options.media_probe == "error" and refused_probe is None:
            unseen = [
                error_row(row, id_columns, stage="validation", kind=MEDIA_UNSEEN, message=probe["message"])
                for row in plan.rows
            ]
            return StageResult([], plan.errors + unseen)
        outputs = [refused_probe] if refused_probe is not None else call_model(model, plan.requests, desc=_DESC)
    refused = next((o.error for o in outputs if o.error is not None and o.error.reason == _MEDIA_REASON), None)
    if refused is not None:  # a text-only model: none of its answers looked at the media
        rows_refused = [
            error_row(row, id_columns, stage="validation", kind=MEDIA_REFUSED, message=refused.message)
            for row in plan.rows
        ]
        return StageResult([], plan.errors + rows_refused)
    answers: list[dict[str, list[dict[str, Any]]]] = [{qa["question_id"]: [] for qa in r["qas"]} for r in plan.rows]
    raw_responses: list[list[dict[str, Any]]] = [[] for _ in plan.rows]
    for (position, qid, s), output in zip(plan.slots, outputs, strict=True):
        qas = plan.rows[position]["qas"]
        if qid is not None:
            qa = next(q for q in qas if q["question_id"] == qid)
            answers[position][qid].append(_one_sample(s, output, qa, bool(config.logprobs)))
        else:
            raw_responses[position].append(
                {"sample_index": s, "text": output.text, "error": None if output.ok else _error(output)}
            )
            for q, sample in _all_samples(s, output, qas).items():
                answers[position][q].append(sample)

    record = {"model": validator.model, "questions_per_call": options.questions_per_call, "sampling_count": count}
    if probe is not None:
        record["media_probe"] = probe
    out = []
    for position, row in enumerate(plan.rows):
        not_called = _not_called(answers[position])
        if not_called:
            plan.errors.append(error_row(row, id_columns, stage="validation", kind=NOT_CALLED, message=not_called))
            continue
        result = {**row, "answers": answers[position], "validator": record}
        if not one:
            result["raw_responses"] = raw_responses[position]
        out.append(result)
    return StageResult(out, plan.errors)


def validator_template(
    validator: Validator,
    *,
    prompt_column: str | None = None,
    media_column: str | None = None,
    media_type: str = "image",
) -> templates.GeckoTemplate:
    """Compile the validator prompt: the stage's ``prompt_template`` (Jinja2 or Vertex SDK style) or the built-in.

    The built-in template is that of the stage's mode (``questions_per_call``).

    Variables: ``media_type``, ``rubrics`` (Vertex SDK question lines), ``questions`` (all questions of the
    row) or, with one question per call, ``question``; ``prompt`` when ``prompt_column`` is set; ``{image}`` /
    ``{video}`` (or ``{<media_column>}``) place the media (Vertex syntax). With ``media_type`` ``text``:
    ``response`` (the response text; ``{<media_column>}`` too) and ``prompt`` ("" without ``prompt_column``), and
    the built-in templates are the text ones (:data:`autorater_pipelines.gecko.prompts.VALIDATE_TEXT_ALL_TEMPLATE`).

    Raises:
        InputError: the template does not compile, uses a variable it does not get, or never shows the questions.

    """
    text, one = validator.prompt_template, validator.one_question_per_call
    variables = {"media_type", "rubrics", "image", "video", "question" if one else "questions"}
    text_medium = media_type == "text"
    if prompt_column or text_medium:
        variables.add("prompt")
    if text_medium:
        variables.add("response")
        default = prompts.VALIDATE_TEXT_ONE_TEMPLATE if one else prompts.VALIDATE_TEXT_ALL_TEMPLATE
    else:
        default = prompts.VALIDATE_ONE_TEMPLATE if one else prompts.VALIDATE_ALL_TEMPLATE
    media_name = "response" if text_medium else "image"
    return templates.compile_template(
        text or default,
        source="validator_prompt_template",
        variables=variables,
        required=[("question", "rubrics") if one else ("questions", "rubrics")],
        needs="the question" if one else "the questions",
        hints={"prompt": "set prompt_column to the column with the generation prompt"},
        builtin=not text,
        aliases={c: n for c, n in ((prompt_column, "prompt"), (media_column, media_name)) if c},
    )


class _Plan(NamedTuple):
    requests: list[ModelRequest]
    slots: list[tuple[int, str | None, int]]  # (position in rows, question_id or None, sample_index)
    rows: list[Mapping[str, Any]]  # rows with usable media, in input order
    errors: list[dict[str, Any]]


class _Shape(NamedTuple):
    """What planning a row's calls needs besides the row: its columns, the compiled template, the mode."""

    id_columns: Sequence[str]
    media_column: str
    media_type: str
    base_dir: str | os.PathLike[str] | None
    prompt_column: str | None
    template: templates.GeckoTemplate
    one: bool
    samples: int


def _plan_row(plan: _Plan, row: Mapping[str, Any], shape: _Shape) -> None:
    id_columns, media_column, media_type, base_dir, prompt_column, template, one, count = shape
    qas = row.get("qas")
    if not isinstance(qas, list) or not qas:
        message = f"row has no rubric questions ('qas'), got {qas!r}"
        plan.errors.append(error_row(row, id_columns, stage="validation", kind="invalid_rubric", message=message))
        return
    values: dict[str, Any] = {"media_type": media_type}
    try:
        if media_type == "text":  # the cell is the response itself: no media read
            media: tuple[Any, ...] = ()
            values["response"] = _response_text(row.get(media_column), media_column)
            values["prompt"] = ""
        else:
            media = resolve_media(row.get(media_column), media_type=media_type, base_dir=base_dir)
    except MediaError as exc:
        plan.errors.append(error_row(row, id_columns, stage="media", kind=exc.kind, message=str(exc)))
        return
    ids = id_values(row, id_columns)
    if prompt_column:
        values["prompt"] = "" if row.get(prompt_column) is None else str(row.get(prompt_column))
    position = len(plan.rows)
    plan.rows.append(row)
    # The JSON schema goes with the built-in prompt only: an override defines its own reply format.
    schema = prompts.VALIDATE_ALL_SCHEMA if template.builtin and not one else None
    calls = [[qa] for qa in qas] if one else [qas]
    for asked in calls:
        views = [_question_view(qa) for qa in asked]
        if one:
            question = views[0] if template.syntax == "jinja" else views[0]["question"]
            parts = template.render(media=media, question=question, rubrics=templates.rubrics_text(asked), **values)
        else:
            parts = template.render(media=media, questions=views, rubrics=templates.rubrics_text(asked), **values)
        qid = asked[0]["question_id"] if one else None
        key = {**ids, "question_id": qid} if one else dict(ids)
        for s in range(count):
            plan.requests.append(ModelRequest(parts=parts, key=key, response_schema=schema, sample_index=s))
            plan.slots.append((position, qid, s))


def _response_text(value: Any, media_column: str) -> str:
    """The response text of a ``media_type: "text"`` row (MediaError ``missing_media`` when there is none)."""
    if isinstance(value, str) and value.strip():
        return value
    raise MediaError(
        "missing_media",
        f"no response text in column {media_column!r} (media_type text), got {value!r}; an empty response is not "
        "scored (write a placeholder such as '(no response)' to score it as given)",
    )


def _not_called(answers: Mapping[str, list[dict[str, Any]]]) -> str:
    """The error message of a row some of whose questions have no answer because calls were not made, or ``""``."""
    unanswered = [q for q, samples in answers.items() if not any(x["error"] is None for x in samples)]
    reasons = [
        x["error"]["message"]
        for q in unanswered
        for x in answers[q]
        if x["error"] is not None and x["error"]["kind"] == NOT_CALLED
    ]
    if not reasons:
        return ""
    answered = len(answers) - len(unanswered)
    return (
        f"{reasons[0]} ({answered} of {len(answers)} questions answered; a re-run with the same response cache asks "
        "only the others)"
    )


def _one_sample(s: int, output: ModelOutput, qa: Mapping[str, Any], logprobs: bool) -> dict[str, Any]:
    if not output.ok:
        return _sample(s, error=_error(output))
    try:  # <think> drafts are not answers
        text = answer_after_reasoning(output.text or "")[1]
    except UnfinishedReasoning as exc:
        return _sample(s, raw=output.text, error={"kind": UNPARSEABLE, "message": str(exc)})
    if replies.has_blocks(text):  # "<question> Question: … Verdict: yes </question>" for a single question
        read = replies.parse_reply(text, [(qa["question_id"], qa["question"])])
        if read.problems:
            kind, reason = read.problems[qa["question_id"]]
            return _sample(s, raw=output.text, error={"kind": kind, "message": reason})
        return _sample(s, verdict=read.answers[qa["question_id"]], raw=output.text)
    probs = choice_probabilities(output.logprobs, list(qa.get("choices") or []), text) if logprobs else None
    return _sample(s, verdict=text.strip(), raw=output.text, probs=probs)


def _all_samples(s: int, output: ModelOutput, qas: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    question_ids = [qa["question_id"] for qa in qas]
    if not output.ok:
        return {q: _sample(s, error=_error(output)) for q in question_ids}
    try:
        read = replies.parse_reply(output.text, [(qa["question_id"], qa["question"]) for qa in qas])
    except replies.ReplyError as exc:
        return {q: _sample(s, error={"kind": UNPARSEABLE, "message": str(exc)}) for q in question_ids}
    out = {}
    for q in question_ids:
        if q in read.answers:
            out[q] = _sample(s, verdict=read.answers[q])
        else:
            kind, reason = read.problems[q]
            out[q] = _sample(s, error={"kind": kind, "message": reason})
    return out
