"""Time of redacting credentials: ordinary outputs and adversarial texts, with four known secrets.

Each case grows the text 4x twice (n, 4n, 16n; best of 3 runs each); linear work keeps the time ratio from 4n
to 16n near 4, quadratic work near 16. Runs the library's real redactor (one RE2 pattern for every spelling
of every known secret, then the credential shapes) as the JSONL writer applies it.

Usage::

    python benchmarks/redaction_worst_case.py          # last line: worst_ratio=<x> slowest_s=<s> mb_per_s=<x>
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import time
import urllib.parse
from collections.abc import Callable

SECRETS = {
    "BENCH_ONE_API_KEY": "Tq8Xv3Jm/5Lw2+rTn7pKd4=sHc6yB9Qz",
    "BENCH_TWO_TOKEN": "ya29.a0AfB_byC-0123456789abcdefghijklmnopqrstuvwxyz",
    "BENCH_THREE_SECRET": "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    "BENCH_FOUR_PASSWORD": "pässwörd-Geheim-7&<>",
}
KEY = SECRETS["BENCH_ONE_API_KEY"]

_ROW = json.dumps(
    {
        "id": "row-000123",
        "inference_instruction": "Summarize the article in two sentences. " * 4,
        "response_a": "The article describes the rise of base64-encoded tokens and bearer schemes. " * 3,
        "choice": "A",
        "explanation": "Response A is more complete; Response B misses the second point.",
    }
)
_ECHOES = " ".join(
    [
        KEY.upper(),
        urllib.parse.quote(KEY, safe=""),
        KEY.replace("/", "\\/"),
        base64.b64encode(f"u:{KEY}".encode()).decode(),
        KEY[:14] + "...",
        KEY[:16] + "\r\n" + KEY[16:],
        KEY[:20] + " (truncated)",
        KEY.encode().hex(),
    ]
)

_PARTS = " ".join(
    [
        KEY[4:28],  # a middle part: neither a prefix nor a suffix
        "-".join(KEY[i : i + 4] for i in range(0, len(KEY), 4)),  # dashed groups of 4
        "\u200b".join(KEY[i : i + 6] for i in range(0, len(KEY), 6)),  # a zero-width space every 6 characters
    ]
)

CASES: dict[str, Callable[[int], str]] = {
    "judgments.jsonl rows, no secret": lambda n: "\n".join([_ROW] * (n // 50)),
    "every echo form of a key, many times": lambda n: (_ECHOES + " ok ") * (n // 20),
    "middle parts, dashed groups, U+200B": lambda n: (_PARTS + " ok ") * (n // 20),
    "11-character prefixes (near misses)": lambda n: (KEY[:11] + "... ") * n,
    "15-character middle runs (near misses)": lambda n: (KEY[5:20] + " - ") * n,
    "15-character prefixes, escaped breaks (near misses)": lambda n: (KEY[:8] + "\\n  " + KEY[8:15] + " x ") * n,
    "hex of 15 bytes of a key (near misses)": lambda n: (KEY[:15].encode().hex() + ", ") * (n // 2),
    "one long base64 run without a key": lambda n: "QUJD" * (4 * n),
    "'bearer <word>' and 'Basic <word>'": lambda n: "the bearer should sign; Basic understanding. " * (n // 4),
    "%-escapes and \\u-escapes": lambda n: "%2F%2B%3D\\u002b\\/&#43;" * n,
}


def _time(func: Callable[[str], str], text: str) -> float:
    started = time.perf_counter()
    func(text)
    return time.perf_counter() - started


def main() -> None:
    """Time every case at n, 4n, 16n; print one line per case, the worst growth ratio and the JSONL throughput."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=5_000, help="base size of each case (default: 5000)")
    args = parser.parse_args()
    os.environ.update(SECRETS)
    from autorater_pipelines.redaction import redactor

    redact = redactor()
    worst, slowest, throughput = 0.0, 0.0, 0.0
    for name, build in CASES.items():
        texts = [build(args.n * 4**k) for k in range(3)]
        times = [min(_time(redact, text) for _ in range(3)) for text in texts]
        ratio = times[2] / max(times[1], 1e-4)
        worst, slowest = max(worst, ratio), max(slowest, times[-1])
        if name.startswith("judgments"):
            throughput = len(texts[2].encode()) / 1e6 / max(times[2], 1e-9)
        sizes = "  ".join(f"{len(t) / 1e6:5.2f} MB {s * 1000:8.1f} ms" for t, s in zip(texts, times, strict=True))
        print(f"{name:40s} {sizes}   growth x{ratio:.1f} per 4x")
    print(f"worst_ratio={worst:.1f} slowest_s={slowest:.3f} mb_per_s={throughput:.0f}")


if __name__ == "__main__":
    main()
