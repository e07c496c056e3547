"""Gemini through google-genai: Vertex AI (``vertex``) or the Gemini Developer API (``gemini_api``).

Connection rules (docs/models.md "Model specs"):

- Vertex AI when a project is known (``config.project``, or the ``projects/P/locations/L/...`` resource
  in the spec); location = the resource's, else ``config.location``, else ``us-central1``.
- Otherwise the Gemini Developer API when ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY`` is set.
- Otherwise, when ``base_url`` is a loopback address (an emulator), Vertex AI with project ``local``.
  Without ``base_url``, ``$GOOGLE_VERTEX_BASE_URL`` (google-genai's own variable) is the Vertex AI endpoint
  and follows the same rules, so ``GOOGLE_VERTEX_BASE_URL=http://127.0.0.1:PORT`` sends every Vertex AI
  model of a run (autorater, model A, model B) to an emulator without changing the parameters.
- Otherwise an :class:`InputError` asks for a project or an API key.

Credentials: with a loopback ``base_url`` the client gets the static token ``"emulator"``
(``google.oauth2.credentials.Credentials(token="emulator")``): no Application Default Credentials
lookup and no metadata-server probe, so tests and offline demos work without a Google account. Any other
endpoint uses Application Default Credentials (``google.auth.default()``), resolved by google-genai on
the first call.

Usage: ``input_tokens`` = ``promptTokenCount``; ``output_tokens`` = ``candidatesTokenCount`` +
``thoughtsTokenCount`` (thinking tokens are billed as output).

Batch prediction (``GenerateConfig.mode = "batch"``, Vertex AI only): :meth:`GeminiProvider.batch_request`
builds the input lines, ``client.batches`` submits and polls the job, and output lines are parsed by the
same :func:`~._gemini_wire.read_response` as online answers; orchestration lives in
:mod:`autorater_pipelines.models._batch`.

The SDK's own retries are switched off explicitly (``HttpRetryOptions(attempts=1)``), which also
disables google-genai's hidden one-off retry of aiohttp connection errors; retries live in the model
wrapper only.

Request path: the ``generateContent`` body is built here in the wire format (the JSON the SDK itself
sends; ``tests/models/test_models_gemini.py`` checks it against the SDK's own conversion) and sent with the
SDK's transport (``BaseApiClient.async_request``: the same URL building, credentials, headers, timeouts
and ``APIError`` mapping). Going through ``client.aio.models.generate_content`` instead costs about 1–2 ms
of CPU per call in pydantic conversions of the request and the response (measured: 284 vs 477 calls/s at
concurrency 64 on 2 vCPU), which caps a judging run on one core. If a future SDK drops that transport
method, calls go through ``generate_content`` (same results, slower): ``_genai_transport.private_transport``
checks the method's shape when the provider starts, and the first answer's shape on the first call; when either check
fails, calls use the public path and one warning names the google-genai version and what changed
(``google-genai`` is bounded below its next major in pyproject.toml, and the image installs the locked
version; ``.ci/newest_sdks.sh`` runs these paths against the newest release allowed). The SDK's per-request decision
whether to use google-auth's async transport is taken once per client (:func:`~._genai_transport.pin_transport_choice`).
``ModelOutput.raw`` is the ``GenerateContentResponse`` JSON as the API sends it (camelCase keys).

Protocol: ``GenerateConfig.api_version`` is google-genai's ``HttpOptions.api_version`` (the path's version, e.g.
``v1`` for a server that serves ``/v1/...``; default ``v1beta1``/``v1beta``). A 404 names the URL requested and the
API version; an HTTP 200 answer that is not a ``GenerateContentResponse`` (a catch-all route's ``{}``, an HTML page)
is the error "this endpoint did not answer with a generateContent response" with the URL
(:func:`~autorater_pipelines.models._classify.wrong_protocol_error`), never an answer without text. In
``json_object``/``prompt`` mode the schema instruction is appended to the last text part (one part).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import google.auth.exceptions
from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from pydantic.alias_generators import to_camel

from autorater_pipelines.errors import InputError
from autorater_pipelines.models._batch import BatchJob
from autorater_pipelines.models._classify import classify_http_error, wrong_protocol_error
from autorater_pipelines.models._config import GenerateConfig
from autorater_pipelines.models._context import ContextWindow, check_fits, prompt_chars
from autorater_pipelines.models._gemini_target import gemini_target
from autorater_pipelines.models._provider import (
    Provider,
    ProviderError,
    display_url,
    parse_retry_after,
    retry_delay_from_google_details,
)
from autorater_pipelines.models._structured import (
    MODES,
    OutputMode,
    is_complete_json,
    schema_instruction,
    truncation_error,
    with_schema_instruction,
)
from autorater_pipelines.models._types import (
    ErrorKind,
    MediaPart,
    ModelError,
    ModelOutput,
    ModelRequest,
)
from autorater_pipelines.models.providers._gemini_wire import batch_job, model_path, read_response, wire_part
from autorater_pipelines.models.providers._genai_transport import (
    answered_url,
    log_fallback,
    pin_transport_choice,
    private_transport,
    request_url,
)

__all__ = ["GeminiProvider"]

_PUBLISHER_PREFIX = "publishers/google/models/"


class GeminiProvider(Provider):
    """Gemini models through one ``google.genai.Client`` (kept for the Model's lifetime).

    Args:
        name: Model name or resource name, e.g. ``gemini-2.5-flash`` or
            ``projects/P/locations/L/endpoints/E``.
        config: Connection and generation settings.
        mode: ``"auto"`` (rules in the module docstring), ``"vertex"`` or ``"gemini_api"``.

    Raises:
        InputError: no way to authenticate was given (no project, no API key, not an emulator).
    """

    def __init__(self, name: str, config: GenerateConfig, mode: str = "auto") -> None:
        target = gemini_target(name, config, mode)  # API, project, endpoint: decided without a client
        mode, project, location = target.mode, target.project, target.location
        http_options = types.HttpOptions(
            base_url=target.base_url,
            timeout=int(config.timeout_s * 1000),  # milliseconds
            api_version=config.api_version,  # None: google-genai's default (v1beta1 / v1beta)
            retry_options=types.HttpRetryOptions(attempts=1),  # no SDK retries (see module docstring)
        )
        if mode == "vertex":
            credentials = _emulator_credentials() if target.loopback else None
            self._client = genai.Client(
                vertexai=True,
                project=project,
                location=location,
                credentials=credentials,
                http_options=http_options,
            )
            super().__init__("vertex", name, config)
        else:
            if name.startswith(_PUBLISHER_PREFIX):
                name = name[len(_PUBLISHER_PREFIX) :]
            self._client = genai.Client(vertexai=False, api_key=target.api_key or "emulator", http_options=http_options)
            super().__init__("gemini_api", name, config)

        self._path = f"{model_path(self.name, vertex=mode == 'vertex')}:generateContent"
        self._endpoint = (self.provider, target.base_url or "", project or "", location, self.name)
        self._base_url = target.base_url
        self._project: str | None = project if mode == "vertex" else None
        self._location: str | None = location if mode == "vertex" else None
        api_client = getattr(self._client.aio, "_api_client", None)
        self._api_version = config.api_version or getattr(
            getattr(api_client, "_http_options", None), "api_version", None
        )
        self._request_url = request_url(api_client, self._path) or f"{self.endpoint_url} {self._path}"
        self._transport, problem = private_transport(api_client)
        if problem:
            log_fallback(problem)
        pin_transport_choice(api_client)

    @property
    def base_url(self) -> str | None:
        """The endpoint actually called: ``base_url``, else (Vertex AI) ``$GOOGLE_VERTEX_BASE_URL``; None = Google's.

        Part of the response-cache key, so answers of an emulator named by the environment are never served
        as answers of Google's endpoint (or of another emulator).
        """
        return self._base_url

    @property
    def endpoint_url(self) -> str:
        """The API host calls go to (``base_url`` without credentials, else Google's host)."""
        if self._base_url:
            return display_url(self._base_url) or "base_url"
        if self.provider == "gemini_api":
            return "https://generativelanguage.googleapis.com"
        region = "" if self._location == "global" else f"{self._location}-"
        return f"https://{region}aiplatform.googleapis.com"

    def quota_key(self) -> tuple[Any, ...]:
        """Provider, host, project, region and model: the unit Vertex AI counts quota in."""
        return (self.provider, self.endpoint_url, self._project, self._location, self.name)

    # ------------------------------------------------------------------------------------------
    async def generate(self, request: ModelRequest) -> ModelOutput:
        """Make one ``generateContent`` call (see :meth:`Provider.generate`).

        A response schema is sent as ``responseJsonSchema``, else ``responseMimeType`` only, else in the
        prompt, adapted per endpoint (:mod:`autorater_pipelines.models._structured`); a structured answer
        cut off at ``maxOutputTokens`` is the error "truncated at N tokens".
        """
        if self.config.max_input_tokens is not None:
            window = ContextWindow(self.config.max_input_tokens, "max_input_tokens")
            extra = schema_instruction(request.response_schema) if request.response_schema else ""
            too_long = check_fits(prompt_chars(request, extra), window)
            if too_long is not None:
                raise ProviderError(too_long)
        if request.response_schema is None:
            return await self._send(request, None)
        output = await MODES.send(
            self._endpoint, self.config.structured_output, lambda mode: self._send_structured(request, mode)
        )
        if output.ok and output.finish_reason == "max_tokens" and not is_complete_json(output.text):
            error = truncation_error(output.usage.output_tokens, self.config.max_output_tokens)
            return ModelOutput(text=None, finish_reason=output.finish_reason, usage=output.usage, error=error)
        return output

    async def _send_structured(self, request: ModelRequest, mode: OutputMode) -> ModelOutput:
        """:meth:`_send` with the SDK's ``APIError`` classified (a refused ``mode`` is recognised by its reason)."""
        try:
            return await self._send(request, mode)
        except genai_errors.APIError as exc:
            raise ProviderError(self.classify_error(exc)) from None

    async def _send(self, request: ModelRequest, mode: OutputMode | None) -> ModelOutput:
        transport = self._transport
        if transport is None:
            return await self._generate_with_sdk_types(request, mode)
        answer = await transport("post", self._path, self.request_body(request, mode), None)
        body = getattr(answer, "body", None)
        if not isinstance(body, (str, bytes)):  # the private method answers in another shape now
            self._transport = None
            log_fallback(f"BaseApiClient.async_request answered {type(answer).__name__} without a text body")
            return await self._generate_with_sdk_types(request, mode)
        return read_response(self._generate_content_answer(body))

    def _generate_content_answer(self, body: Any) -> dict[str, Any]:
        """The parsed body of a 200 answer; :class:`ProviderError` when it is not a generateContent response.

        A catch-all route (``{}``, an HTML page) would otherwise read as an answer without text ("blocked").
        """
        try:
            answer = json.loads(body) if isinstance(body, (str, bytes)) else body
        except ValueError:
            answer = None
        if isinstance(answer, dict) and any(key in answer for key in _RESPONSE_KEYS):
            return answer
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        fix = (
            f"Check that `base_url` is a server that speaks the Gemini API (generateContent, API version "
            f"{self._api_version or 'default'}); for an OpenAI-compatible server use the 'openai/' model prefix."
        )
        raise ProviderError(wrong_protocol_error("a generateContent response", self._request_url, text, fix))

    def request_body(self, request: ModelRequest, mode: OutputMode | None = OutputMode.JSON_SCHEMA) -> dict[str, Any]:
        """The ``generateContent`` JSON body of ``request`` (wire format, as the SDK would send it).

        Args:
            request: The request.
            mode: How its response schema is sent (ignored without one): ``json_schema`` →
                ``responseJsonSchema`` + ``responseMimeType``; ``json_object`` → ``responseMimeType`` and
                the schema in the prompt; ``prompt`` → the schema in the prompt only.
        """
        config = self.config
        parts = [wire_part(p) for p in _prompt_parts(request, mode)]
        body: dict[str, Any] = {"contents": [{"parts": parts, "role": "user"}]}
        if request.system_instruction is not None:
            body["systemInstruction"] = {"parts": [{"text": request.system_instruction}], "role": "user"}
        # every GenerationSettings field, under its camelCase name (the generationConfig wire names)
        settings = config.generation.model_dump(exclude_none=True)
        generation: dict[str, Any] = {to_camel(name): value for name, value in settings.items()}
        if "logprobs" in settings:
            generation["responseLogprobs"] = True
        if request.response_schema is not None and mode in (OutputMode.JSON_SCHEMA, OutputMode.JSON_OBJECT):
            generation["responseMimeType"] = "application/json"
        if request.response_schema is not None and mode is OutputMode.JSON_SCHEMA:
            generation["responseJsonSchema"] = request.response_schema
        body["generationConfig"] = generation  # sent even when empty, as the SDK does
        return body

    async def _generate_with_sdk_types(self, request: ModelRequest, mode: OutputMode | None) -> ModelOutput:
        """The same call through the SDK's public, typed ``generate_content`` (fallback transport)."""
        parts = [_part(p) for p in _prompt_parts(request, mode)]
        response = await self._client.aio.models.generate_content(
            model=self.name,
            contents=[types.Content(role="user", parts=parts)],
            config=self._generation_config(request, mode),
        )
        wire = response.model_dump(mode="json", by_alias=True, exclude_none=True, exclude={"sdk_http_response"})
        return read_response(self._generate_content_answer(wire))

    def _generation_config(
        self, request: ModelRequest, mode: OutputMode | None = OutputMode.JSON_SCHEMA
    ) -> types.GenerateContentConfig:
        config = self.config
        values: dict[str, Any] = {
            "system_instruction": request.system_instruction,
            **config.generation.model_dump(),  # every GenerationSettings field: the SDK uses the same names
            # no tools are sent; disabling AFC also silences its per-call INFO log line
            "automatic_function_calling": types.AutomaticFunctionCallingConfig(disable=True),
        }
        if request.response_schema is not None and mode in (OutputMode.JSON_SCHEMA, OutputMode.JSON_OBJECT):
            values["response_mime_type"] = "application/json"
        if request.response_schema is not None and mode is OutputMode.JSON_SCHEMA:
            values["response_json_schema"] = request.response_schema
        if config.logprobs is not None:
            values["response_logprobs"] = True
        return types.GenerateContentConfig(**{k: v for k, v in values.items() if v is not None})

    # --- batch prediction (orchestrated by autorater_pipelines.models._batch) --------------------
    def batch_request(self, request: ModelRequest, labels: dict[str, str]) -> dict[str, Any]:
        """One batch input line's ``request``: the online ``generateContent`` body plus ``labels``.

        ``labels`` is the ``GenerateContentRequest`` user-metadata map; Vertex AI echoes the request,
        labels included, in the output line that answers it.
        """
        return {**self.request_body(request), "labels": dict(labels)}

    def batch_output(self, response: dict[str, Any]) -> ModelOutput:
        """Parse a batch output line's ``response`` exactly as an online answer."""
        return read_response(response)

    def create_batch_job(self, *, src: str, dest: str, display_name: str) -> BatchJob:
        """Submit a batch prediction job for this model (``POST .../batchPredictionJobs``)."""
        config = types.CreateBatchJobConfig(dest=dest, display_name=display_name)
        return batch_job(self._client.batches.create(model=self.name, src=src, config=config))

    def get_batch_job(self, name: str) -> BatchJob:
        """Read a batch job's state (``GET .../batchPredictionJobs/ID``)."""
        return batch_job(self._client.batches.get(name=name))

    def cancel_batch_job(self, name: str) -> None:
        """Ask Vertex AI to cancel a batch job (``POST .../batchPredictionJobs/ID:cancel``)."""
        self._client.batches.cancel(name=name)

    def classify_error(self, exc: BaseException) -> ModelError:
        """Classify by exception type and HTTP status code (see :meth:`Provider.classify_error`)."""
        if isinstance(exc, genai_errors.APIError):
            headers = getattr(getattr(exc, "response", None), "headers", None)
            retry_after = parse_retry_after(headers)
            if retry_after is None:
                retry_after = retry_delay_from_google_details(exc.details)
            body = exc.details if exc.details is not None else exc.message
            message = f"{type(exc).__name__}: {exc}"
            if exc.code == 404:  # a server that serves another API version, or another path
                requested = answered_url(getattr(exc, "response", None)) or f"POST {self._request_url}"
                message += (
                    f"; requested {requested} (API version {self._api_version or 'default'}; for a server that "
                    "serves another version, e.g. /v1/..., set the api_version option)"
                )
            return classify_http_error(int(exc.code or 0), body, message, retry_after)
        if isinstance(exc, google.auth.exceptions.TransportError):
            return ModelError(ErrorKind.TRANSIENT, f"{type(exc).__name__}: {exc}")
        if isinstance(exc, google.auth.exceptions.GoogleAuthError):
            return ModelError(ErrorKind.FATAL, f"authentication failed: {type(exc).__name__}: {exc}")
        if _is_transport_error(exc):
            return ModelError(ErrorKind.TRANSIENT, f"{type(exc).__name__}: {exc}")
        return super().classify_error(exc)

    async def aclose(self) -> None:
        """Close the aiohttp session of the running loop (the client stays usable)."""
        await self._client.aio.aclose()


_RESPONSE_KEYS = ("candidates", "promptFeedback", "usageMetadata")
"""Keys of which a ``GenerateContentResponse`` has at least one (a blocked prompt: ``promptFeedback`` only)."""


def _prompt_parts(request: ModelRequest, mode: OutputMode | None) -> tuple[str | MediaPart, ...]:
    """The user turn's parts; in ``json_object``/``prompt`` mode with the schema instruction in its last text part."""
    if request.response_schema is not None and mode in (OutputMode.JSON_OBJECT, OutputMode.PROMPT):
        return with_schema_instruction(request.parts, request.response_schema)
    return request.parts


def _emulator_credentials() -> Any:
    import google.oauth2.credentials

    return google.oauth2.credentials.Credentials(token="emulator")


def _part(part: str | MediaPart) -> types.Part:
    if isinstance(part, MediaPart):
        if part.data is not None:
            return types.Part.from_bytes(data=part.data, mime_type=part.mime_type)
        if part.uri is not None:
            return types.Part.from_uri(file_uri=part.uri, mime_type=part.mime_type)
        raise InputError(f"media part {part!r} has neither data nor uri")
    return types.Part.from_text(text=str(part))


def _is_transport_error(exc: BaseException) -> bool:
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError, ConnectionError)):
        return True
    aiohttp = sys.modules.get("aiohttp")
    if aiohttp is not None and isinstance(exc, (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError)):
        return True
    for module_name in ("httpx", "httpx2"):  # google-genai falls back to httpx without aiohttp
        module = sys.modules.get(module_name)
        if module is not None and isinstance(exc, module.TransportError):
            return True
    return False
