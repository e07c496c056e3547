"""``CodeSpans``: which parts of a Markdown text are code (fenced blocks, inline spans)."""

from __future__ import annotations

import pytest

from autorater_pipelines.evaluation.code_spans import CodeSpans


def _in_code(text: str, needle: str) -> bool:
    start = text.index(needle)
    return CodeSpans(text).contains(start, start + len(needle))


@pytest.mark.parametrize(
    ("text", "needle", "expected"),
    [
        ("say `X` here", "X", True),
        ("say `X` here", "here", False),
        ("say ``a ` X`` here", "X", True),  # a double-backtick span holds a single backtick
        ("one ` then X and `` two", "X", False),  # runs of different lengths do not pair
        ("one ` then\n\nX and ` two", "X", False),  # no span across a blank line
        ("one ` then\nX and ` two", "X", True),  # a span may continue on the next line
        ("```\nX\n```\nY", "X", True),
        ("```\nX\n```\nY", "Y", False),
        ("~~~~python\nX\n~~~\nstill code: Y\n~~~~\nZ", "Y", True),  # closed only by a fence as long
        ("~~~~python\nX\n~~~\nstill code: Y\n~~~~\nZ", "Z", False),
        ("```\nnever closed X", "X", True),
        ("```\n`\n```\nX `", "X", False),  # a backtick inside a fence opens no inline span
        ("    ```\nX", "X", False),  # indented 4 spaces: not a fence
        ("`X", "X", False),
    ],
)
def test_code_regions(text, needle, expected):
    assert _in_code(text, needle) is expected


def test_a_span_that_only_starts_in_code_is_not_inside_it():
    text = "`a` b"
    assert CodeSpans(text).contains(0, 3) and not CodeSpans(text).contains(1, 5)
    assert not CodeSpans("plain text")
