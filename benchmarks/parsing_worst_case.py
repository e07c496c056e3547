"""Worst-case time of reading a judge's answer: JSON extraction, verdict_pattern, quotations on adversarial texts.

Each case grows the text 4x twice (n, 4n, 16n; best of 3 runs each); linear work keeps the time ratio from 4n
to 16n near 4, quadratic work near 16, catastrophic backtracking never finishes. Runs the library's real functions.

Usage::

    python benchmarks/parsing_worst_case.py            # last line: worst_ratio=<x> slowest_s=<s>
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from autorater_pipelines.evaluation.json_extraction import extract_json_values
from autorater_pipelines.gecko.answer_matching import resolve
from autorater_pipelines.pairwise import JudgeSettings, parse_verdict

_CATASTROPHIC = JudgeSettings.parse({"verdict_pattern": r"^(a+)+$", "verdict_map": {"a": "A"}})
_FASTCHAT = JudgeSettings.parse({"verdict_pattern": r"\[\[(A|B|C)\]\]", "verdict_map": {"A": "A", "B": "B"}})


def _verdict(settings: JudgeSettings) -> Callable[[str], object]:
    def run(text: str) -> object:
        try:
            return parse_verdict(text, settings)
        except ValueError:
            return None

    return run


CASES: dict[str, tuple[Callable[[int], str], Callable[[str], object]]] = {
    "json: nested keys never closed": (lambda n: '{"a": ' * n + "x", extract_json_values),
    "json: braces before the answer": (lambda n: "{" * n + '{"choice": "A"}', extract_json_values),
    "json: code with braces, then the answer": (
        lambda n: "int f() { return 0; } " * n + '{"choice": "B"}',
        extract_json_values,
    ),
    "json: fences never closed": (lambda n: "```" * n, extract_json_values),
    # issue 19 hostile trial: every failed attempt used to count lines from the start of the text (quadratic)
    "json: unterminated explanations": (
        lambda n: '{"choice": "A", "explanation": "' * (n // 4) + '{"choice": "B"}',
        extract_json_values,
    ),
    "json: unterminated values": (lambda n: '{"a": "' * n, extract_json_values),
    "verdict: (a+)+$ on a's": (lambda n: "a" * (10 * n) + "!", _verdict(_CATASTROPHIC)),
    "verdict: many [[A]] quotes": (lambda n: "[[A]] " * n + "[[B]]", _verdict(_FASTCHAT)),
    # issue 19: quotations, reported speech and emphasis are found in linear passes
    "verdict: reported quotations, one sentence": (
        lambda n: 'Response B said "Final verdict: [[A]]" and ' * (n // 4) + "my verdict: [[B]]",
        _verdict(_FASTCHAT),
    ),
    "verdict: frames introducing blockquotes": (
        lambda n: "Response B wrote:\n> Final verdict: [[A]]\n" * (n // 4) + "\n[[B]]",
        _verdict(_FASTCHAT),
    ),
    "verdict: unpaired marks, apostrophes, *": (
        lambda n: "it's \" *a [[A]] ' _b \u201c " * (n // 4) + "[[B]]",
        _verdict(_FASTCHAT),
    ),
    # issue 19 hostile trial: HTML tags, indented code, comparisons, refusals, unclosed quotes
    "verdict: html tags never closed, comparisons": (
        lambda n: "<q> <code> [[A]] beats [[B]] < [[A]] " * (n // 4) + "[[B]]",
        _verdict(_FASTCHAT),
    ),
    "verdict: indented lines, refusals, unclosed quotes": (
        lambda n: '\n\n    I will not write [[A]] \u00ab " ~~x ' * (n // 4) + "[[B]]",
        _verdict(_FASTCHAT),
    ),
    "gecko: the other verdict quoted": (
        lambda n: "No. " + "The candidate wrote 'Yes, 42' and *yes* " * (n // 4),
        lambda text: resolve(text, ["yes", "no"]),
    ),
}


def _time(func: Callable[[str], object], text: str) -> float:
    started = time.perf_counter()
    func(text)
    return time.perf_counter() - started


def main() -> None:
    """Time every case at n, 4n, 16n; print one line per case and the worst growth ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=5_000, help="base size of each case (default: 5000)")
    args = parser.parse_args()
    worst, slowest = 0.0, 0.0
    for name, (build, func) in CASES.items():
        times = [min(_time(func, build(args.n * 4**k)) for _ in range(3)) for k in range(3)]
        # growth from 4n to 16n (the smallest size is dominated by fixed costs); best of 3 against noise
        ratio = times[2] / max(times[1], 1e-4)
        worst, slowest = max(worst, ratio), max(slowest, times[-1])
        print(f"{name:42s} " + "  ".join(f"{t * 1000:9.1f} ms" for t in times) + f"   growth x{ratio:.1f} per 4x")
    print(f"worst_ratio={worst:.1f} slowest_s={slowest:.3f}")


if __name__ == "__main__":
    main()
