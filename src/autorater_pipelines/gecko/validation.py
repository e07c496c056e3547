"""Validation: a multimodal judge answers each rubric question while looking at the media.

Two modes (``validator_parameters.questions_per_call``):

- ``0`` (default): all questions of a row in one call; the judge replies with JSON
  ``{"answers": [{"question_id", "answer"}]}`` (structured output where the provider supports it,
  tolerant parsing otherwise). Answers are matched to questions by ``question_id`` only, never by
  echoed question text. Replay key: the ``id_columns`` values (``sample_index`` optional).
- ``1``: one call per question; the reply is the answer itself, so its first token's
  log-probabilities (``logprobs`` parameter) give a probability per choice. Replay key: the
  ``id_columns`` values plus ``question_id`` (``sample_index`` optional) — DESIGN.md replay format.

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

from autorater_pipelines.errors import InputError
from autorater_pipelines.evaluation.json_extraction import JSONExtractionError, extract_json
from autorater_pipelines.gecko import prompts
from autorater_pipelines.gecko._common import (
    StageResult,
    check_media_type,
    check_rows,
    error_row,
    id_values,
    split_parameters,
)
from autorater_pipelines.gecko.media import MediaError, resolve_media
from autorater_pipelines.gecko.verdicts import choice_label, choice_probabilities, is_yes_no
from autorater_pipelines.models import GenerateConfig, ModelOutput, ModelRequest, get_model

__all__ = ["VALIDATOR_DEFAULTS", "parse_all_answers", "validate", "validator_settings"]

logger = logging.getLogger(__name__)

VALIDATOR_DEFAULTS: dict[str, Any] = {"questions_per_call": 0, "sampling_count": 1}
"""Validator keys of ``validator_parameters`` besides the model settings, with their defaults."""

UNPARSEABLE = "unparseable_response"
MISSING_QUESTION = "missing_question"


def validator_settings(parameters: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split and check ``validator_parameters``.

    Returns:
        ``({"questions_per_call": 0|1, "sampling_count": int >= 1}, model settings)``.

    Raises:
        InputError: an unknown key, ``questions_per_call`` not 0 or 1, or ``sampling_count`` < 1.

    """
    own, rest = split_parameters(parameters, own=VALIDATOR_DEFAULTS, source="validator_parameters")
    qpc, count = own["questions_per_call"], own["sampling_count"]
    if qpc is None:
        qpc = 0
    if isinstance(qpc, bool) or qpc not in (0, 1):
        raise InputError(
            f"questions_per_call must be 0 (all questions of a row in one call) or 1 (one question per "
            f"call), got {qpc!r}",
            source="validator_parameters",
        )
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        msg = f"sampling_count must be an integer >= 1, got {count!r}"
        raise InputError(msg, source="validator_parameters")
    return {"questions_per_call": int(qpc), "sampling_count": count}, rest


def _question_view(qa: Mapping[str, Any]) -> dict[str, Any]:
    choices = list(qa.get("choices") or [])
    return {
        "question_id": qa["question_id"],
        "question": qa["question"],
        "options": [{"label": choice_label(choices, i), "text": c} for i, c in enumerate(choices)],
        "yes_no": bool(choices) and is_yes_no(choices),
    }


def _id_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip().strip("[]()").strip().casefold()


def parse_all_answers(text: str, question_ids: Sequence[str]) -> dict[str, Any]:
    """Extract ``{question_id: answer}`` from an all-questions validator reply.

    Accepts ``{"answers": [{"question_id": …, "answer": …}]}``, a bare list of such items, or a
    ``{question_id: answer}`` object, wrapped in prose or code fences. Ids are compared after
    trimming brackets and case; ids not asked for are ignored; an id given twice with different
    answers is left out (ambiguous).

    Raises:
        JSONExtractionError: the reply holds no JSON object or array.

    """
    data: Any = None
    try:
        data = extract_json(text, expect=dict)
    except JSONExtractionError:
        pass
    if data is None or ("answers" not in data and "question_id" in data):
        try:  # a bare list of items (a dict found first would be its first item)
            data = extract_json(text, expect=list)
        except JSONExtractionError:
            if data is None:
                raise
    wanted = {_id_text(q): q for q in question_ids}
    if isinstance(data, Mapping) and isinstance(data.get("answers"), list):
        items = data["answers"]
    elif isinstance(data, Mapping) and "question_id" in data:
        items = [data]
    elif isinstance(data, Mapping):
        items = [{"question_id": k, "answer": v} for k, v in data.items()]
    else:
        items = data
    found: dict[str, Any] = {}
    ambiguous: set[str] = set()
    for item in items:
        if not isinstance(item, Mapping):
            continue
        qid = wanted.get(_id_text(item.get("question_id", item.get("id", ""))))
        answer = item.get("answer", item.get("verdict"))
        if qid is None or isinstance(answer, (dict, list)):
            continue
        if qid in found and found[qid] != answer:
            ambiguous.add(qid)
        found[qid] = answer
    return {q: a for q, a in found.items() if q not in ambiguous}


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
    model_spec: str,
    parameters: Mapping[str, Any] | None = None,
    project: str | None = None,
    location: str | None = None,
    prompt_template: str | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> StageResult:
    """Ask the validator model every rubric question about each row's media.

    Args:
        rows: Rubric rows (from :func:`generate_rubrics` or :func:`parse_supplied_rubrics`).
        id_columns: Columns that identify a row (and key replay recordings).
        media_column: Column with the image/video (see :mod:`autorater_pipelines.gecko.media`).
        media_type: ``image`` or ``video``.
        model_spec: Validator model spec (DESIGN.md model specs), e.g. ``gemini-2.5-flash``,
            ``openai/<model>``, ``replay/<path.jsonl>``.
        parameters: ``validator_parameters``: ``questions_per_call`` (0 or 1), ``sampling_count``, and
            any :class:`GenerateConfig` field (``temperature``, ``logprobs``, ``base_url`` …).
        project: Google Cloud project for Vertex AI.
        location: Google Cloud region for Vertex AI.
        prompt_template: Jinja2 override of :data:`prompts.VALIDATE_ALL_TEMPLATE` or
            :data:`prompts.VALIDATE_ONE_TEMPLATE` (depending on the mode).
        base_dir: Directory for relative local media paths.

    Returns:
        ``StageResult(rows, errors)``: validation rows (module docstring) in input order; rows whose
        media cannot be resolved are error rows (stage ``media``). Failed calls are kept in the
        samples; the scorer decides (``missing_answer_policy``).

    Raises:
        InputError: bad parameters, template, media column or id columns.
        ModelCallError: the run stopped after too many consecutive failed calls.

    """
    media_type = check_media_type(media_type)
    check_rows(rows, id_columns=id_columns, required={"media_column": media_column})
    settings, model_params = validator_settings(parameters)
    one = settings["questions_per_call"] == 1
    count = settings["sampling_count"]
    config = GenerateConfig.from_params(model_params, source="validator_parameters", project=project, location=location)
    if config.logprobs and not one:
        logger.warning("validator_parameters.logprobs is only used with questions_per_call=1; ignored")
    default = prompts.VALIDATE_ONE_TEMPLATE if one else prompts.VALIDATE_ALL_TEMPLATE
    template = prompts.compile_template(prompt_template or default, source="validator_prompt_template")

    plan = _plan(
        rows,
        id_columns=id_columns,
        media_column=media_column,
        media_type=media_type,
        base_dir=base_dir,
        template=template,
        one=one,
        count=count,
    )
    model = get_model(model_spec, config)
    outputs = model.generate(plan.requests, desc="gecko validation") if plan.requests else []
    answers: list[dict[str, list[dict[str, Any]]]] = [{qa["question_id"]: [] for qa in r["qas"]} for r in plan.rows]
    raw_responses: list[list[dict[str, Any]]] = [[] for _ in plan.rows]
    for (position, qid, s), output in zip(plan.slots, outputs, strict=True):
        if qid is not None:
            choices = plan.choices[position][qid]
            answers[position][qid].append(_one_sample(s, output, choices, bool(config.logprobs)))
        else:
            raw_responses[position].append(
                {"sample_index": s, "text": output.text, "error": None if output.ok else _error(output)}
            )
            for q, sample in _all_samples(s, output, list(answers[position])).items():
                answers[position][q].append(sample)

    validator = {"model": model_spec, **settings}
    out = []
    for position, row in enumerate(plan.rows):
        result = {**row, "answers": answers[position], "validator": validator}
        if not one:
            result["raw_responses"] = raw_responses[position]
        out.append(result)
    return StageResult(out, plan.errors)


class _Plan(NamedTuple):
    requests: list[ModelRequest]
    slots: list[tuple[int, str | None, int]]  # (position in rows, question_id or None, sample_index)
    rows: list[Mapping[str, Any]]  # rows with usable media, in input order
    choices: list[dict[str, list[str]]]  # per kept row: question_id -> choices
    errors: list[dict[str, Any]]


def _plan(
    rows: Sequence[Mapping[str, Any]],
    *,
    id_columns: Sequence[str],
    media_column: str,
    media_type: str,
    base_dir: str | os.PathLike[str] | None,
    template: Any,
    one: bool,
    count: int,
) -> _Plan:
    plan = _Plan([], [], [], [], [])
    for row in rows:
        qas = row.get("qas")
        if not isinstance(qas, list) or not qas:
            plan.errors.append(
                error_row(
                    row,
                    id_columns,
                    stage="validation",
                    kind="invalid_rubric",
                    message=f"row has no rubric questions ('qas'), got {qas!r}",
                )
            )
            continue
        try:
            media = resolve_media(row.get(media_column), media_type=media_type, base_dir=base_dir)
        except MediaError as exc:
            plan.errors.append(error_row(row, id_columns, stage="media", kind=exc.kind, message=str(exc)))
            continue
        ids = id_values(row, id_columns)
        views = [_question_view(qa) for qa in qas]
        position = len(plan.rows)
        plan.rows.append(row)
        plan.choices.append({qa["question_id"]: list(qa.get("choices") or []) for qa in qas})
        if one:
            for view in views:
                text = prompts.render(
                    template, source="validator_prompt_template", media_type=media_type, question=view
                )
                key = {**ids, "question_id": view["question_id"]}
                for s in range(count):
                    plan.requests.append(ModelRequest(parts=(*media, text), key=key, sample_index=s))
                    plan.slots.append((position, view["question_id"], s))
        else:
            text = prompts.render(template, source="validator_prompt_template", media_type=media_type, questions=views)
            for s in range(count):
                plan.requests.append(
                    ModelRequest(
                        parts=(*media, text),
                        key=dict(ids),
                        response_schema=prompts.VALIDATE_ALL_SCHEMA,
                        sample_index=s,
                    )
                )
                plan.slots.append((position, None, s))
    return plan


def _one_sample(s: int, output: ModelOutput, choices: list[str], logprobs: bool) -> dict[str, Any]:
    if not output.ok:
        return _sample(s, error=_error(output))
    text = output.text or ""
    probs = choice_probabilities(output.logprobs, choices) if logprobs else None
    return _sample(s, verdict=text.strip(), raw=text, probs=probs)


def _all_samples(s: int, output: ModelOutput, question_ids: list[str]) -> dict[str, dict[str, Any]]:
    if not output.ok:
        return {q: _sample(s, error=_error(output)) for q in question_ids}
    try:
        found = parse_all_answers(output.text or "", question_ids)
    except JSONExtractionError as exc:
        return {q: _sample(s, error={"kind": UNPARSEABLE, "message": str(exc)}) for q in question_ids}
    missing = {
        "kind": MISSING_QUESTION,
        "message": "the reply has no (unambiguous) answer for this question_id",
    }
    return {
        q: _sample(s, verdict=found[q]) if found.get(q) is not None else _sample(s, error=missing) for q in question_ids
    }
