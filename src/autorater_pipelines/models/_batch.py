"""Vertex AI batch prediction as a way to run :meth:`Model.generate` (``GenerateConfig.mode = "batch"``).

One ``generate`` run in batch mode::

    requests ──cache hit──▶ output (cached=True, attempts=0)
        │ misses, deduplicated by request id (first 32 hex digits of the sha256 cache key)
        ▼
    <batch_staging_uri>/<run id>/input.jsonl, one line per unique request:
        {"request": <GenerateContentRequest JSON with "labels": {"autorater_request": <id>}>}
        ▼
    client.batches.create(model, src=input.jsonl, dest=<run>/output)    POST .../batchPredictionJobs
        ▼ client.batches.get every batch_poll_interval_s until an end state (batch_timeout_s → cancel)
    every *.jsonl object under the job's output directory; lines {"request", "response", "status", ...}
        ▼ joined to requests by request.labels.autorater_request, never by line order
    outputs in input order; successes written to the response cache

Why ``labels``: Vertex AI's ``GenerateContentRequest`` has a ``labels`` map of user metadata (google-genai
sends ``GenerateContentConfig.labels`` there), batch output lines echo the request they answer, and the
value satisfies label rules (≤ 63 characters of lowercase letters, digits, ``_`` and ``-``).

Failures are explicit, never dropped:

- a line whose ``status`` is set → an error output (kind from an HTTP code in an embedded
  ``{"error": {"code": N}}`` body, else ``fatal``); a response without text → ``blocked``, parsed by the
  provider exactly as an online answer;
- a request with no output line → a ``transient`` error naming the job (a rerun resubmits only the
  requests that failed: the others come from the cache);
- a job that ends ``FAILED`` / ``CANCELLED`` / ``EXPIRED`` or times out → the lines it wrote are used, the
  rest carry the job's error; when it wrote none, :class:`ModelCallError` stops the run, as does a job that
  cannot be created (after retries of rate-limit / transient errors).

Models: Gemini publisher models (``gemini-2.5-flash``, ``publishers/google/models/M``) and Model Registry
models (``projects/P/locations/L/models/M[@version]``), which must accept Gemini ``generateContent``
requests (tuned Gemini models). Endpoints (``.../endpoints/E``) cannot run batch prediction jobs.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import random
import secrets
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast, runtime_checkable

from autorater_pipelines.errors import InputError, ModelCallError
from autorater_pipelines.models._cache import cache_key
from autorater_pipelines.models._config import GenerateConfig
from autorater_pipelines.models._provider import classify_status
from autorater_pipelines.models._types import ErrorKind, ModelError, ModelOutput, ModelRequest, Usage

if TYPE_CHECKING:
    from autorater_pipelines.models._cache_store import Store
    from autorater_pipelines.models._stats import CallStats

__all__ = ["ID_LABEL", "BatchBackend", "BatchJob", "check_batch_support", "generate_batch", "request_id"]

logger = logging.getLogger("autorater_pipelines.models")

ID_LABEL = "autorater_request"
"""Key of ``request.labels`` that carries our request id through a batch job."""

_ID_CHARS = 32
_ENDED = ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED")
_T = TypeVar("_T")


@dataclasses.dataclass(frozen=True)
class BatchJob:
    """What a provider reports about a batch prediction job.

    Attributes:
        name: Resource name, ``projects/P/locations/L/batchPredictionJobs/ID``.
        state: ``JOB_STATE_PENDING``, ``JOB_STATE_RUNNING``, ``JOB_STATE_SUCCEEDED``, ...
        output_directory: ``gs://`` directory the job writes its output files into, once known.
        error: The job's error message (failed or cancelled jobs), if any.
        successful_count: Lines answered successfully, when reported.
        failed_count: Lines that failed, when reported.
    """

    name: str
    state: str
    output_directory: str | None = None
    error: str | None = None
    successful_count: int | None = None
    failed_count: int | None = None


@runtime_checkable
class BatchBackend(Protocol):
    """What a provider offers to run batch prediction (``GeminiProvider`` on Vertex AI)."""

    provider: str
    name: str

    def batch_request(self, request: ModelRequest, labels: dict[str, str]) -> dict[str, Any]:
        """The ``request`` of one input line."""

    def create_batch_job(self, *, src: str, dest: str, display_name: str) -> BatchJob:
        """Submit a job reading ``src`` (JSONL) and writing under ``dest``."""

    def get_batch_job(self, name: str) -> BatchJob:
        """Read a job's state."""

    def cancel_batch_job(self, name: str) -> None:
        """Ask for a job to be cancelled."""

    def batch_output(self, response: dict[str, Any]) -> ModelOutput:
        """Parse an output line's ``response``."""

    def classify_error(self, exc: BaseException) -> ModelError:
        """Classify an SDK exception (rate limit / transient / fatal)."""


def request_id(key: str) -> str:
    """The id of a request in a batch job: the first 32 hex digits of its cache key."""
    return key[:_ID_CHARS]


def check_batch_support(spec: str, backend: object, config: GenerateConfig) -> None:
    """Refuse ``mode="batch"`` early when the model or the settings cannot run a batch job.

    Raises:
        InputError: not a Vertex AI Gemini model, an endpoint, or no ``batch_staging_uri``.
    """
    provider = getattr(backend, "provider", "?")
    if not isinstance(backend, BatchBackend) or provider != "vertex":
        raise InputError(
            f"mode='batch' runs Vertex AI batch prediction, but model {spec!r} uses provider {provider!r}, "
            "which has none; use mode='online', or a Vertex AI Gemini model (gemini-*, vertex/<model>, "
            "projects/P/locations/L/models/M) with a `project`.",
            source="mode",
        )
    if "/endpoints/" in backend.name:
        raise InputError(
            f"batch prediction jobs take a model, not an endpoint ({spec!r}); pass the deployed model's "
            "resource name projects/P/locations/L/models/M, or use mode='online'.",
            source="mode",
        )
    if not config.batch_staging_uri:
        raise InputError(
            "mode='batch' needs batch_staging_uri, a Cloud Storage prefix for the job's input and output "
            "files, e.g. 'gs://my-bucket/autorater-batch' (the Vertex AI service agent needs access to it).",
            source="batch_staging_uri",
        )


def generate_batch(
    provider: object,
    requests: Sequence[ModelRequest],
    *,
    spec: str,
    config: GenerateConfig,
    identity: dict[str, Any],
    cache: Store | None,
    stats: CallStats,
    desc: str = "model calls",
) -> list[ModelOutput]:
    """Answer ``requests`` with one batch prediction job (see the module docstring).

    Args:
        provider: The provider; it passed :func:`check_batch_support`.
        requests: The requests.
        spec: Model spec, for messages.
        config: The model's settings (``batch_*`` fields, retries of job calls).
        identity: ``Provider.cache_identity()``.
        cache: The response cache, or None.
        stats: The model's running totals, updated here (``calls`` counts submitted lines).
        desc: Label of the log lines.

    Returns:
        One output per request, in input order.

    Raises:
        ModelCallError: the job could not be created, polled, or answered nothing at all.
        InputError: the staging files could not be written (bad bucket, no permission).
    """
    backend = cast(BatchBackend, provider)
    started = time.monotonic()
    keys = [cache_key(identity, request, config) for request in requests]
    outputs: list[ModelOutput | None] = [None] * len(requests)
    pending: dict[str, list[int]] = {}  # request id -> indexes, in input order
    for index, key in enumerate(keys):
        hit = cache.get(key) if cache is not None else None
        if hit is not None:
            stats.cache_hits += 1
            outputs[index] = hit
        else:
            pending.setdefault(request_id(key), []).append(index)
    if pending:
        answers = _run_job(backend, {rid: requests[ix[0]] for rid, ix in pending.items()}, spec, config, desc)
        stats.calls += len(pending)
        for rid, indexes in pending.items():
            output = answers[rid]
            if output.ok and cache is not None:
                cache.put(keys[indexes[0]], output)
            outputs[indexes[0]] = output
            for index in indexes[1:]:  # an identical request: answered once, like a cache hit
                stats.cache_hits += output.ok
                outputs[index] = dataclasses.replace(output, usage=Usage(), cached=output.ok, attempts=0)
    done = [o for o in outputs if o is not None]
    stats.requests += len(done)
    failed = sum(1 for o in done if o.error is not None)
    stats.failures += failed
    usage = sum((o.usage for o in done), Usage())
    stats.usage = stats.usage + usage
    logger.info(
        "%s (%s, batch): %d requests, %d submitted, %d cache hits, %d failures, %d input / %d output tokens in %.1f s",
        desc,
        spec,
        len(done),
        len(pending),
        len(done) - sum(len(ix) for ix in pending.values()),
        failed,
        usage.input_tokens,
        usage.output_tokens,
        time.monotonic() - started,
    )
    return done


def _run_job(
    backend: BatchBackend, requests: dict[str, ModelRequest], spec: str, config: GenerateConfig, desc: str
) -> dict[str, ModelOutput]:
    """Stage, submit, poll and read one job; return an output for every request id."""
    from autorater_pipelines.io import filesystem_for

    run_id = f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{secrets.token_hex(4)}"
    root = f"{str(config.batch_staging_uri).rstrip('/')}/{run_id}"
    input_uri, output_uri = f"{root}/input.jsonl", f"{root}/output"
    storage, _ = filesystem_for(input_uri)
    storage.write_atomic(
        input_uri,
        (
            json.dumps({"request": backend.batch_request(request, {ID_LABEL: rid})}, ensure_ascii=False).encode()
            + b"\n"
            for rid, request in requests.items()
        ),
    )
    started = time.monotonic()
    job = _retrying(
        lambda: backend.create_batch_job(src=input_uri, dest=output_uri, display_name=f"autorater-{run_id}"),
        backend,
        config,
        f"creating a batch prediction job for {spec!r} (input {input_uri})",
    )
    logger.info("%s: batch job %s submitted with %d requests (%s)", desc, job.name, len(requests), input_uri)
    job, timed_out = _wait_for_job(backend, job, started, config, desc)
    elapsed = time.monotonic() - started
    directory = (job.output_directory or output_uri).rstrip("/")
    answers = _read_outputs(backend, storage, directory, set(requests), elapsed)
    reason = _end_reason(job, timed_out, config)
    if not answers and job.state != "JOB_STATE_SUCCEEDED":
        raise ModelCallError(
            f"{reason}; it answered none of the {len(requests)} requests to {spec!r}. Input {input_uri}, "
            f"output {directory}. Check the model name, the project/location and the service agent's access "
            "to batch_staging_uri, or raise batch_timeout_s."
        )
    missing = f"{reason}, and its output ({directory}) has no line for this request"
    return {
        rid: answers.get(rid) or ModelOutput.failure(ErrorKind.TRANSIENT, f"{missing} ({ID_LABEL}={rid})")
        for rid in requests
    }


def _wait_for_job(
    backend: BatchBackend, job: BatchJob, started: float, config: GenerateConfig, desc: str
) -> tuple[BatchJob, bool]:
    """Poll ``job`` until it ends, or cancel it past ``batch_timeout_s``: (last state read, timed out)."""
    state = job.state
    while job.state not in _ENDED:
        if time.monotonic() - started >= config.batch_timeout_s:
            try:
                backend.cancel_batch_job(job.name)
            except Exception as exc:  # noqa: BLE001 - the outputs are reported either way
                logger.warning("could not cancel batch job %s: %s", job.name, backend.classify_error(exc).message)
            return job, True
        time.sleep(config.batch_poll_interval_s)
        job = _retrying(functools.partial(backend.get_batch_job, job.name), backend, config, f"reading {job.name}")
        if job.state != state:
            logger.info("%s: batch job %s is %s", desc, job.name, job.state)
            state = job.state
    return job, False


def _end_reason(job: BatchJob, timed_out: bool, config: GenerateConfig) -> str:
    """How the job ended, for the error of every request it did not answer."""
    if timed_out:
        return f"batch job {job.name} did not end within batch_timeout_s={config.batch_timeout_s:g} s and was cancelled"
    return f"batch job {job.name} ended in state {job.state}" + (f": {job.error}" if job.error else "")


def _read_outputs(
    backend: BatchBackend, storage: Any, directory: str, wanted: set[str], latency_s: float
) -> dict[str, ModelOutput]:
    """Parse every ``*.jsonl`` object under ``directory``; keep the first line per wanted request id."""
    answers: dict[str, ModelOutput] = {}
    unknown = malformed = 0
    for uri in storage.glob(f"{directory}/**.jsonl"):
        for raw in storage.read_bytes(uri).decode("utf-8").splitlines():
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
                rid = line["request"]["labels"][ID_LABEL]
            except (ValueError, TypeError, KeyError):
                malformed += 1
                continue
            if rid not in wanted:
                unknown += 1
            elif rid not in answers:
                answers[rid] = dataclasses.replace(_line_output(backend, line), latency_s=latency_s)
    if unknown or malformed:
        logger.warning(
            "batch output %s: ignored %d lines of other requests and %d lines without a readable %s label",
            directory,
            unknown,
            malformed,
            ID_LABEL,
        )
    return answers


def _line_output(backend: BatchBackend, line: dict[str, Any]) -> ModelOutput:
    status = line.get("status")
    response = line.get("response")
    if status:
        text = status if isinstance(status, str) else json.dumps(status)
        return ModelOutput.failure(_status_kind(status), f"batch line failed: {text}", status_code=_status_code(status))
    if not isinstance(response, dict):
        return ModelOutput.failure(ErrorKind.FATAL, "batch line has neither a status nor a response")
    try:
        return backend.batch_output(response)
    except Exception as exc:  # noqa: BLE001 - a malformed answer is this request's error, not the run's
        return ModelOutput.failure(ErrorKind.FATAL, f"unreadable batch response: {type(exc).__name__}: {exc}")


def _status_code(status: Any) -> int | None:
    """HTTP code of an error body embedded in a line's ``status`` (``... {"error": {"code": 429}}``)."""
    body: Any = status
    if isinstance(status, str):
        start = status.find("{")
        try:
            body = json.loads(status[start:]) if start >= 0 else None
        except ValueError:
            body = None
    error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, int) and 100 <= code <= 599 else None


def _status_kind(status: Any) -> ErrorKind:
    code = _status_code(status)
    return classify_status(code, "").kind if code is not None else ErrorKind.FATAL


def _retrying(call: Callable[[], _T], backend: BatchBackend, config: GenerateConfig, what: str) -> _T:
    """Run a job-management call, retrying rate-limit / transient errors like model calls."""
    attempt = 0
    while True:
        attempt += 1
        try:
            return call()
        except Exception as exc:  # noqa: BLE001 - classified below
            error = backend.classify_error(exc)
        if error.kind not in (ErrorKind.RATE_LIMIT, ErrorKind.TRANSIENT) or attempt > config.max_retries:
            raise ModelCallError(
                f"{what} failed after {attempt} attempt(s): {error.kind.value}"
                f"{f' (HTTP {error.status_code})' if error.status_code else ''}: {error.message}"
            )
        delay = error.retry_after_s
        if delay is None:
            delay = random.uniform(0.0, min(config.max_backoff_s, config.initial_backoff_s * 2 ** (attempt - 1)))
        logger.debug("%s: attempt %d failed (%s); retrying in %.2f s", what, attempt, error.message, delay)
        time.sleep(delay)
