"""Reading a validator's reply to several questions: our JSON answers, or the Vertex ``<question>`` blocks.

Two reply formats are read:

- JSON (our built-in prompt): ``{"answers": [{"question_id", "answer"}]}``, a bare list of such items or a
  ``{question_id: answer}`` object, in prose or code fences; matched by ``question_id`` only.
- Blocks, as the validator prompt of the Vertex AI Gecko sample asks for them::

      <question>
      Question: Is there a croissant?
      Verdict: yes
      </question>

  or the same ``Question:`` / ``Verdict:`` lines without the tags, or bare ``Verdict:`` lines. A block may name
  its question id (``<question id="q2">``, a ``Question ID: q2`` line, or ``[q2]`` before the echoed question).

Blocks are matched to questions by id when they carry one, otherwise by order, and the echoed question text
(compared after :func:`normalize_question`) must be the question's: a block that matches no question, a count
mismatch or an echo of another question leaves those questions unanswered with the reason. A question never
receives the verdict of another question, and two questions with the same text never collide (the Vertex
sample keys verdicts by question text, so its second copy of a question overwrites the first).

A question the reply does not answer at all (a JSON reply without its ``question_id``, or blocks that all
belong to other questions) is ``missing_question``, which the scorer treats as missing
(``missing_answer_policy``); a question that may have been answered by a block or a JSON answer that could
not be placed (an echo of no question, an id that was not asked) is ``unmatched_answer`` (unparseable).
A ``Verdict:`` label inside a quotation (``Answer with "Verdict: no" …``, code, a blockquote:
:mod:`autorater_pipelines.evaluation.quotations`) is a mention of the format, not an answer, when the reply has
labels of its own; a label in what the reply reports someone else wrote (``The candidate wrote "Verdict: yes"``)
is never an answer.

A question the reply answers twice with different verdicts gets none (error kind ``ambiguous_answer``, the
verdicts listed), whether the two are ``Verdict:`` lines of one block (``Verdict: yes`` … ``Verdict: no``), a
``Verdict:`` line with no question of its own after a block that has one, two blocks, or two JSON answers (in
one object or in two, e.g. a draft and a corrected code block), as AutoSxS treats JSON verdicts that
disagree. Verdicts agree when they are equal after :func:`~autorater_pipelines.gecko.answer_matching.normalize`
(``Yes`` and ``**yes.**``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any, NamedTuple

from autorater_pipelines.evaluation.json_extraction import JSONExtractionError
from autorater_pipelines.evaluation.quotations import MENTION, OWN, Quotations
from autorater_pipelines.evaluation.reasoning import UnfinishedReasoning, answer_after_reasoning
from autorater_pipelines.gecko._json_answers import JSONAnswers, json_answers, parse_json_answers
from autorater_pipelines.gecko._json_answers import id_text as _id_text
from autorater_pipelines.gecko.answer_matching import normalize

__all__ = [
    "Block",
    "ReplyAnswers",
    "ReplyError",
    "has_blocks",
    "normalize_question",
    "parse_blocks",
    "parse_json_answers",
    "parse_reply",
]

UNMATCHED = "unmatched_answer"
"""Error kind of a question whose answer block could not be matched to it safely."""
MISSING = "missing_question"
"""Error kind of a question the reply does not answer."""
AMBIGUOUS = "ambiguous_answer"
"""Error kind of a question the reply answers with verdicts that disagree."""

_OPEN_TAG = re.compile(r"<\s*question\b([^>]*)>", re.I)
_CLOSE_TAG = re.compile(r"<\s*/\s*question\s*>", re.I)
_VERDICT = re.compile(r"\bverdict[*_]*\s*:[*_]*[ \t]*(?P<v>[^\n]*)", re.I)
_QUESTION_LABEL = re.compile(r"\bquestion[*_]*\s*:[*_]*", re.I)
_ID_ATTR = re.compile(r"""\b(?:id|question_id)\s*=\s*["']?([^"'\s>]+)""", re.I)
_ID_LINE = re.compile(r"^[\s*_#>-]*question[ _]?id[*_]*\s*:[*_]*\s*\[?([^\]\s]+)\]?\s*$", re.I | re.M)
_ID_PREFIX = re.compile(r"^\s*\[([^\]\s]{1,40})\]\s*")
_CHOICES = re.compile(r"(<\s*choices\s*>|\bchoices\s*:).*$", re.I | re.S)
_NON_WORD = re.compile(r"[^\w]+")


class ReplyError(ValueError):
    """The reply holds neither JSON answers nor ``Verdict:`` blocks."""


class Block(NamedTuple):
    """One answer block of a reply."""

    question_id: str | None
    """The question id the block names, as written (None when it names none)."""
    echo: str | None
    """The question text the block repeats (None when it repeats none)."""
    verdict: str | None
    """The text after the first ``Verdict:`` (None when the block has no verdict)."""
    verdicts: tuple[str, ...] = ()
    """The text after every ``Verdict:`` label of the block, in order (empty when it has none)."""
    bare: bool = False
    """Nothing but blank space before the block's ``Verdict:`` label (a line right after another verdict)."""


class ReplyAnswers(NamedTuple):
    """What a reply says about each question asked."""

    answers: dict[str, Any]
    """``{question_id: answer}`` for the questions the reply answers unambiguously."""
    problems: dict[str, tuple[str, str]]
    """``{question_id: (error kind, reason)}`` for every other question asked."""
    format: str
    """``json`` or ``blocks``."""


def normalize_question(text: Any) -> str:
    """Question text for comparing an echo with the question: NFKC, case-folded, punctuation and spacing ignored."""
    value = unicodedata.normalize("NFKC", str(text or "")).casefold()
    return " ".join(_NON_WORD.sub(" ", value).split())


def _answer_labels(text: str) -> list[re.Match[str]]:
    """The ``Verdict:`` labels that answer.

    A label inside a quotation (:mod:`autorater_pipelines.evaluation.quotations`) is a mention of the format (an
    example in a preamble), left out when the reply has a label of its own, as AutoSxS leaves out quoted example
    verdicts; a label in what the reply reports someone else wrote is never an answer.
    """
    every = list(_VERDICT.finditer(text))
    if not every:
        return every
    quotations = Quotations(text)
    levels = [quotations.level(m.start(), m.start() + 1) for m in every]
    return [m for m, level in zip(every, levels, strict=True) if level == OWN] or [
        m for m, level in zip(every, levels, strict=True) if level == MENTION
    ]


def has_blocks(text: str | None) -> bool:
    """Tell whether a reply uses the block format (a ``<question>`` tag or a ``Verdict:`` label)."""
    return bool(text) and bool(_OPEN_TAG.search(text or "") or _VERDICT.search(text or ""))


def _verdicts(content: str) -> tuple[tuple[str, ...], int]:
    """Every verdict of a block, and where the first label starts (-1 when there is none)."""
    values, at = [], -1
    for match in _answer_labels(content):
        at = match.start() if at < 0 else at
        value = match.group("v").strip().strip("*_").strip()
        if not value:  # "Verdict:" with the answer on the next non-empty line
            rest = [line.strip() for line in content[match.end() :].splitlines() if line.strip()]
            value = rest[0] if rest and not _VERDICT.match(rest[0]) else ""
        if value:
            values.append(value)
    return tuple(values), at


def _block(content: str, attributes: str, *, tagged: bool) -> Block:
    verdicts, at = _verdicts(content)
    verdict = verdicts[0] if verdicts else None
    head = content if at < 0 else content[:at]
    qid: str | None = None
    if m := _ID_ATTR.search(attributes):
        qid = m.group(1)
    elif m := _ID_LINE.search(head):
        qid = m.group(1)
        head = head[: m.start()] + head[m.end() :]
    labels = list(_QUESTION_LABEL.finditer(head))
    if labels:
        echo: str | None = head[labels[-1].end() :]
    else:  # inside tags, a lone line ending in "?" is the echoed question; elsewhere it may be preamble prose
        lines = [line.strip() for line in head.splitlines() if line.strip()]
        echo = lines[0] if tagged and len(lines) == 1 and lines[0].endswith("?") else None
    if echo is not None:
        echo = _CHOICES.sub("", echo).strip()
        if m := _ID_PREFIX.match(echo):
            qid = qid or m.group(1)
            echo = echo[m.end() :]
        echo = echo.strip() or None
    return Block(qid, echo, verdict, verdicts, bare=not head.strip())


def parse_blocks(text: str) -> list[Block]:
    """Split a reply into answer blocks: ``<question>…</question>`` (closing tag optional), else ``Verdict:`` lines.

    Returns:
        The blocks in reply order (empty when the reply has neither).

    """
    opens = list(_OPEN_TAG.finditer(text))
    if opens:
        blocks = []
        for i, tag in enumerate(opens):
            end = opens[i + 1].start() if i + 1 < len(opens) else len(text)
            close = _CLOSE_TAG.search(text, tag.end(), end)
            blocks.append(_block(text[tag.end() : close.start() if close else end], tag.group(1), tagged=True))
        return [b for b in blocks if b.verdict is not None or b.echo is not None]
    blocks, start = [], 0
    for match in _answer_labels(text):
        line_end = text.find("\n", match.end())
        end = len(text) if line_end < 0 else line_end
        if not match.group("v").strip():  # the answer is on the next non-empty line
            nxt = re.compile(r"\n[ \t]*\S[^\n]*").search(text, match.end())
            end = nxt.end() if nxt else end
        blocks.append(_block(text[start:end], "", tagged=False))
        start = end
    return blocks


class _Matcher:
    """Assigns blocks to questions; records why a question got no answer."""

    def __init__(self, questions: Sequence[tuple[str, str]], blocks: Sequence[Block]) -> None:
        self.questions = list(questions)
        self.blocks = list(blocks)
        self.assigned: dict[str, list[int]] = {qid: [] for qid, _ in self.questions}
        self.problems: dict[str, tuple[str, str]] = {}
        self.notes: list[str] = []
        texts = [normalize_question(t) for _, t in self.questions]
        self.unique_text = {t: qid for (qid, _), t in zip(self.questions, texts, strict=True) if texts.count(t) == 1}
        self.text_of = dict(zip([q for q, _ in self.questions], texts, strict=True))

    def by_id(self) -> None:
        wanted = {_id_text(qid): qid for qid, _ in self.questions}
        for i, block in enumerate(self.blocks):
            if block.question_id is not None:
                qid = wanted.get(_id_text(block.question_id))
                if qid is None:
                    self.notes.append(f"block {i + 1} names question id {block.question_id!r}, which was not asked")
                elif block.echo is not None and normalize_question(block.echo) != self.text_of[qid]:
                    self.problems[qid] = (
                        UNMATCHED,
                        f"answer block {i + 1} names question id {block.question_id!r} but repeats the question "
                        f"{block.echo!r}, not this one",
                    )
                else:
                    self.assigned[qid].append(i)
            else:
                self._by_text(i, "names no question id")

    def by_order(self) -> None:
        for i, ((qid, _), block) in enumerate(zip(self.questions, self.blocks, strict=True)):
            if block.echo is None or normalize_question(block.echo) == self.text_of[qid]:
                self.assigned[qid].append(i)
            else:
                self.problems[qid] = (
                    UNMATCHED,
                    f"answer block {i + 1} (matched by order) repeats the question {block.echo!r}, not this one",
                )

    def by_text(self, why: str) -> None:
        for i in range(len(self.blocks)):
            self._by_text(i, why)

    def _by_text(self, i: int, why: str) -> None:
        echo = self.blocks[i].echo
        qid = self.unique_text.get(normalize_question(echo)) if echo else None
        if qid is None:
            shown = f"repeats {echo!r}" if echo else "repeats no question"
            self.notes.append(f"block {i + 1} {why} and {shown}, which matches no single question asked")
        else:
            self.assigned[qid].append(i)

    def result(self) -> ReplyAnswers:
        answers: dict[str, Any] = {}
        context = f"; {'; '.join(self.notes)}" if self.notes else ""
        for qid, _ in self.questions:
            if qid in self.problems:
                continue
            given = [v for i in self.assigned[qid] for v in _all_verdicts(self.blocks[i])]
            distinct = {normalize(v): v for v in given}
            if not self.assigned[qid]:
                self.problems[qid] = (
                    # Every block went to another question: this one is not answered (missing). A block that
                    # could not be placed may be its answer: unmatched (unparseable), never a guess.
                    UNMATCHED if self.notes else MISSING,
                    f"no answer block for this question (the reply has {len(self.blocks)} block(s) for "
                    f"{len(self.questions)} question(s)){context}",
                )
            elif len(distinct) > 1:
                where = "one answer block" if len(self.assigned[qid]) == 1 else "several answer blocks"
                self.problems[qid] = (AMBIGUOUS, f"{where} with different verdicts {given!r}: no verdict taken")
            elif not distinct:
                self.problems[qid] = (MISSING, "the answer block for this question has no 'Verdict:' line")
            else:
                answers[qid] = given[0]
        return ReplyAnswers(answers, self.problems, "blocks")


def _all_verdicts(block: Block) -> tuple[str, ...]:
    return block.verdicts or (() if block.verdict is None else (block.verdict,))


def _attach_stray_verdicts(blocks: Sequence[Block]) -> list[Block]:
    """Fold a ``Verdict:`` line that names no question into the block before it, when that block is its owner.

    The owner names a question (echo or id), or is an untagged question right before this bare line.

    ``Question: Is there a cat?`` / ``Verdict: yes`` / ``Verdict: no`` is one question answered twice, not two
    answers (used when the blocks cannot be matched one to one by order).
    """
    out: list[Block] = []
    for block in blocks:
        previous = out[-1] if out else None
        stray = block.echo is None and block.question_id is None
        # A bare "Verdict:" line right after a block with text before its label (an untagged question) is that
        # block's second verdict: "Is the circle red?" / "Verdict: yes" / "Verdict: no".
        owner = previous is not None and (
            previous.echo is not None or previous.question_id is not None or (block.bare and not previous.bare)
        )
        if stray and owner and previous is not None:
            merged = _all_verdicts(previous) + _all_verdicts(block)
            out[-1] = previous._replace(verdict=merged[0] if merged else None, verdicts=merged)
        else:
            out.append(block)
    return out


def _match_blocks(blocks: Sequence[Block], questions: Sequence[tuple[str, str]], *, tagged: bool) -> ReplyAnswers:
    if not tagged and len(blocks) != len(questions):
        blocks = _attach_stray_verdicts(blocks)
    matcher = _Matcher(questions, blocks)
    echoes = [normalize_question(b.echo) if b.echo else None for b in blocks]
    if any(b.question_id is not None for b in blocks):
        matcher.by_id()
    elif len(blocks) == len(questions):
        permuted = all(e in matcher.unique_text for e in echoes) and len(set(echoes)) == len(echoes)
        matcher.by_text("repeats a question") if permuted else matcher.by_order()
    else:
        why = f"cannot be matched by order ({len(blocks)} block(s) for {len(questions)} question(s))"
        matcher.by_text(why)
    return matcher.result()


def parse_reply(text: str | None, questions: Sequence[tuple[str, str]]) -> ReplyAnswers:
    """Read a validator reply to several questions (module docstring).

    Args:
        text: The raw reply.
        questions: ``(question_id, question text)`` of every question asked, in the order they were asked.

    Returns:
        Answers for the questions the reply answers unambiguously, and a reason for every other question.

    Raises:
        ReplyError: the reply holds neither JSON answers nor ``Verdict:`` blocks.

    """
    try:  # <think> drafts are not answers
        text = answer_after_reasoning(text or "")[1]
    except UnfinishedReasoning as exc:
        raise ReplyError(str(exc)) from None
    read: JSONAnswers | None = None
    if not _OPEN_TAG.search(text):
        # JSON answers first: a JSON reply whose justification says "verdict: ..." is not a block reply.
        try:
            read = json_answers(text, [q for q, _ in questions])
        except JSONExtractionError:
            read = None
        if read is not None and not read.found:
            read = None
    if read is None and has_blocks(text):
        blocks = parse_blocks(text)
        if blocks:
            return _match_blocks(blocks, questions, tagged=bool(_OPEN_TAG.search(text)))
    if read is None:
        try:
            read = json_answers(text, [q for q, _ in questions])
        except JSONExtractionError as exc:
            raise ReplyError(
                f"{exc}; expected JSON answers by question_id or '<question> … Verdict: …' blocks"
            ) from None
    problems: dict[str, tuple[str, str]] = {}
    for q, _ in questions:
        if q in read.conflicts:
            problems[q] = (
                AMBIGUOUS,
                f"the reply answers this question_id with {read.conflicts[q]!r}: no verdict taken",
            )
        elif q not in read.found and read.unplaced:  # maybe answered under an id that was not asked: never guess
            shown = read.unplaced[:5] + (["…"] if len(read.unplaced) > 5 else [])
            problems[q] = (
                UNMATCHED,
                f"the reply has no answer for this question_id; it answers question_id(s) {shown} that were not asked",
            )
        elif q not in read.found:
            problems[q] = (MISSING, "the reply has no answer for this question_id")
    return ReplyAnswers({q: a for q, a in read.found.items() if q not in problems}, problems, "json")
