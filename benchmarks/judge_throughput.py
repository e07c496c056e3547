"""Judging throughput: the real ``autosxs.judge_examples`` against the protocol emulator, vs naive baselines.

The emulator runs in its own process (``python -m autorater_pipelines.testing.emulator``, a fresh one per
client run) with a settable latency, a quota (token bucket refilled at ``--quota-rpm``; above it: 429 +
``Retry-After``) and a random fault rate (429/503 without ``Retry-After``; faulted requests use no
quota). The same workload (same judge prompts) then goes through:

- ``ours``: ``autosxs.judge_examples`` with the Gemini provider (google-genai over HTTP), response cache,
  adaptive concurrency, client-side ``requests_per_minute`` = the quota, retries;
- ``sequential``: one call after another, a fixed 1 s sleep after a failure (up to 8 retries);
- ``threadpool``: ``--concurrency`` threads calling the SDK, tenacity retries (random exponential backoff,
  9 attempts) on 429/5xx.

Honest accounting: ``ideal = min(quota / 60, concurrency / latency)`` calls/s of SUCCESSFUL work; faulted
answers are the emulator's extra answers, not progress. ``achieved = successful calls / wall time`` of the
whole judging call (client start-up and the retry tail included). ``lost_rows`` = rows without exactly
one judgment whose samples all succeeded; ``wrong_rows`` = judged rows whose choice differs from what the
scripted judge (longer response wins) implies. After ``ours`` finishes, the same run is repeated on the
same cache: it must make 0 model calls and give identical judgments. Baselines stop starting calls after
``--baseline-time-limit-s`` (their rate is measured on what they did).

Without a quota (``--quota-rpm 0``) it also reports the emulator's ceiling (lean aiohttp client, same
bodies) and our layer's own ceiling (the same ``judge_examples`` with an in-process fake provider,
registered like a real one, that only sleeps ``latency``), since on 2 shared cores the emulator process
and the SDK compete for CPU.

    python benchmarks/judge_throughput.py --quick          # quota-bound, 10 % faults, ~1.5 min
    python benchmarks/judge_throughput.py --quota-rpm 0 --fault-rate 0 --calls 20000 --concurrency 64

The last line is ``throughput_ratio=<x> lost_rows=<n>`` (the worst of ``--repeat`` runs of ``ours``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from autorater_pipelines import autosxs, pairwise
from autorater_pipelines.models import (
    ErrorKind,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelRequest,
    Provider,
    register_provider,
)
from autorater_pipelines.models._stats import LatencyHistogram
from autorater_pipelines.pairwise import judge as pairwise_judge
from autorater_pipelines.pairwise import tasks
from autorater_pipelines.testing.judges import length_judge, responses_in_prompt

sys.path.insert(0, str(Path(__file__).resolve().parent))  # spawned shard processes import _shard_worker too
import _shard_worker  # noqa: E402

TASK = "question_answering@001"
MODEL = "gemini-2.5-flash"
SCHEMA = tasks.JUDGMENT_SCHEMA
WORDS = "the of and to in is was for on that with as by at from it an be this which or are".split()


@dataclasses.dataclass(frozen=True)
class Scenario:
    """One workload and emulator setting."""

    calls: int
    samples: int
    latency_s: float
    quota_rpm: float
    quota_burst: float | None
    fault_rate: float
    fault_statuses: tuple[int, ...]
    concurrency: int
    seed: int
    declared: bool = True

    @property
    def rows(self) -> int:
        return max(1, self.calls // self.samples)

    @property
    def ideal(self) -> float:
        """Successful calls per second a perfect client achieves."""
        bound = self.concurrency / self.latency_s if self.latency_s > 0 else float("inf")
        return min(self.quota_rpm / 60.0, bound) if self.quota_rpm else bound


@dataclasses.dataclass
class Result:
    """What one client achieved on the workload."""

    name: str
    ok_calls: int
    seconds: float
    rows_done: int
    lost_rows: int
    wrong_rows: int
    retries: int
    latency: LatencyHistogram
    emulator: dict[str, Any]
    note: str = ""

    @property
    def rate(self) -> float:
        return self.ok_calls / self.seconds if self.seconds > 0 else 0.0

    @property
    def attempts_per_success(self) -> float:
        """HTTP requests the emulator received per successful call (nan when not measured)."""
        calls = self.emulator.get("calls")
        return calls / self.ok_calls if calls is not None and self.ok_calls else float("nan")


# --- emulator ---------------------------------------------------------------------------------------
class Emulator:
    """The protocol emulator in a child process (a fresh quota bucket per client run)."""

    def __init__(self, sc: Scenario, *, latency_s: float | None = None, judge: str = "length") -> None:
        cmd = [sys.executable, "-m", "autorater_pipelines.testing.emulator", "--judge", judge, "--no-record"]
        cmd += ["--latency-ms", str(1000 * (sc.latency_s if latency_s is None else latency_s)), "--seed", str(sc.seed)]
        if sc.quota_rpm:
            cmd += ["--requests-per-minute", str(sc.quota_rpm)]
            if sc.quota_burst:
                cmd += ["--quota-burst", str(sc.quota_burst)]
        if sc.fault_rate:
            cmd += ["--fault-rate", str(sc.fault_rate), "--fault-status", ",".join(map(str, sc.fault_statuses))]
        self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self._proc.stdout.readline() if self._proc.stdout else ""
        if "listening on" not in line:
            self._proc.kill()
            raise RuntimeError(f"the emulator did not start: {line!r}")
        self.url = line.rsplit(" ", 1)[-1].strip()

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.url + "/stats", timeout=10) as answer:
            return json.loads(answer.read())

    def __enter__(self) -> Emulator:
        return self

    def __exit__(self, *exc: object) -> None:
        self._proc.terminate()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()


# --- workload ---------------------------------------------------------------------------------------
def make_examples(sc: Scenario, workdir: Path) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Write a dataset, load it with the real ``prepare_examples``; expected choice per row id."""
    rnd = random.Random(sc.seed)

    def text(words: int) -> str:
        return " ".join(rnd.choice(WORDS) for _ in range(words))

    path = workdir / "dataset.jsonl"
    expected = {}
    with open(path, "w", encoding="utf-8") as f:
        for i in range(sc.rows):
            a, b = text(rnd.randint(40, 140)), text(rnd.randint(40, 140))
            if len(a) == len(b):
                a += " indeed"
            expected[f"r{i}"] = "A" if len(a) > len(b) else "B"
            f.write(json.dumps({"id": f"r{i}", "question": text(150), "a": a, "b": b}) + "\n")
    examples = autosxs.prepare_examples(
        evaluation_dataset=str(path),
        task=TASK,
        id_columns=["id"],
        autorater_prompt_parameters={"inference_instruction": {"column": "question"}},
        response_column_a="a",
        response_column_b="b",
    )
    return examples, expected


def workload(sc: Scenario, examples: list[dict[str, Any]]) -> Iterator[tuple[int, ModelRequest]]:
    """The judge requests of ``judge_examples``, built by the same library code, with their row index."""
    task = tasks.get_task(TASK, {})
    settings = pairwise.JudgeSettings.parse({"sampling_count": sc.samples})
    for index, example in enumerate(examples):
        for request in pairwise.build_requests(
            ids={"id": example["id"]},
            prompt={"inference_instruction": example["inference_instruction"]},
            response_a=example["response_a"],
            response_b=example["response_b"],
            settings=settings,
            render_judge_prompt=task.render_judge_prompt,
            response_schema=SCHEMA,
        ):
            yield index, request


def score_rows(
    sc: Scenario, examples: list[dict[str, Any]], expected: dict[str, str], answers: dict[int, list[Any]]
) -> tuple[int, int, int]:
    """(rows done, lost, wrong) from per-row ``(request, text or None)`` pairs of a baseline."""
    settings = pairwise.JudgeSettings.parse({"sampling_count": sc.samples})
    done = lost = wrong = 0
    for index, example in enumerate(examples):
        pairs = answers.get(index, [])
        if len(pairs) < sc.samples:
            continue  # not (completely) attempted: the time limit stopped it
        done += 1
        samples = [
            pairwise.to_sample(
                r, ModelOutput(text=t) if t is not None else ModelOutput.failure(ErrorKind.FATAL, "lost"), settings
            )
            for r, t in pairs
        ]
        if any(s.choice == "ERROR" for s in samples):
            lost += 1
        elif pairwise.combine_samples(samples)[0] != expected[example["id"]]:
            wrong += 1
    return done, lost, wrong


# --- clients ----------------------------------------------------------------------------------------
def run_ours(
    sc: Scenario,
    examples: list[dict[str, Any]],
    expected: dict[str, str],
    cache_dir: str,
    *,
    model_spec: str = MODEL,
    url: str | None = None,
    name: str = "ours",
) -> tuple[Result, list[dict[str, Any]]]:
    """``autosxs.judge_examples`` as a pipeline step calls it; the Model it builds is kept to read its stats."""
    built: list[Model] = []
    real_get_model = pairwise_judge.get_model

    def recording_get_model(spec: str, config: GenerateConfig | None = None) -> Model:
        built.append(real_get_model(spec, config))
        return built[-1]

    params: dict[str, Any] = {
        "sampling_count": sc.samples,
        "max_concurrency": sc.concurrency,
        "cache_dir": cache_dir,
        "progress": False,
    }
    if url:
        params["base_url"] = url
    if not sc.declared:  # defaults only: no concurrency, quota or retry settings
        params = {k: v for k, v in params.items() if k in ("cache_dir", "progress", "base_url")}
    if sc.quota_rpm and sc.declared:
        params["requests_per_minute"] = sc.quota_rpm  # the quota the user was given
    pairwise_judge.get_model = recording_get_model  # type: ignore[assignment]
    try:
        started = time.perf_counter()
        judgments, _, summary = autosxs.judge_examples(
            examples=examples, task=TASK, id_columns=["id"], autorater_model=model_spec, autorater_parameters=params
        )
        seconds = time.perf_counter() - started
    finally:
        pairwise_judge.get_model = real_get_model  # type: ignore[assignment]
    result = score_judgments(name, examples, expected, judgments, seconds, summary.retries, built[-1].stats.latency)
    return result, judgments


def score_judgments(
    name: str,
    examples: list[dict[str, Any]],
    expected: dict[str, str],
    judgments: list[dict[str, Any]],
    seconds: float,
    retries: int,
    latency: LatencyHistogram,
) -> Result:
    """Count successful calls, lost rows (no complete judgment, or duplicated) and wrong verdicts."""
    ids = [j["id"] for j in judgments]
    complete = [j for j in judgments if j["choice"] != "ERROR" and not any(s["error"] for s in j["samples"])]
    ok_calls = sum(1 for j in judgments for s in j["samples"] if not s["error"])
    lost = len(examples) - len({j["id"] for j in complete}) + (len(ids) - len(set(ids)))
    wrong = sum(1 for j in complete if j["choice"] != expected[j["id"]])
    errors = sum(j["choice"] == "ERROR" for j in judgments)
    note = f"{errors} ERROR rows" if errors else ""
    return Result(name, ok_calls, seconds, len(judgments), lost, wrong, retries, latency, {}, note=note)


def run_shards(
    sc: Scenario,
    examples: list[dict[str, Any]],
    expected: dict[str, str],
    cache_dir: str,
    url: str,
    shards: int,
    *,
    shared_pace: bool = True,
    late_s: float = 0.0,
) -> Result:
    """``shards`` processes at once, each judging every ``shards``-th example like a pipeline's judging shard.

    With ``shared_pace`` (the pipeline's way) the shards share their pace through files in a common directory
    (``models.shared_pace``): a declared quota is divided among the shards running now, an unknown one is
    found together. Without it a declared quota is split statically (``requests_per_minute / shards``) and an
    unknown one is found by each shard alone. ``late_s``: the last shard starts this much later (a task
    scheduled late). Time = first shard start to last shard end (imports excluded).
    """
    import multiprocessing

    params: dict[str, Any] = {"cache_dir": cache_dir, "progress": False, "base_url": url}
    if sc.declared:
        params.update(sampling_count=sc.samples, max_concurrency=sc.concurrency)
        if sc.quota_rpm:
            params["requests_per_minute"] = sc.quota_rpm  # the whole quota; each shard takes its share
    pace_dir = f"{cache_dir}.pace" if shared_pace else None  # the pipeline uses one under its root
    delays = [late_s if i == shards - 1 else 0.0 for i in range(shards)]
    jobs = [(examples, i, shards, params, TASK, MODEL, pace_dir, delays[i]) for i in range(shards)]
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(shards, mp_context=context, initializer=_shard_worker.import_sdk) as pool:
        list(pool.map(_shard_worker.wait, range(shards)))  # every worker has imported the SDK
        done = list(pool.map(_shard_worker.judge_shard, jobs))
    judgments = [j for shard, *_ in done for j in shard]
    seconds = max(end for _, _, end, _ in done) - min(start for _, start, _, _ in done)
    retries = sum(r for *_, r in done)
    name = f"ours, {shards} shards" + ("" if shared_pace else ", static")
    return score_judgments(name, examples, expected, judgments, seconds, retries, LatencyHistogram())


def run_sequential(
    sc: Scenario, examples: list[dict[str, Any]], expected: dict[str, str], url: str, time_limit_s: float
) -> Result:
    """Naive: one call at a time with google-genai, a fixed 1 s sleep after any failure (8 retries)."""
    client, config, errors = _sync_client(url)
    answers: dict[int, list[Any]] = {}
    latency, retries, ok = LatencyHistogram(), 0, 0
    started = time.perf_counter()
    for index, request in workload(sc, examples):
        if time.perf_counter() - started > time_limit_s and index not in answers:
            break
        text = None
        for _attempt in range(9):
            t0 = time.perf_counter()
            try:
                text = client.models.generate_content(model=MODEL, contents=request.parts[0], config=config).text
                latency.add(time.perf_counter() - t0)
                break
            except errors.APIError as exc:
                if exc.code != 429 and (exc.code or 0) < 500:
                    break
                retries += 1
                time.sleep(1.0)
        ok += text is not None
        answers.setdefault(index, []).append((request, text))
    seconds = time.perf_counter() - started
    done, lost, wrong = score_rows(sc, examples, expected, answers)
    return Result("sequential", ok, seconds, done, lost, wrong, retries, latency, {}, note=_limit_note(done, sc))


def run_threadpool(
    sc: Scenario, examples: list[dict[str, Any]], expected: dict[str, str], url: str, time_limit_s: float
) -> Result:
    """Naive: ``concurrency`` threads calling google-genai, tenacity retries on 429/5xx."""
    import tenacity

    client, config, errors = _sync_client(url)
    lock = threading.Lock()
    latency, counters = LatencyHistogram(), {"retries": 0, "ok": 0}
    answers: dict[int, list[Any]] = {}

    def retryable(exc: BaseException) -> bool:
        return isinstance(exc, errors.APIError) and (exc.code == 429 or (exc.code or 0) >= 500)

    def count_retry(_state: Any) -> None:
        with lock:
            counters["retries"] += 1

    @tenacity.retry(
        retry=tenacity.retry_if_exception(retryable),
        wait=tenacity.wait_random_exponential(multiplier=1, max=60),
        stop=tenacity.stop_after_attempt(9),
        before_sleep=count_retry,
        reraise=True,
    )
    def call(request: ModelRequest) -> str | None:
        t0 = time.perf_counter()
        text = client.models.generate_content(model=MODEL, contents=request.parts[0], config=config).text
        with lock:
            latency.add(time.perf_counter() - t0)
        return text

    started = time.perf_counter()

    def one(index: int, request: ModelRequest) -> None:
        if time.perf_counter() - started > time_limit_s:
            return
        try:
            text = call(request)
        except Exception:  # noqa: BLE001 - a lost call, counted below
            text = None
        with lock:
            counters["ok"] += text is not None
            answers.setdefault(index, []).append((request, text))

    with ThreadPoolExecutor(max_workers=sc.concurrency) as pool:
        for index, request in workload(sc, examples):
            pool.submit(one, index, request)
    seconds = time.perf_counter() - started
    done, lost, wrong = score_rows(sc, examples, expected, answers)
    note = _limit_note(done, sc)
    return Result("threadpool", counters["ok"], seconds, done, lost, wrong, counters["retries"], latency, {}, note=note)


def _limit_note(done: int, sc: Scenario) -> str:
    return f"time-limited: {done} of {sc.rows} rows" if done < sc.rows else ""


def _sync_client(url: str) -> tuple[Any, dict[str, Any], Any]:
    import google.oauth2.credentials
    from google import genai
    from google.genai import errors, types

    client = genai.Client(
        vertexai=True,
        project="local",
        location="us-central1",
        credentials=google.oauth2.credentials.Credentials(token="x"),  # type: ignore[no-untyped-call]
        http_options=types.HttpOptions(base_url=url, retry_options=types.HttpRetryOptions(attempts=1)),
    )
    config = {"response_mime_type": "application/json", "response_json_schema": SCHEMA}
    return client, config, errors


def emulator_ceiling(sc: Scenario, examples: list[dict[str, Any]], url: str, n: int) -> float:
    """Calls/s a lean aiohttp client gets from the emulator with the same bodies (no SDK, no our layer)."""
    import aiohttp

    from autorater_pipelines.models.providers.vertex import GeminiProvider

    provider = GeminiProvider(MODEL, GenerateConfig(base_url=url), mode="vertex")
    bodies = [provider.request_body(r) for _, (_, r) in zip(range(n), workload(sc, examples), strict=False)]
    target = f"{url}/v1beta1/projects/local/locations/us-central1/{provider._path}"

    async def run() -> float:
        connector = aiohttp.TCPConnector(limit=sc.concurrency)
        async with aiohttp.ClientSession(connector=connector, headers={"Authorization": "Bearer x"}) as session:
            queue = iter(bodies)

            async def worker() -> None:
                for body in queue:
                    async with session.post(target, json=body) as answer:
                        await answer.read()

            started = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(sc.concurrency)))
            return len(bodies) / (time.perf_counter() - started)

    return asyncio.run(run())


class _FakeJudge(Provider):
    """In-process provider registered like a real one: sleeps ``latency`` and answers like the length judge."""

    latency_s = 0.05

    async def generate(self, request: ModelRequest) -> ModelOutput:
        await asyncio.sleep(self.latency_s)
        responses = responses_in_prompt(str(request.parts[0]))
        fake = type("R", (), {"prompt_text": str(request.parts[0])})()
        return ModelOutput(text=length_judge(fake) if responses else "{}")


@contextlib.contextmanager
def fake_provider_registered() -> Iterator[str]:
    """Register ``benchfake/`` like a real provider for the duration (the registry is process-global)."""
    from autorater_pipelines.models import _registry

    @register_provider("benchfake", pip_package="autorater-pipelines")
    def _load() -> Callable[[str, GenerateConfig], Provider]:
        return lambda name, config: _FakeJudge("benchfake", name, config)

    try:
        yield "benchfake/judge"
    finally:
        _registry._REGISTRY.pop("benchfake", None)


# --- report -----------------------------------------------------------------------------------------
def ms(value: float | None) -> str:
    return f"{value * 1000:.0f}" if value is not None else "-"


def print_table(sc: Scenario, results: list[Result]) -> None:
    print(
        f"{'client':<14}{'ok calls':>9}{'secs':>8}{'calls/s':>9}{'/ideal':>8}{'p50 ms':>8}{'p99 ms':>8}"
        f"{'retries':>9}{'att/ok':>7}{'lost':>6}{'wrong':>6}  emulator answers / note"
    )
    for r in results:
        statuses = ", ".join(f"{k}×{v}" for k, v in r.emulator.get("by_status", {}).items())
        print(
            f"{r.name:<14}{r.ok_calls:>9}{r.seconds:>8.2f}{r.rate:>9.1f}{r.rate / sc.ideal:>8.3f}"
            f"{ms(r.latency.quantile(0.5)):>8}{ms(r.latency.quantile(0.99)):>8}{r.retries:>9}"
            f"{r.attempts_per_success:>7.2f}{r.lost_rows:>6}"
            f"{r.wrong_rows:>6}  {statuses}{'; ' + r.note if r.note else ''}"
        )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="the acceptance setting: defaults below, baselines limited")
    p.add_argument("--calls", type=int, default=600, help="judge calls of the workload (rows = calls / samples)")
    p.add_argument("--samples", type=int, default=2, help="sampling_count: calls per row (default: 2)")
    p.add_argument("--latency-ms", type=float, default=50.0, help="emulator latency per answer (default: 50)")
    p.add_argument("--quota-rpm", type=float, default=1200.0, help="emulator quota, requests/min; 0 = none")
    p.add_argument("--quota-burst", type=float, default=None, help="quota bucket size (default: 1 s of quota)")
    p.add_argument("--fault-rate", type=float, default=0.1, help="random fault probability (default: 0.1)")
    p.add_argument("--fault-statuses", default="429,503", help="statuses of random faults (default: 429,503)")
    p.add_argument("--concurrency", type=int, default=32, help="max calls in flight (default: 32)")
    p.add_argument("--repeat", type=int, default=1, help="runs of ours, fault seeds seed, seed+1, ... (worst reported)")
    p.add_argument("--baselines", default="sequential,threadpool", help="comma list, or 'none'")
    p.add_argument("--baseline-time-limit-s", type=float, default=None, help="stop baselines starting calls after")
    p.add_argument(
        "--unknown-quota",
        action="store_true",
        help="ours runs with defaults only: no requests_per_minute (the usual case on Vertex AI), max_concurrency 32",
    )
    p.add_argument(
        "--shards",
        type=int,
        default=0,
        help="also run ours as this many parallel shard processes sharing the quota (declared quota divided)",
    )
    p.add_argument(
        "--static-split",
        action="store_true",
        help="with --shards: no shared pace (a declared quota split statically, an unknown one found by each alone)",
    )
    p.add_argument("--late-shard-s", type=float, default=0.0, help="with --shards: the last shard starts this late")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", default=None, help="also write the results as JSON here")
    args = p.parse_args(argv)
    if args.baseline_time_limit_s is None:
        args.baseline_time_limit_s = 20.0 if args.quick else 600.0
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    statuses = tuple(int(s) for s in args.fault_statuses.split(",") if s.strip())
    burst = args.quota_burst if args.quota_burst else (args.quota_rpm / 60.0 if args.quota_rpm else None)
    sc = Scenario(
        args.calls,
        args.samples,
        args.latency_ms / 1000.0,
        args.quota_rpm,
        burst,
        args.fault_rate,
        statuses,
        32 if args.unknown_quota else args.concurrency,
        args.seed,
        declared=not args.unknown_quota,
    )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"workload: {sc.rows} rows × {sc.samples} samples = {sc.rows * sc.samples} judge calls; latency "
        f"{args.latency_ms:g} ms; quota {f'{sc.quota_rpm:g} rpm (burst {burst:g})' if sc.quota_rpm else 'none'}; "
        f"faults {sc.fault_rate:.0%} {statuses}; concurrency {sc.concurrency}; ideal {sc.ideal:.1f} calls/s; "
        f"load average {load:.2f} on {os.cpu_count()} CPUs"
    )
    started = time.perf_counter()
    import google.oauth2.credentials  # noqa: F401 - SDK imports (~1-3 s, once per process) are not throughput

    import autorater_pipelines.models.providers.vertex  # noqa: F401

    print(f"imported google-genai in {time.perf_counter() - started:.1f} s (once per process; not timed below)")
    results: list[Result] = []
    ours: list[Result] = []
    rerun_calls = 0
    with tempfile.TemporaryDirectory(prefix="judge-bench-") as tmp:
        examples, expected = make_examples(sc, Path(tmp))
        for attempt in range(args.repeat):
            cache = os.path.join(tmp, f"cache-{attempt}")
            with Emulator(dataclasses.replace(sc, seed=sc.seed + attempt)) as emu:  # other faults each run
                if args.shards:
                    result = run_shards(
                        sc,
                        examples,
                        expected,
                        cache,
                        emu.url,
                        args.shards,
                        shared_pace=not args.static_split,
                        late_s=args.late_shard_s,
                    )
                else:
                    result, judgments = run_ours(sc, examples, expected, cache, url=emu.url)
                result.emulator = emu.stats()
                if args.shards:  # the shards' judgments in dataset order, from the cache they filled
                    _, judgments = run_ours(sc, examples, expected, cache, url=emu.url, name="merged")
                per_minute = result.emulator.get("max_calls_per_minute")
                result.note = (result.note + f" max {per_minute} calls in any 60 s;").strip()
                before = emu.stats()["calls"]
                _, rejudged = run_ours(sc, examples, expected, cache, url=emu.url, name="ours re-run")
                calls_again = emu.stats()["calls"] - before
                rerun_calls = max(rerun_calls, calls_again)
                if _verdicts(rejudged) != _verdicts(judgments):
                    result.note = "re-run judgments differ!"
                    rerun_calls = max(rerun_calls, 1)
            result.note = (result.note + f" re-run: {calls_again} model calls").strip()
            ours.append(result)
            results.append(result)
        for name in [b for b in args.baselines.split(",") if b and b != "none"]:
            runner = {"sequential": run_sequential, "threadpool": run_threadpool}[name]
            with Emulator(sc) as emu:
                result = runner(sc, examples, expected, emu.url, args.baseline_time_limit_s)
                result.emulator = emu.stats()
            results.append(result)
        ceilings = {}
        if not sc.quota_rpm:
            with Emulator(sc) as emu:
                ceilings["emulator (aiohttp, no SDK)"] = emulator_ceiling(sc, examples, emu.url, min(sc.calls, 4000))
            _FakeJudge.latency_s = sc.latency_s
            with fake_provider_registered() as spec:
                fake, _ = run_ours(sc, examples, expected, "off", model_spec=spec, name="ours, fake provider")
            results.append(fake)
    print_table(sc, results)
    for label, rate in ceilings.items():
        print(f"ceiling of {label}: {rate:.0f} calls/s")
    worst_ratio = min(r.rate for r in ours) / sc.ideal
    worst_lost = max(r.lost_rows + r.wrong_rows for r in ours)
    if len(ours) > 1:
        ratios = [r.rate / sc.ideal for r in ours]
        print(
            f"ours over {len(ours)} runs: ratio min {min(ratios):.3f} median {statistics.median(ratios):.3f} "
            f"max {max(ratios):.3f}"
        )
    print(f"re-run after completion: {rerun_calls} model calls")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "scenario": dataclasses.asdict(sc),
                    "ideal": sc.ideal,
                    "load_average": load,
                    "ceilings": ceilings,
                    "rerun_calls": rerun_calls,
                    "results": [
                        {
                            "name": r.name,
                            "ok_calls": r.ok_calls,
                            "seconds": r.seconds,
                            "rate": r.rate,
                            "ratio": r.rate / sc.ideal,
                            "p50_s": r.latency.quantile(0.5),
                            "p99_s": r.latency.quantile(0.99),
                            "retries": r.retries,
                            "lost_rows": r.lost_rows,
                            "attempts_per_success": r.attempts_per_success,
                            "wrong_rows": r.wrong_rows,
                            "emulator": r.emulator,
                            "note": r.note,
                        }
                        for r in results
                    ],
                },
                indent=2,
            )
        )
    print(f"throughput_ratio={worst_ratio:.3f} lost_rows={worst_lost}")
    return 0 if rerun_calls == 0 and worst_lost == 0 else 1


def _verdicts(judgments: list[dict[str, Any]]) -> list[Any]:
    return [(j["id"], j["choice"], j["confidence"], [s["raw_response"] for s in j["samples"]]) for j in judgments]


if __name__ == "__main__":
    sys.exit(main())
