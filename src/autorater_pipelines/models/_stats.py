"""Running totals of a model's calls, including a latency histogram (p50/p99 without keeping samples)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from autorater_pipelines.models._types import Usage

__all__ = ["CallStats", "LatencyHistogram"]

_FLOOR_S = 1e-4  # latencies below 0.1 ms share the first bucket
_GROWTH = 1.02  # bucket width: 2 % of the latency, so quantiles are exact to about 1 %


class LatencyHistogram:
    """Log-spaced histogram of latencies in seconds (2 % wide buckets); memory does not grow with calls.

    Quantiles are the geometric middle of the bucket that holds them (within about 1 % of the exact
    value). Equality compares the counts.
    """

    __slots__ = ("_counts", "count", "total_s")

    def __init__(self) -> None:
        self._counts: dict[int, int] = {}
        self.count = 0
        self.total_s = 0.0

    def add(self, latency_s: float) -> None:
        """Record one latency (seconds; negative values count as 0)."""
        bucket = 0 if latency_s <= _FLOOR_S else int(math.log(latency_s / _FLOOR_S) / math.log(_GROWTH)) + 1
        self._counts[bucket] = self._counts.get(bucket, 0) + 1
        self.count += 1
        self.total_s += max(0.0, latency_s)

    def quantile(self, q: float) -> float | None:
        """The ``q``-quantile (0 ≤ q ≤ 1) in seconds, or None when empty."""
        if not self.count:
            return None
        rank = max(1, math.ceil(q * self.count))
        seen = 0
        for bucket in sorted(self._counts):
            seen += self._counts[bucket]
            if seen >= rank:
                if bucket == 0:
                    return _FLOOR_S
                return _FLOOR_S * _GROWTH ** (bucket - 0.5)
        return None  # unreachable

    def since(self, earlier: LatencyHistogram) -> LatencyHistogram:
        """The latencies added after the snapshot ``earlier`` (from :meth:`copy`)."""
        result = LatencyHistogram()
        for bucket, n in self._counts.items():
            left = n - earlier._counts.get(bucket, 0)
            if left:
                result._counts[bucket] = left
        result.count = self.count - earlier.count
        result.total_s = self.total_s - earlier.total_s
        return result

    def copy(self) -> LatencyHistogram:
        """An independent snapshot."""
        result = LatencyHistogram()
        result._counts = dict(self._counts)
        result.count, result.total_s = self.count, self.total_s
        return result

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LatencyHistogram) and self._counts == other._counts

    def __repr__(self) -> str:
        p50, p99 = self.quantile(0.5), self.quantile(0.99)
        if p50 is None or p99 is None:
            return "LatencyHistogram(count=0)"
        return f"LatencyHistogram(count={self.count}, p50={p50:.4f}s, p99={p99:.4f}s)"


@dataclasses.dataclass
class CallStats:
    """Running totals of a :class:`~autorater_pipelines.models.Model` (never reset).

    Attributes:
        requests: Requests answered by ``agenerate`` (cache hits, replays and failures included).
        calls: Network attempts made (first tries plus retries).
        cache_hits: Requests served from the response cache.
        retries: Attempts after a first one.
        rate_limited: HTTP 429 answers seen.
        failures: Requests whose output carries an error (any kind).
        usage: Token usage summed over successful calls.
        latency: Wall-clock seconds of every successful network attempt (p50/p99 via ``quantile``).
        repaired_answers: Answers in which lone UTF-16 surrogates were replaced by U+FFFD
            (:attr:`~autorater_pipelines.models.ModelOutput.replaced_characters`).
    """

    requests: int = 0
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    rate_limited: int = 0
    failures: int = 0
    usage: Usage = Usage()
    latency: LatencyHistogram = dataclasses.field(default_factory=LatencyHistogram)
    repaired_answers: int = 0

    def snapshot(self) -> CallStats:
        """An independent copy, to pass to :meth:`since` later."""
        return dataclasses.replace(self, latency=self.latency.copy())

    def since(self, earlier: CallStats) -> CallStats:
        """Totals accumulated after the snapshot ``earlier`` (from :meth:`snapshot`)."""
        values: dict[str, Any] = {
            f.name: getattr(self, f.name) - getattr(earlier, f.name)
            for f in dataclasses.fields(self)
            if f.name not in ("usage", "latency")
        }
        usage = Usage(
            self.usage.input_tokens - earlier.usage.input_tokens,
            self.usage.output_tokens - earlier.usage.output_tokens,
        )
        return CallStats(**values, usage=usage, latency=self.latency.since(earlier.latency))

    def summary(self) -> str:
        """Describe the totals in one line (``10 requests, 8 calls, 2 cache hits, ...``)."""
        text = (
            f"{self.requests} requests, {self.calls} calls, {self.cache_hits} cache hits, "
            f"{self.retries} retries ({self.rate_limited} rate-limited), {self.failures} failures, "
            f"{self.usage.input_tokens} input / {self.usage.output_tokens} output tokens"
        )
        p50, p99 = self.latency.quantile(0.5), self.latency.quantile(0.99)
        if p50 is not None and p99 is not None:
            text += f", latency p50 {p50 * 1000:.0f} ms / p99 {p99 * 1000:.0f} ms"
        if self.repaired_answers:
            text += f", {self.repaired_answers} answers with unencodable characters replaced"
        return text
