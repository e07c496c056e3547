"""One configuration for generation and for how calls are made (units in every field).

Every numeric field carries its range (:class:`~autorater_pipelines.bounds.Bound`), written once: the pipeline
parameters' bounds (:data:`autorater_pipelines.evaluation.parameters.BOUNDS`) are read from these fields.

Upper bounds keep a typo from exhausting the machine (``max_concurrency`` 1e8 opens 1e8 tasks); they are far
above any useful value: 1024 calls in flight, a week for a batch job, 20 log-probabilities (Gemini's and
OpenAI's maximum).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pydantic

from autorater_pipelines.bounds import Bound
from autorater_pipelines.errors import InputError

__all__ = ["GenerateConfig", "GenerationSettings", "base_url_problem"]

_DAY = 86_400


def _reason(error: Any) -> str:
    """A pydantic error's message without pydantic's ``Value error,`` prefix (our validators' text reads alone)."""
    return str(error["msg"]).removeprefix("Value error, ")


def base_url_problem(url: str | None) -> str | None:
    """Why ``url`` cannot be an endpoint (``base_url``, ``$OPENAI_BASE_URL`` …), or None when it can.

    The reason reads after the value: ``base_url='ftp://h': is not an http(s) URL (its scheme is 'ftp://'); …``.

    An endpoint is an ``http://`` or ``https://`` URL with a host (and optional port and path); empty or None
    means "none". Every provider sends HTTP, so ``ftp://h``, ``127.0.0.1:8080`` (no scheme) or ``not a url``
    would fail at the first call (or stall until the run stops): they are refused before any call.
    """
    import urllib.parse

    if url is None or url == "":
        return None
    if not isinstance(url, str):
        return f"must be an http:// or https:// URL, got {url!r}"
    parts = urllib.parse.urlsplit(url.strip())
    fix = "write it as http://HOST:PORT[/path] or https://HOST[/path], e.g. 'http://127.0.0.1:8080/v1'"
    if parts.scheme.lower() not in ("http", "https"):
        what = (
            f"its scheme is {parts.scheme + '://'!r}" if parts.scheme and "//" in url else "it has no http(s):// scheme"
        )
        return f"is not an http(s) URL ({what}); {fix}"
    try:
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError:
        return f"has an invalid port; {fix}"
    if not parts.hostname or any(ch.isspace() for ch in url.strip()):
        return f"names no valid host; {fix}"
    return None


class GenerationSettings(pydantic.BaseModel):
    """What a model is asked to generate with: every field is sent to the provider with each request.

    The response cache hashes this whole model into its key (``models/_cache.py``, from
    :attr:`GenerateConfig.generation`), so a setting added here can never serve answers generated with
    another value of it. A setting that changes the answers belongs here; how calls are made (connection,
    concurrency, retries, cache, batch mode) does not. ``structured_output`` and ``max_input_tokens`` stay
    in :class:`GenerateConfig`: one decides how the response schema is sent (and ``auto`` is resolved per
    endpoint at run time), the other only refuses prompts before any call.
    """

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    temperature: Annotated[float | None, Bound("number", 0, 2)] = None
    """Sampling temperature (provider default when None)."""
    max_output_tokens: Annotated[int | None, Bound("integer", 1, 1_000_000)] = None
    """Maximum generated tokens per call (provider default when None)."""
    top_p: Annotated[float | None, Bound("number", 0, 1, low_exclusive=True)] = None
    """Nucleus-sampling probability mass in (0, 1]."""
    seed: Annotated[int | None, Bound("integer", -(2**31), 2**31 - 1)] = None
    """Provider sampling seed, when supported."""
    logprobs: Annotated[int | None, Bound("integer", 0, 20)] = None
    """Number of top alternatives per generated token to return log-probabilities for (None = off)."""


class GenerateConfig(GenerationSettings):
    """Generation settings (:class:`GenerationSettings`, the fields above) and call-execution settings.

    Built from a pipeline's ``*_parameters`` dict with :meth:`from_params`; unknown keys are an error
    that lists the valid ones.
    """

    # Field docstrings become descriptions (their JSON schema; `autorater params` lists them).
    model_config = pydantic.ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    # --- how the response schema is sent, what is refused before a call ----------------------
    structured_output: Literal["auto", "json_schema", "json_object", "prompt"] = "auto"
    """How a response schema is sent: ``json_schema`` (enforced by the server), ``json_object`` (server
    guarantees JSON; schema in the prompt), ``prompt`` (schema in the prompt, answer parsed tolerantly), or
    ``auto``: the strongest the endpoint accepts, found from its first refusal and kept for the run
    (``models/_structured.py``)."""
    max_input_tokens: Annotated[int | None, Bound("integer", 1, 100_000_000)] = None
    """Context window of the model in tokens. A prompt estimated longer (1 token per 6 characters, a low
    estimate) fails without a call. None = the window the server reports on ``/v1/models`` (llama.cpp
    ``n_ctx``/``n_ctx_train``, vLLM ``max_model_len``), when it does (OpenAI-compatible servers only)."""

    # --- connection ------------------------------------------------------------------------
    base_url: str | None = None
    """Endpoint override, an ``http://`` or ``https://`` URL with a host, e.g. ``http://127.0.0.1:8080``
    (emulators, proxies, vLLM, Ollama); empty = none."""
    api_version: str | None = pydantic.Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$")
    """Gemini models only: the API version in the request path (google-genai's ``HttpOptions.api_version``), e.g.
    ``v1`` for a server that serves ``/v1/projects/…:generateContent``; None = google-genai's default (``v1beta1``
    on Vertex AI, ``v1beta`` on the Gemini Developer API). An OpenAI-compatible server's version is part of its
    ``base_url`` (``http://host:8080/v1``)."""
    project: str | None = None
    """Google Cloud project for Vertex AI (pipeline ``project`` parameter)."""
    location: str | None = None
    """Google Cloud region for Vertex AI (pipeline ``location`` parameter)."""

    # --- execution -------------------------------------------------------------------------
    max_concurrency: Annotated[int, Bound("integer", 1, 1024)] = 32
    """Maximum calls in flight at once. Without ``requests_per_minute`` a run probes the unknown quota with a slow
    start: 4 calls in flight (1 per judging shard), one more per success, up to this bound."""
    adaptive_concurrency: bool = True
    """Halve the calls in flight when timeouts and 5xx answers make up 30 % or more of the last 20 attempts,
    and grow back by one per window of successes (AIMD), never above ``max_concurrency``."""
    requests_per_minute: Annotated[float | None, Bound("number", 0, 1_000_000, low_exclusive=True)] = None
    """Declared quota in requests per minute: a ceiling on call starts (None = none). Cache hits do not
    count. Models of one process calling the same endpoint, project, region and model share one limiter;
    a pipeline that judges in N parallel shards gives each shard ``requests_per_minute / N``."""
    adaptive_rate: bool = True
    """Find the sustainable rate from the server's answers when the quota is unknown (AIMD: a 429 that
    carries a wait hint, or 429s making up 20 % of the last 20 attempts, halve the pace but not below
    0.95 × the calls per second that succeeded over the last 2 s; each success adds back about 5 % per
    second), never above ``requests_per_minute``."""
    max_retries: Annotated[int, Bound("integer", 0, 100)] = 8
    """Retries after the first attempt for transient errors (timeouts, connection errors, 5xx; 0 = no
    retry). Rate-limit answers (429) do not use it up while they are the endpoint's quota: a rate-limited
    call waits its turn again for as long as the endpoint makes progress (see ``max_stall_s``). A call
    refused with 429 again and again while the endpoint answers other calls is refused for itself: it gets
    this many retries, each after a backoff of its own that doubles (from ``initial_backoff_s``), and at most
    ``max_stall_s`` seconds, then fails with the server's message. A 429 saying the request alone exceeds
    the limit (OpenAI's "Request too large … Limit X, Requested Y") is not retried at all."""
    initial_backoff_s: Annotated[float, Bound("number", 0, 3600, low_exclusive=True)] = 0.5
    """First retry delay in seconds (as the OpenAI SDK). It doubles with each retry of a request only while
    the endpoint is in trouble (fewer than half of the last 20 attempts of any call succeeded); with
    sporadic faults every retry waits at most this long. Each delay is drawn uniformly from [0, delay]
    (full jitter), capped by ``max_backoff_s``. A server's wait hint (``Retry-After``, ``RetryInfo``) wins."""
    max_backoff_s: Annotated[float, Bound("number", 0, _DAY, low_exclusive=True)] = 60.0
    """Longest delay between retries in seconds (a longer server wait hint is still honoured, up to
    ``max_retry_after_s``)."""
    max_retry_after_s: Annotated[float, Bound("number", 0, _DAY, low_exclusive=True)] = 300.0
    """Longest server-requested wait in seconds (``Retry-After`` / ``RetryInfo.retryDelay``) that is
    honoured; a call asked to wait longer fails with a rate-limit error that says so."""
    max_stall_s: Annotated[float, Bound("number", 0, _DAY, low_exclusive=True)] = 60.0
    """A call keeps being retried while the endpoint makes progress; when no call to the endpoint has
    succeeded for this many seconds (server-requested waits excluded; at most 20 s for an endpoint that has
    not answered once), the run stops and its remaining calls fail with the reason. Also the longest a call
    refused for itself with 429 (see ``max_retries``) is retried."""
    timeout_s: Annotated[float, Bound("number", 0, _DAY, low_exclusive=True)] = 120.0
    """Per-attempt timeout in seconds."""
    max_consecutive_failures: Annotated[int, Bound("integer", 1, 1_000_000)] = 50
    """Stop the run (ModelCallError) after this many calls in a row failed after all retries."""
    heartbeat_s: Annotated[float, Bound("number", 0, _DAY, low_exclusive=True)] = 20.0
    """Seconds between two progress lines (logger ``autorater_pipelines.progress``, INFO) while calls run."""
    cache_dir: str | None = None
    """Response-cache directory; None = ``$AUTORATER_CACHE_DIR`` or ``~/.cache/autorater-pipelines``;
    the string ``"off"`` disables the cache."""
    progress: bool = True
    """Show a progress bar (tqdm) while calls run."""

    # --- batch prediction (models/_batch.py) -----------------------------------------------
    mode: Literal["online", "batch"] = "online"
    """``"online"``: one ``generateContent`` call per request. ``"batch"``: each ``Model.generate`` run
    becomes one Vertex AI batch prediction job (Vertex AI Gemini models only; cache hits are served first)."""
    batch_staging_uri: str | None = None
    """``gs://bucket/prefix`` where batch jobs' input and output files go (required with ``mode="batch"``;
    the Vertex AI service agent needs read and write access)."""
    batch_poll_interval_s: Annotated[float, Bound("number", 0, _DAY, low_exclusive=True)] = 30.0
    """Seconds between two status checks of a running batch job."""
    batch_timeout_s: Annotated[float, Bound("number", 0, 7 * _DAY, low_exclusive=True)] = 86400.0
    """Seconds to wait for a batch job to end; then it is cancelled and its unanswered requests are errors."""

    @pydantic.field_validator("base_url")
    @classmethod
    def _check_base_url(cls, value: str | None) -> str | None:
        problem = base_url_problem(value)
        if problem:
            raise ValueError(problem)
        return value

    @pydantic.field_validator("batch_staging_uri")
    @classmethod
    def _check_staging_uri(cls, value: str | None) -> str | None:
        if value is not None and (not value.startswith("gs://") or not value[len("gs://") :].strip("/")):
            raise ValueError("must be a Cloud Storage prefix such as 'gs://my-bucket/autorater-batch'")
        return value

    @property
    def generation(self) -> GenerationSettings:
        """The :class:`GenerationSettings` part of this config (what the cache key hashes)."""
        return GenerationSettings(**{name: getattr(self, name) for name in GenerationSettings.model_fields})

    @classmethod
    def from_params(
        cls, params: dict[str, Any] | None, *, source: str = "parameters", **overrides: Any
    ) -> GenerateConfig:
        """Build a config from a parameters dict, keeping only the keys this class knows.

        Args:
            params: e.g. ``autorater_parameters``; keys that are not fields are ignored here (the
                caller validates its own keys such as ``sampling_count``).
            source: Name of the parameter, for error messages.
            **overrides: Values that win over ``params`` (e.g. project/location).

        Raises:
            InputError: a value has the wrong type or range.
        """
        values = {k: v for k, v in (params or {}).items() if k in cls.model_fields}
        values.update({k: v for k, v in overrides.items() if v is not None})
        try:
            return cls(**values)
        except pydantic.ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}={e.get('input')!r}: {_reason(e)}" for e in exc.errors()
            )
            raise InputError(f"invalid model parameters: {problems}", source=source) from None
