"""Reading a validator's JSON answers (``{"answers": [{"question_id", "answer"}]}`` and its variants).

Split from :mod:`autorater_pipelines.gecko.replies`, which reads the block format and decides between the two.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from autorater_pipelines.evaluation.json_extraction import JSONExtractionError, extract_json_values
from autorater_pipelines.gecko.answer_matching import normalize

__all__ = ["JSONAnswers", "id_text", "json_answers", "parse_json_answers"]


def id_text(value: Any) -> str:
    """A question id for comparing: ``1``, ``1.0``, ``"[1]"`` and ``" 1 "`` are the same id."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip().strip("[]()").strip().casefold()


class JSONAnswers(NamedTuple):
    """Answers read from a JSON reply: by question id, those given twice with different values, and stray ids."""

    found: dict[str, Any]
    conflicts: dict[str, list[Any]]
    unplaced: list[str] = []
    """Ids of answers to questions that were not asked (one of them may be meant for an unanswered question)."""


def parse_json_answers(text: str, question_ids: Sequence[str]) -> dict[str, Any]:
    """Extract ``{question_id: answer}`` from a JSON reply.

    Accepts ``{"answers": [{"question_id": …, "answer": …}]}``, a bare list of such items, or a
    ``{question_id: answer}`` object, wrapped in prose or code fences; every JSON value of the reply counts
    (a draft and a corrected code block). Ids are compared after trimming brackets and case; ids not asked for
    are ignored; an id answered twice with different answers is left out (ambiguous).

    Raises:
        JSONExtractionError: the reply holds no JSON object or array.

    """
    read = json_answers(text, question_ids)
    return {q: a for q, a in read.found.items() if q not in read.conflicts}


def _json_items(text: str) -> list[Any]:
    """The answer items of every JSON value in ``text`` (objects first; a bare list when no object holds answers)."""
    items: list[Any] = []
    for data in extract_json_values(text, expect=dict, outside_fences=True):
        if isinstance(data.get("answers"), list):
            items.extend(data["answers"])
        elif isinstance(data.get("answers"), Mapping):  # {"answers": {"q1": "yes", ...}}
            items.extend({"question_id": k, "answer": v} for k, v in data["answers"].items())
        elif "question_id" in data or "id" in data:
            items.append(data)  # an item of a bare list, found on its own
        else:
            items.extend({"question_id": k, "answer": v} for k, v in data.items())
    if not items:
        for data in extract_json_values(text, expect=list):
            items.extend(data)
    return items


def json_answers(text: str, question_ids: Sequence[str]) -> JSONAnswers:
    items = _json_items(text)
    if not items and not extract_json_values(text, expect=dict):
        raise JSONExtractionError(f"no JSON answers found in model output starting {text.strip()[:120]!r}")
    wanted = {id_text(q): q for q in question_ids}
    found: dict[str, Any] = {}
    given: dict[str, list[Any]] = {}
    unplaced: list[str] = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        named = item.get("question_id", item.get("id", ""))
        qid = wanted.get(id_text(named))
        values = [item.get(k) for k in ("answer", "verdict") if not isinstance(item.get(k), (dict, list, type(None)))]
        if qid is None and values:
            unplaced.append(str(named))
        if qid is None or not values:
            continue
        given.setdefault(qid, []).extend(values)  # an item whose "answer" and "verdict" disagree is ambiguous too
        found.setdefault(qid, values[0])
    conflicts = {q: a for q, a in given.items() if len({normalize(v) for v in a}) > 1}
    return JSONAnswers(found, conflicts, unplaced)
