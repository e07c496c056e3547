"""Cost of the response cache on Cloud Storage: 100k calls through ``GcsResponseCache`` vs one object per call.

Against ``gcp-storage-emulator`` (its own process, in memory) through google-cloud-storage, as on Vertex AI:

1. **write**: ``--calls`` successful outputs (a Gemini-sized answer with its raw response, ~1.3 KB each) are
   put into one :class:`GcsResponseCache` as a judging run does, then flushed: objects created, bytes,
   seconds (the writes happen on a background thread; ``put`` itself returns at once);
2. **resume**: a fresh cache (a retried task or a re-run) lists and downloads the segments and answers a
   lookup for every call: seconds and requests;
3. **one object per call** (what a file-per-entry cache on the ``/gcs/`` FUSE mount amounts to):
   ``--per-call-sample`` single-entry uploads, timed and extrapolated to ``--calls``;
4. **streaming** (how a judging run writes): ``--stream-calls`` answers from ``--stream-concurrency`` threads,
   each waiting until its answer is stored before the next (a call counts as finished only then, so a SIGKILL
   loses at most the calls in flight): seconds from answer to stored (p50/p99), objects created, merged away,
   and left after the final flush.

    python benchmarks/gcs_cache.py                 # 100,000 calls, ~1-2 min
    python benchmarks/gcs_cache.py --calls 5000    # quick

The last line is ``calls=<n> segments=<k> write_s=<s> resume_s=<s> per_call_objects_s=<s>``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
import uuid

from autorater_pipelines.models import ModelOutput, Usage
from autorater_pipelines.models._cache import encode_entry
from autorater_pipelines.models._cache_store import GcsResponseCache
from autorater_pipelines.testing.cloud_emulators import StorageEmulator, missing_emulator

BUCKET = "autorater-bench"


def output(i: int) -> ModelOutput:
    """A judge answer the size of a real one, with a Gemini-style raw response."""
    text = (
        '{"choice": "A", "confidence": 0.8, "explanation": "'
        + "Response A answers the question directly. " * 4
        + f'#{i}"}}'
    )
    raw = {
        "candidates": [
            {"content": {"parts": [{"text": text}], "role": "model"}, "finishReason": "STOP", "avgLogprobs": -0.1}
        ],
        "usageMetadata": {"promptTokenCount": 812, "candidatesTokenCount": 64, "totalTokenCount": 876},
        "modelVersion": "gemini-2.5-flash",
        "responseId": uuid.UUID(int=i).hex,
    }
    return ModelOutput(text=text, finish_reason="stop", usage=Usage(812, 64), raw=raw)


def key(i: int) -> str:
    return hashlib.sha256(f"request {i}".encode()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=100_000, help="cached calls (default: 100000)")
    parser.add_argument("--batch-entries", type=int, default=1000, help="entries per segment (default: 1000)")
    parser.add_argument("--per-call-sample", type=int, default=500, help="single-object uploads timed (default: 500)")
    parser.add_argument("--stream-calls", type=int, default=2000, help="answers written one by one (default: 2000)")
    parser.add_argument("--stream-concurrency", type=int, default=16, help="threads writing them (default: 16)")
    args = parser.parse_args(argv)
    reason = missing_emulator("gcs")
    if reason:
        print(f"skipped: {reason}")
        return 1
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    entry_bytes = len(json.dumps(encode_entry(key(0), output(0))).encode())
    print(f"{args.calls} cached calls of ~{entry_bytes} bytes; load average {load:.2f} on {os.cpu_count()} CPUs")
    with StorageEmulator(bucket=BUCKET) as emulator:
        os.environ.update(emulator.env)
        uri = f"gs://{BUCKET}/root/autorater-cache"

        cache = GcsResponseCache(uri, batch_entries=args.batch_entries)
        assert len(cache) == 0
        started = time.perf_counter()
        put_s = 0.0
        for i in range(args.calls):
            t0 = time.perf_counter()
            cache.put(key(i), output(i))
            put_s += time.perf_counter() - t0
        cache.flush()
        write_s = time.perf_counter() - started
        client = cache._fs.client()
        blobs = list(client.list_blobs(BUCKET, prefix="root/autorater-cache/segments/"))
        size = sum(b.size or 0 for b in blobs)
        print(
            f"write:  {len(blobs)} segment objects ({size / 1e6:.1f} MB) for {args.calls} calls in {write_s:.1f} s "
            f"(put() itself: {put_s / args.calls * 1e6:.0f} µs per call on the caller's thread)"
        )

        started = time.perf_counter()
        fresh = GcsResponseCache(uri)
        hits = sum(fresh.get(key(i)) is not None for i in range(args.calls))
        resume_s = time.perf_counter() - started
        print(
            f"resume: list + {fresh.segments_read} downloads, {hits} of {args.calls} hits in {resume_s:.1f} s "
            f"({resume_s / args.calls * 1e6:.0f} µs per lookup, loading included)"
        )
        assert hits == args.calls

        bucket = client.bucket(BUCKET)
        started = time.perf_counter()
        for i in range(args.per_call_sample):
            blob = bucket.blob(f"per-call/{key(i)[:2]}/{key(i)}.json")
            blob.upload_from_string(json.dumps(encode_entry(key(i), output(i))), content_type="application/json")
        sample_s = time.perf_counter() - started
        per_call_s = sample_s / args.per_call_sample * args.calls
        print(
            f"one object per call: {args.per_call_sample} uploads in {sample_s:.1f} s -> {args.calls} objects "
            f"~{per_call_s:.0f} s of upload requests (and {args.calls} object writes instead of {len(blobs)})"
        )
        stream = _stream(f"gs://{BUCKET}/stream/autorater-cache", args.stream_calls, args.stream_concurrency)
        left = len(list(client.list_blobs(BUCKET, prefix="stream/autorater-cache/segments/")))
        print(
            f"streaming: {args.stream_calls} answers from {args.stream_concurrency} threads in {stream['s']:.1f} s, "
            f"stored {stream['p50_ms']:.0f} ms (p50) / {stream['p99_ms']:.0f} ms (p99) after each answer; "
            f"{stream['written']} objects created, {stream['merged']} merged away, {left} left after the flush"
        )
    print(
        f"calls={args.calls} segments={len(blobs)} write_s={write_s:.1f} resume_s={resume_s:.1f} "
        f"per_call_objects_s={per_call_s:.0f} stream_p50_ms={stream['p50_ms']:.0f} stream_objects_left={left}"
    )
    return 0


def _stream(uri: str, calls: int, concurrency: int) -> dict[str, float]:
    """Answers put one by one from ``concurrency`` threads, each waiting until stored; timings and counts."""
    import concurrent.futures

    cache = GcsResponseCache(uri)
    latencies: list[float] = []

    def write(i: int) -> None:
        t0 = time.perf_counter()
        stored = cache.put(key(i), output(i))
        if stored is not None:
            stored.result()
        latencies.append(time.perf_counter() - t0)

    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(write, range(calls)))
    cache.flush()
    latencies.sort()
    return {
        "s": time.perf_counter() - started,
        "p50_ms": latencies[len(latencies) // 2] * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
        "written": cache.segments_written,
        "merged": cache.segments_merged,
    }


if __name__ == "__main__":
    sys.exit(main())
