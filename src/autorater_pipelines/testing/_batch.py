"""Emulated Vertex AI batch prediction jobs (``emulator.batch`` of a :class:`ModelEmulator`).

Routes, under ``/v1`` or ``/v1beta1``:

- ``POST /projects/P/locations/L/batchPredictionJobs`` creates a job (``JOB_STATE_PENDING``);
- ``GET .../batchPredictionJobs/ID`` reports it; each poll moves it on: ``PENDING`` → ``RUNNING`` →
  (at poll ``polls_to_finish``) the lines are answered and ``SUCCEEDED``;
- ``POST .../batchPredictionJobs/ID:cancel`` cancels a job that has not ended.

A job reads its JSONL input (``inputConfig.gcsSource.uris``) from Cloud Storage with google-cloud-storage
(``STORAGE_EMULATOR_HOST``, anonymous credentials: run ``gcp-storage-emulator``, e.g.
:class:`~autorater_pipelines.testing.cloud_emulators.StorageEmulator`). Each line's ``request`` goes
through the emulator like an online ``generateContent`` call (same :class:`EmulatedRequest`, responder,
injected failures and latency; it appears in ``emulator.requests``). Answers are written to
``<outputUriPrefix>/prediction-model-<time>/predictions.jsonl`` as Vertex AI writes them: one line
``{"status", "processed_time", "request", "response"}`` per input line, ``status`` empty on success and
``"<reason>: <error JSON>"`` on failure; lines are shuffled (seeded) so clients must join by their own id.
"""

from __future__ import annotations

import dataclasses
import datetime
import http
import json
import random
import re
import threading
from collections.abc import Callable
from typing import Any, Protocol

from autorater_pipelines.testing._bodies import error_body
from autorater_pipelines.testing._protocols import EmulatedRequest, parse_request

__all__ = ["BatchJobs", "EmulatedBatchJob", "is_batch_path"]


class Answering(Protocol):
    """What the batch jobs use of the emulator (:class:`~autorater_pipelines.testing._server.ModelEmulator`)."""

    def _handle(self, request: EmulatedRequest) -> tuple[int, dict[str, Any], dict[str, str]]:
        """Answer one request as the emulator answers it over HTTP: status, JSON body, headers."""
        ...


_PATH = re.compile(
    r"^/(?P<version>v1(?:beta1)?)/(?P<parent>projects/[^/]+/locations/[^/]+)/batchPredictionJobs"
    r"(?:/(?P<id>[^/:]+)(?P<cancel>:cancel)?)?$"
)
_ENDED = ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED")
_NOT_FOUND = 5  # google.rpc.Code NOT_FOUND, as in a job's `error`


def is_batch_path(path: str) -> bool:
    """Tell whether ``path`` is a batch-prediction-job route."""
    return _PATH.match(path.split("?", 1)[0]) is not None


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclasses.dataclass
class EmulatedBatchJob:
    """One batch prediction job received by the emulator.

    Attributes:
        name: ``projects/P/locations/L/batchPredictionJobs/ID``.
        model: The ``model`` of the create request, e.g. ``publishers/google/models/gemini-2.5-flash``.
        body: The create request's JSON body.
        state: Current ``JOB_STATE_*``.
        polls: ``GET`` requests answered for it.
        output_directory: ``gs://`` directory its output file goes to.
        requests: The input lines answered, as emulated requests, in input order.
        output_lines: Lines written to ``predictions.jsonl`` (after shuffling and dropping).
    """

    name: str
    model: str
    body: dict[str, Any]
    state: str = "JOB_STATE_PENDING"
    polls: int = 0
    output_directory: str = ""
    requests: list[EmulatedRequest] = dataclasses.field(default_factory=list)
    output_lines: int = 0
    error: dict[str, Any] | None = None
    create_time: str = dataclasses.field(default_factory=_now)
    update_time: str = dataclasses.field(default_factory=_now)
    successful: int = 0
    failed: int = 0

    def resource(self) -> dict[str, Any]:
        """The job as the REST API shows it (camelCase JSON)."""
        body: dict[str, Any] = {
            "name": self.name,
            "displayName": self.body.get("displayName", ""),
            "model": self.model,
            "inputConfig": self.body.get("inputConfig", {}),
            "outputConfig": self.body.get("outputConfig", {}),
            "state": self.state,
            "createTime": self.create_time,
            "updateTime": self.update_time,
        }
        if self.state != "JOB_STATE_PENDING":
            body["startTime"] = self.create_time
            body["outputInfo"] = {"gcsOutputDirectory": self.output_directory}
        if self.state in _ENDED:
            body["endTime"] = self.update_time
            body["completionStats"] = {  # int64 fields are JSON strings in Google REST APIs
                "successfulCount": str(self.successful),
                "failedCount": str(self.failed),
                "incompleteCount": "0",
            }
        if self.error is not None:
            body["error"] = self.error
        return body


class BatchJobs:
    """The batch prediction jobs of one emulator, and how they behave.

    Attributes:
        polls_to_finish: The ``GET`` at which a job runs its lines and succeeds (1 = the first poll).
        shuffle: Write output lines in a seeded random order (Vertex AI gives no order guarantee).
        drop: ``f(EmulatedRequest) -> bool``; True leaves that line out of the output (a lost line).
        fail_next: A message: the next job to run ends ``JOB_STATE_FAILED`` with this error and no output.
    """

    def __init__(self, emulator: Answering, *, seed: int = 0) -> None:
        self.polls_to_finish = 2
        self.shuffle = True
        self.drop: Callable[[EmulatedRequest], bool] | None = None
        self.fail_next: str | None = None
        self._emulator = emulator
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self._jobs: dict[str, EmulatedBatchJob] = {}

    @property
    def jobs(self) -> list[EmulatedBatchJob]:
        """Every job created so far, in creation order (a copy of the list)."""
        with self._lock:
            return list(self._jobs.values())

    def reset(self) -> None:
        """Forget every job."""
        with self._lock:
            self._jobs.clear()

    def handle(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Answer one batch-job request: ``(HTTP status, JSON body)``."""
        match = _PATH.match(path.split("?", 1)[0])
        if match is None:
            return 404, error_body("vertex", 404, f"no batch route {path!r}")
        with self._lock:
            if match["id"] is None:
                if method != "POST":
                    return 405, error_body("vertex", 405, "listing batch jobs is not emulated")
                return self._create(match["parent"], body)
            job = self._jobs.get(f"{match['parent']}/batchPredictionJobs/{match['id']}")
            if job is None:
                return 404, error_body("vertex", 404, f"batch prediction job {match['id']!r} not found")
            if match["cancel"]:
                if job.state not in _ENDED:
                    job.state, job.update_time = "JOB_STATE_CANCELLED", _now()
                    job.error = {"code": 1, "message": "cancelled by the caller"}
                return 200, {}
            if method != "GET":
                return 405, error_body("vertex", 405, f"{method} is not allowed on a batch job")
            job.polls += 1
            if job.state == "JOB_STATE_PENDING":
                job.state, job.update_time = "JOB_STATE_RUNNING", _now()
            if job.state == "JOB_STATE_RUNNING" and job.polls >= self.polls_to_finish:
                self._run(job, match["version"])
            return 200, job.resource()

    # --- internals ----------------------------------------------------------------------------
    def _create(self, parent: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        source = (body.get("inputConfig") or {}).get("gcsSource") or {}
        prefix = ((body.get("outputConfig") or {}).get("gcsDestination") or {}).get("outputUriPrefix")
        if not body.get("model") or not source.get("uris") or not prefix:
            message = "a batch job needs model, inputConfig.gcsSource.uris and outputConfig.gcsDestination"
            return 400, error_body("vertex", 400, message)
        name = f"{parent}/batchPredictionJobs/{len(self._jobs) + 1}"
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        job = EmulatedBatchJob(
            name, str(body["model"]), body, output_directory=f"{prefix.rstrip('/')}/prediction-model-{stamp}"
        )
        self._jobs[name] = job
        return 200, job.resource()

    def _run(self, job: EmulatedBatchJob, version: str) -> None:
        from autorater_pipelines.io import GcsFileSystem

        storage = GcsFileSystem()
        job.update_time = _now()
        if self.fail_next is not None:
            job.state, job.error, self.fail_next = "JOB_STATE_FAILED", {"code": 13, "message": self.fail_next}, None
            return
        lines: list[str] = []
        for uri in job.body["inputConfig"]["gcsSource"]["uris"]:
            try:
                lines.extend(storage.read_bytes(uri).decode("utf-8").splitlines())
            except Exception as exc:  # noqa: BLE001 - the job fails, as Vertex AI's would
                job.state, job.error = "JOB_STATE_FAILED", {"code": _NOT_FOUND, "message": f"cannot read {uri}: {exc}"}
                return
        out: list[dict[str, Any]] = []
        model = job.model.rsplit("/", 1)[-1]
        for raw in lines:
            if not raw.strip():
                continue
            line = self._answer(raw, model, f"/{version}/{job.name}", job)
            if line is not None:
                out.append(line)
        if self.shuffle:
            self._random.shuffle(out)
        storage.write_atomic(
            f"{job.output_directory}/predictions.jsonl", (json.dumps(line).encode() + b"\n" for line in out)
        )
        job.output_lines = len(out)
        job.state = "JOB_STATE_SUCCEEDED"

    def _answer(self, raw: str, model: str, path: str, job: EmulatedBatchJob) -> dict[str, Any] | None:
        try:
            line = json.loads(raw)
            body = line["request"]
            if not isinstance(body, dict):
                raise TypeError("request is not an object")
        except (ValueError, TypeError, KeyError) as exc:
            job.failed += 1
            error = error_body("vertex", 400, f"invalid input line: {exc}")
            return {"status": f"Bad Request: {json.dumps(error)}", "processed_time": _now(), "request": raw}
        request = parse_request(EmulatedRequest("vertex", model, path, {}, body))
        job.requests.append(request)
        status, payload, _headers = self._emulator._handle(request)
        if self.drop is not None and self.drop(request):
            return None
        if status == 200:
            job.successful += 1
            return {"status": "", "processed_time": _now(), "request": body, "response": payload}
        job.failed += 1
        reason = http.HTTPStatus(status).phrase if status in http.HTTPStatus._value2member_map_ else "Error"
        return {"status": f"{reason}: {json.dumps(payload)}", "processed_time": _now(), "request": body}
