"""The fields of one rubric question: keyword markup, ids, types and dependencies (see :mod:`.rubrics`).

Parsing and checking what a question says about itself — its ``question_id``, ``question_type``,
``dependencies`` (DSG parents) and the ``{n}[...]`` keyword it checks — for both generated and supplied
rubrics; :mod:`autorater_pipelines.gecko.rubrics` assembles whole rubrics from them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from autorater_pipelines.evaluation.values import is_blank
from autorater_pipelines.gecko._common import IMAGE_QUESTION_TYPES, TEXT_QUESTION_TYPES

__all__ = ["keyword_coverage", "parse_dependencies", "parse_keywords"]

_KEYWORD = re.compile(r"\{(\d+)\}\[([^\[\]]*)\]")


def parse_keywords(markup: str | None) -> dict[int, str]:
    """Return ``{keyword id: keyword text}`` from ``{1}[a red] {2}[bicycle]`` markup ({} if none)."""
    if not isinstance(markup, str):
        return {}
    return {int(m.group(1)): m.group(2).strip() for m in _KEYWORD.finditer(markup)}


def keyword_coverage(keywords: str | None, qas: Sequence[Mapping[str, Any]]) -> float | None:
    """Fraction of marked keywords that at least one question checks (via ``keyword_id``).

    Returns:
        A value in [0, 1], or None when ``keywords`` holds no ``{n}[...]`` markup.

    """
    ids = parse_keywords(keywords)
    if not ids:
        return None
    covered = {qa.get("keyword_id") for qa in qas} & set(ids)
    return len(covered) / len(ids)


def _question_id(value: Any) -> str | None:
    if is_blank(value) or isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def parse_dependencies(value: Any) -> tuple[list[str], list[str]]:
    """Parse parent question ids from ``"1,2"``, ``2``, ``[1, 2]``; ``0``/empty means no parent.

    Tokens that are not integers or ids (DSG TIFA160 has ``"1, outside"``) are ignored with a
    warning rather than failing the row.

    Returns:
        ``(parent ids as strings, warnings)``.

    """
    if is_blank(value):
        return [], []
    tokens: list[Any]
    if isinstance(value, (list, tuple)):
        tokens = list(value)
    elif isinstance(value, str):
        tokens = [t for t in re.split(r"[,\s;]+", value) if t]
    else:
        tokens = [value]
    parents: list[str] = []
    warnings: list[str] = []
    for token in tokens:
        if isinstance(token, float) and not math.isnan(token) and token.is_integer():
            token = int(token)
        text = str(token).strip()
        if re.fullmatch(r"\d+", text):
            if int(text) != 0:
                parents.append(str(int(text)))
        elif re.fullmatch(r"[A-Za-z]+\d+", text):
            parents.append(text)
        else:
            warnings.append(f"ignored dependency token {text!r} in {value!r} (not a question id)")
    return list(dict.fromkeys(parents)), warnings


def _check_dependencies(qas: list[dict[str, Any]], warnings: list[str]) -> None:
    ids = {qa["question_id"] for qa in qas}
    for qa in qas:
        kept = []
        for parent in qa["dependencies"]:
            if parent == qa["question_id"] or parent not in ids:
                why = "itself" if parent == qa["question_id"] else "an unknown question"
                warnings.append(f"question {qa['question_id']}: ignored dependency {parent!r} on {why}")
            else:
                kept.append(parent)
        qa["dependencies"] = kept


def _question_type(value: Any, *, restrict: bool, qid: str, warnings: list[str]) -> str:
    qtype = "" if is_blank(value) else str(value).strip()
    if restrict:
        qtype = qtype.lower()
    if not qtype:
        warnings.append(f"question {qid}: no question_type; using 'other'")
        return "other"
    if restrict and qtype not in IMAGE_QUESTION_TYPES + TEXT_QUESTION_TYPES:
        allowed = list(dict.fromkeys(IMAGE_QUESTION_TYPES + TEXT_QUESTION_TYPES))
        warnings.append(f"question {qid}: question_type {qtype!r} is not one of {allowed}; kept as 'other'")
        return "other"
    return qtype


def _keyword_id(value: Any, keywords: Mapping[int, str], qid: str, warnings: list[str]) -> int | None:
    if is_blank(value) or not keywords:
        return None
    try:
        kid = int(str(value).strip().strip("{}"))
    except ValueError:
        kid = None
    if kid not in keywords:
        warnings.append(f"question {qid}: keyword_id {value!r} is not a marked keyword")
        return None
    return kid


def _keyword_of(item: Mapping[str, Any], keywords: Mapping[int, str], qid: str, warnings: list[str]) -> int | None:
    """The keyword a question checks: its ``keyword_id``, else its numeric ``question_id`` if it numbers a keyword.

    The Vertex AI Gecko sample's rubrics have no ``keyword_id``: one question per keyword, numbered alike.
    """
    if "keyword_id" in item:
        return _keyword_id(item.get("keyword_id"), keywords, qid, warnings)
    value = item.get("question_id")
    if isinstance(value, bool) or is_blank(value):
        return None
    try:
        number = int(str(value).strip())
    except ValueError:
        return None
    return number if number in keywords else None
