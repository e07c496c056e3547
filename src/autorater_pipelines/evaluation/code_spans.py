r"""Where a Markdown text holds code: fenced blocks and inline code spans, found in one linear pass.

A judge that shows its answer format writes it as code as often as in quotes (```` ```\n[[A]]\n``` ````,
`` `[[A]]` ``), so a verdict inside code is a mention, like a quoted one
(:mod:`autorater_pipelines.pairwise.verdicts`).

Rules, after CommonMark (https://spec.commonmark.org/0.31.2/#code-spans, #fenced-code-blocks), simplified:

- a fence is a line that starts (after at most 3 spaces) with 3 or more backticks or tildes; the block ends at a
  line holding a fence of the same character at least as long, or at the end of the text when none follows;
- outside fences, a run of backticks opens a code span closed by the next run of exactly the same length in
  the same paragraph (no blank line between); a run with no such partner is plain text.
"""

from __future__ import annotations

import bisect
import re

__all__ = ["CodeSpans"]

_FENCE = re.compile(r"[ ]{0,3}(`{3,}|~{3,})")
_TICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


class CodeSpans:
    """The code regions of one text; :meth:`contains` says whether a span lies inside one of them."""

    def __init__(self, text: str) -> None:
        fences = _fenced_blocks(text) if ("```" in text or "~~~" in text) else []
        inline = _inline_spans(text, fences) if "`" in text else []
        self._spans = sorted(fences + inline)
        self._starts = [s for s, _ in self._spans]

    @property
    def regions(self) -> list[tuple[int, int]]:
        """The ``(start, end)`` of every code region (fences included), in text order."""
        return list(self._spans)

    def __bool__(self) -> bool:
        return bool(self._spans)

    def contains(self, start: int, end: int) -> bool:
        """Whether ``text[start:end]`` lies inside one code region."""
        return _inside(self._spans, self._starts, start, end)


def _inside(spans: list[tuple[int, int]], starts: list[int], start: int, end: int) -> bool:
    i = bisect.bisect_right(starts, start) - 1
    return i >= 0 and end <= spans[i][1]


def _fenced_blocks(text: str) -> list[tuple[int, int]]:
    blocks: list[tuple[int, int]] = []
    fence: str | None = None
    opened = 0
    offset = 0
    for line in text.splitlines(keepends=True):
        found = _FENCE.match(line)
        if fence is None and found:
            fence, opened = found.group(1), offset
        elif fence is not None and found:
            run = found.group(1)
            if run[0] == fence[0] and len(run) >= len(fence) and not line[found.end() :].strip():
                blocks.append((opened, offset + len(line)))
                fence = None
        offset += len(line)
    if fence is not None:
        blocks.append((opened, len(text)))
    return blocks


def _inline_spans(text: str, fences: list[tuple[int, int]]) -> list[tuple[int, int]]:
    starts = [s for s, _ in fences]
    runs = [m.span() for m in _TICKS.finditer(text) if not _inside(fences, starts, *m.span())]
    breaks = [m.start() for m in _BLANK_LINE.finditer(text)]
    paragraph = [bisect.bisect_right(breaks, start) for start, _ in runs]
    partner: list[int | None] = [None] * len(runs)
    following: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):  # the next run of the same length, for each run
        length = runs[i][1] - runs[i][0]
        partner[i] = following.get(length)
        following[length] = i
    spans = []
    i = 0
    while i < len(runs):
        j = partner[i]
        if j is not None and paragraph[i] == paragraph[j]:
            spans.append((runs[i][0], runs[j][1]))
            i = j + 1
        else:
            i += 1
    return spans
