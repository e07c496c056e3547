"""Rubric shape: keyword markup, questions, dependencies; parsing generated and supplied rubrics.

A rubric (docs/gecko.md, the `rubrics.jsonl` layout) is ``{"keywords": str | None, "qas": [qa, ...]}`` where
``keywords`` is the prompt with content marked as ``{1}[a red] {2}[bicycle]`` (Gecko, arXiv
2404.16820) and each qa is::

    {"question_id": str, "question": str, "question_type": str, "choices": [str, ...],
     "answer": str (one of choices, or free text when choices is empty), "justification": str | None,
     "dependencies": [question_id, ...], "keyword_id": int | None}

``dependencies`` are parent questions in the sense of DSG (arXiv 2310.18235): a question about an
attribute of an object depends on the question whether the object is there.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from autorater_pipelines.evaluation.values import is_blank
from autorater_pipelines.gecko import vertex_rubrics
from autorater_pipelines.gecko._common import (
    RubricError,
    StageResult,
    check_rows,
    error_row,
    id_values,
)
from autorater_pipelines.gecko._rubric_fields import (
    _check_dependencies,
    _keyword_of,
    _question_id,
    _question_type,
    keyword_coverage,
    parse_dependencies,
    parse_keywords,
)
from autorater_pipelines.gecko.answer_matching import YES_NO, normalize, parse_choices, resolve
from autorater_pipelines.gecko.replies import normalize_question
from autorater_pipelines.unencodable import replace_unencodable

__all__ = [
    "MAX_QUESTIONS_PER_RUBRIC",
    "RubricError",
    "keyword_coverage",
    "normalize_generated_rubric",
    "normalize_supplied_rubric",
    "parse_dependencies",
    "parse_keywords",
    "parse_supplied_rubrics",
]

logger = logging.getLogger(__name__)

_RUBRIC_FIELDS = ("keywords", "qas", "rubric_warnings")

MAX_QUESTIONS_PER_RUBRIC = 100
"""Most questions one rubric (generated or supplied) may have; a longer one fails its row (``invalid_rubric``).

Published rubrics have 3-40 questions per prompt (TIFA, DSG, Gecko); 1,200 questions are a runaway generator
or a broken file, and would cost 1,200 validator answers per row and sample."""


def _check_size(count: int, source: str) -> None:
    if count > MAX_QUESTIONS_PER_RUBRIC:
        raise RubricError(
            "invalid_rubric",
            f"the {source} rubric has {count} questions, more than the limit of {MAX_QUESTIONS_PER_RUBRIC} per rubric",
        )


def _repeated_questions(qas: Sequence[Mapping[str, Any]]) -> list[str]:
    """Questions whose text (case, punctuation and spacing ignored) repeats an earlier question's."""
    first: dict[str, str] = {}
    repeats = []
    for qa in qas:
        key = normalize_question(qa["question"])
        if key in first:
            repeats.append(f"{qa['question_id']} repeats {first[key]} ({qa['question']!r})")
        first.setdefault(key, qa["question_id"])
    return repeats


def normalize_generated_rubric(data: Any, *, media_type: str) -> dict[str, Any]:
    """Check and normalize a rubric parsed from the rubric generator's JSON.

    Questions that cannot be used (no question text, an answer that is not one of the choices,
    fewer than two choices for video) are dropped with a warning; question ids are assigned
    ``q1``, ``q2`` … in order; an unknown ``question_type`` is kept as ``other`` with a warning.

    Args:
        data: ``{"keywords": str, "qas": [{"keyword_id", "question", "question_type", "choices"
            (video: list or {"a": …}), "answer", "justification"}]}``.
        media_type: ``image`` (yes/no questions) or ``video`` (multiple choice a–d).

    Returns:
        ``{"keywords", "qas", "rubric_warnings"}`` (shape in the module docstring).

    Raises:
        RubricError: not an object with a ``qas`` list, more than :data:`MAX_QUESTIONS_PER_RUBRIC` questions,
            two questions with the same text (case and punctuation aside), or no usable question left.

    """
    if not isinstance(data, Mapping) or not isinstance(data.get("qas"), list):
        raise RubricError("invalid_rubric", f"expected an object with a 'qas' list, got {str(data)[:200]!r}")
    _check_size(len(data["qas"]), "generated")
    warnings: list[str] = []
    markup = data.get("keywords")
    keywords = parse_keywords(markup)
    if not keywords:
        warnings.append(f"no {{n}}[...] keyword markup in keywords {markup!r}")
    qas: list[dict[str, Any]] = []
    for i, item in enumerate(data["qas"], start=1):
        where = f"generated question #{i}"
        question = item.get("question") if isinstance(item, Mapping) else None
        if not isinstance(question, str) or not question.strip():
            warnings.append(f"{where}: dropped, no question text in {item!r}")
            continue
        if media_type in ("image", "text"):  # text rubrics pass or fail: yes/no
            choices: tuple[str, ...] = YES_NO
        else:
            try:
                choices = parse_choices(item.get("choices"))
            except ValueError as exc:
                warnings.append(f"{where}: dropped, {exc}")
                continue
            if len(choices) < 2:
                warnings.append(f"{where}: dropped, needs at least 2 choices, got {item.get('choices')!r}")
                continue
        idx = resolve(item.get("answer"), choices)
        if idx is None:
            warnings.append(f"{where}: dropped, answer {item.get('answer')!r} is not one of {list(choices)}")
            continue
        qid = f"q{len(qas) + 1}"
        justification = item.get("justification")
        qas.append(
            {
                "question_id": qid,
                "question": question.strip(),
                "question_type": _question_type(item.get("question_type"), restrict=True, qid=qid, warnings=warnings),
                "choices": list(choices),
                "answer": choices[idx],
                "justification": justification if isinstance(justification, str) else None,
                "dependencies": [],
                "keyword_id": _keyword_of(item, keywords, qid, warnings),
            }
        )
    if not qas:
        reasons = "; ".join(warnings)
        raise RubricError("empty_rubric", f"the generated rubric has no usable question; {reasons}")
    if repeats := _repeated_questions(qas):  # one check counted twice in final_score
        raise RubricError(
            "invalid_rubric",
            f"the generated rubric asks the same question twice: {'; '.join(repeats[:5])}"
            + (f" and {len(repeats) - 5} more" if len(repeats) > 5 else ""),
        )
    return {"keywords": markup if isinstance(markup, str) else None, "qas": qas, "rubric_warnings": warnings}


def normalize_supplied_rubric(value: Any, *, rubric_group: str = "") -> dict[str, Any]:
    """Check and normalize a rubric given in the dataset (``rubrics_column``).

    Supplied rubrics are ground truth, so any bad question fails the whole row instead of being
    dropped. ``question_type`` may be any string (e.g. TIFA's ``animal/human``); a missing
    ``question_id`` becomes ``q<position>``; integer ids become strings; with no ``choices`` and a
    yes/no answer the choices are ``["yes", "no"]``, otherwise no choices means free-form
    (normalized exact match). Malformed dependency tokens are ignored with a warning.

    Args:
        value: A JSON string, a ``{"keywords": …, "qas": [...]}`` object, a bare list of qas, or Vertex AI
            ``rubric_groups`` ``{group: [Rubric, ...]}``
            (:func:`autorater_pipelines.gecko.vertex_rubrics.rubric_from_groups`: each ``rubric_id`` is a
            question id, each description a yes/no question expecting ``yes``).
        rubric_group: Which group of ``rubric_groups`` to use ("" = the only one).

    Returns:
        ``{"keywords", "qas", "rubric_warnings"}`` (shape in the module docstring).

    Raises:
        RubricError: not JSON, wrong shape, a question without text or answer, an answer that is
            not one of its choices, duplicate question ids, no questions or more than
            :data:`MAX_QUESTIONS_PER_RUBRIC`. A question text repeated under another id is kept with a warning.

    """
    value = _rubric_object(value, rubric_group)
    _check_size(len(value["qas"]), "supplied")
    warnings: list[str] = []
    markup = value.get("keywords")
    keywords = parse_keywords(markup)
    qas = [_supplied_question(i, item, keywords, warnings) for i, item in enumerate(value["qas"], start=1)]
    if not qas:
        raise RubricError("empty_rubric", "the supplied rubric has no questions")
    ids = [qa["question_id"] for qa in qas]
    duplicates = sorted({q for q in ids if ids.count(q) > 1})
    if duplicates:
        raise RubricError("invalid_rubric", f"duplicate question_id(s) {duplicates}")
    # Kept with a warning: ground-truth rubrics repeat a question for two entities (DSG TIFA160 asks "Is there a
    # woman?" once per woman, each with its own id and dependants).
    warnings.extend(f"question {r}: same text, kept and scored on its own" for r in _repeated_questions(qas))
    _check_dependencies(qas, warnings)
    return {"keywords": markup if isinstance(markup, str) else None, "qas": qas, "rubric_warnings": warnings}


def _rubric_object(value: Any, rubric_group: str = "") -> Mapping[str, Any]:
    """A supplied rubric as a ``{"keywords"?, "qas": [...]}`` mapping.

    Parsed from JSON; a bare list wrapped; Vertex ``rubric_groups`` converted.
    """
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise RubricError(
                "invalid_rubric", f"rubric is not JSON ({exc.msg} at char {exc.pos}): {value[:120]!r}"
            ) from None
        value, replaced = replace_unencodable(value)
        if replaced:
            logger.warning(
                "a supplied rubric's JSON held %d lone UTF-16 surrogate escape(s): replaced by U+FFFD", replaced
            )
    if isinstance(value, list):
        value = {"qas": value}
    if vertex_rubrics.is_rubric_groups(value):
        value = vertex_rubrics.rubric_from_groups(value, rubric_group)
    if not isinstance(value, Mapping) or not isinstance(value.get("qas"), list):
        raise RubricError(
            "invalid_rubric",
            f"rubric must be an object with a 'qas' list or a list of questions, got {str(value)[:200]!r}",
        )
    return value


def _supplied_question(i: int, item: Any, keywords: Mapping[int, str], warnings: list[str]) -> dict[str, Any]:
    """Question #``i`` of a supplied rubric, normalized (any problem fails the row); appends to ``warnings``."""
    if not isinstance(item, Mapping):
        raise RubricError("invalid_rubric", f"question #{i} is not an object: {item!r}")
    qid = _question_id(item.get("question_id")) or f"q{i}"
    question = item.get("question")
    if not isinstance(question, str) or not question.strip():
        raise RubricError("invalid_rubric", f"question {qid}: no question text, got {question!r}")
    answer = item.get("answer")
    if is_blank(answer):
        raise RubricError("invalid_rubric", f"question {qid}: no expected answer")
    try:
        choices = parse_choices(item.get("choices"))
    except ValueError as exc:
        raise RubricError("invalid_rubric", f"question {qid}: {exc}") from None
    if not choices and normalize(answer) in YES_NO:
        choices = YES_NO
    if choices:
        idx = resolve(answer, choices)
        if idx is None:
            msg = f"question {qid}: answer {answer!r} is not one of the choices {list(choices)}"
            raise RubricError("invalid_rubric", msg)
        answer = choices[idx]
    parents, dep_warnings = parse_dependencies(item.get("dependencies"))
    warnings += [f"question {qid}: {w}" for w in dep_warnings]
    justification = item.get("justification")
    question_row = {
        "question_id": qid,
        "question": question.strip(),
        "question_type": _question_type(item.get("question_type"), restrict=False, qid=qid, warnings=warnings),
        "choices": list(choices),
        "answer": str(answer).strip(),
        "justification": justification if isinstance(justification, str) else None,
        "dependencies": parents,
        "keyword_id": _keyword_of(item, keywords, qid, warnings),
    }
    if item.get("importance") is not None:  # a Vertex rubric's importance, written back in rubric_verdicts
        question_row["importance"] = item["importance"]
    return question_row


def parse_supplied_rubrics(
    rows: Sequence[Mapping[str, Any]],
    *,
    id_columns: Sequence[str],
    rubrics_column: str,
    rubric_group: str = "",
) -> StageResult:
    """Read the rubrics given in ``rubrics_column`` instead of generating them.

    Args:
        rows: Dataset rows (JSON-compatible dicts).
        id_columns: Columns that identify a row.
        rubrics_column: Column holding each row's rubric (see :func:`normalize_supplied_rubric`).
        rubric_group: The group of a Vertex ``rubric_groups`` column to use ("" = the only group).

    Returns:
        ``StageResult(rows, errors)``: each rubric row is the input row without ``rubrics_column``
        plus ``keywords``, ``qas`` and ``rubric_warnings``; a row whose rubric is missing or
        invalid becomes an error row (stage ``rubrics``, kind ``missing_rubric``,
        ``invalid_rubric`` or ``empty_rubric``).

    Raises:
        InputError: the rubrics or id columns are absent, or ids are not unique.

    """
    check_rows(rows, id_columns=id_columns, required={"rubrics_column": rubrics_column})
    out: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    for row in rows:
        value = row.get(rubrics_column)
        if is_blank(value):
            errors.append(
                error_row(
                    row,
                    id_columns,
                    stage="rubrics",
                    kind="missing_rubric",
                    message=f"no rubric in column {rubrics_column!r}",
                )
            )
            continue
        try:
            rubric = normalize_supplied_rubric(value, rubric_group=rubric_group)
        except RubricError as exc:
            errors.append(error_row(row, id_columns, stage="rubrics", kind=exc.kind, message=str(exc)))
            continue
        if rubric["rubric_warnings"]:
            logger.warning("rubric of %s: %s", id_values(row, id_columns), "; ".join(rubric["rubric_warnings"]))
        out.append(rubric_row(row, rubric, drop=(rubrics_column,)))
    return StageResult(out, errors)


def rubric_row(row: Mapping[str, Any], rubric: Mapping[str, Any], *, drop: Sequence[str] = ()) -> dict[str, Any]:
    """Return the input row (without ``drop`` columns) extended with the rubric fields."""
    out = {k: v for k, v in row.items() if k not in drop}
    out.update({k: rubric[k] for k in _RUBRIC_FIELDS})
    return out
