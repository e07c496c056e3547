"""OpenAI-compatible chat completions (OpenAI, vLLM, Ollama, llama.cpp server) through the openai SDK.

- Endpoint: ``config.base_url``, else ``$OPENAI_BASE_URL``, else OpenAI. A base URL without a path
  (``http://127.0.0.1:8080``) gets ``/v1`` appended, so the same emulator URL serves every provider.
- API key: ``$OPENAI_API_KEY``; with a custom endpoint and no key, the placeholder ``"not-needed"``.
- Messages: the system instruction as a system message; the user turn as one plain string when every part
  is text (text parts joined by a newline; some servers' chat templates drop list-form content), else a
  list of content parts (images as ``image_url`` parts: inline bytes as ``data:`` URLs, ``http(s)`` URIs
  as is).
- Output-token limit: ``max_completion_tokens``, and for any endpoint other than OpenAI's own also
  ``max_tokens`` (llama.cpp, llama-cpp-python and Ollama read only ``max_tokens``; vLLM reads both;
  OpenAI's reasoning models refuse ``max_tokens``). An endpoint that refuses ``max_tokens`` as an
  unsupported parameter gets only ``max_completion_tokens`` from then on.
- Response schema: ``response_format`` type ``json_schema`` (``strict: false``), ``json_object`` or none,
  adapted per endpoint (:mod:`autorater_pipelines.models._structured`).
- Checks (:mod:`autorater_pipelines.models._context`): the prompt against the context window (from
  ``max_input_tokens`` or ``GET /v1/models``, read once per endpoint) before sending; a ``prompt_tokens``
  far below the prompt sent is checked once per endpoint with a short check request (a warning when the
  endpoint reads prompts, a refused answer when it does not); ``finish_reason: length`` on a structured request is the
  error "truncated at N tokens". An answer without text says why: the token limit (a reasoning model
  can spend it all thinking), or the ``error`` object of an HTTP 200 answer without choices (some proxies
  answer so; a ``transient`` error, retried like a 5xx).
- Errors: by status, then by what the body says (:mod:`autorater_pipelines.models._classify`); a 404 names the
  URL requested; an HTTP 200 answer that is not a chat completion (no ``choices``: a catch-all route's ``{}``, an
  HTML page) is the error "this endpoint did not answer with a chat completion". ``api_version`` (a Gemini
  option) is refused: the version is part of ``base_url``.
- Schema instruction (``json_object``/``prompt`` mode): appended to the last text part, never a part of its own.
- Not supported (the call fails with error kind ``FATAL``, no network call): video or audio parts and
  ``gs://`` URIs — chat completions have no standard way to carry them.
- ``max_retries=0``: retries live in the model wrapper only. One ``AsyncOpenAI`` per event loop (an
  httpx client cannot outlive the loop it was used in).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import threading
import urllib.parse
from typing import Any, ClassVar

import openai

from autorater_pipelines.errors import InputError
from autorater_pipelines.models._classify import Reason, RepeatedErrors, classify_http_error, wrong_protocol_error
from autorater_pipelines.models._config import GenerateConfig
from autorater_pipelines.models._context import (
    ContextWindow,
    PromptReadCheck,
    check_fits,
    prompt_chars,
    window_from_models,
)
from autorater_pipelines.models._logprobs import LogprobsError, openai_logprobs, show
from autorater_pipelines.models._provider import Provider, ProviderError, display_url, parse_retry_after
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
    TokenLogprob,
    Usage,
    token_count,
)

__all__ = ["OpenAIProvider"]

logger = logging.getLogger("autorater_pipelines.models")

_FINISH_REASONS = {"length": "max_tokens", "content_filter": "safety"}
_PARAMETER_NAMES = {
    "temperature": "temperature",
    "max_output_tokens": "max_completion_tokens",
    "top_p": "top_p",
    "seed": "seed",
    "logprobs": "top_logprobs",
}
"""Chat Completions parameter of every :class:`~autorater_pipelines.models.GenerationSettings` field (a field
missing here fails every request, and the test that sends each field through each provider)."""
_UNKNOWN = ContextWindow(0, "unknown")


class OpenAIProvider(Provider):
    """A chat-completions model.

    Args:
        name: Model name as the server knows it, e.g. ``gpt-4o-mini`` or ``Qwen/Qwen2.5-7B-Instruct``.
        config: Connection and generation settings.

    Raises:
        InputError: no API key and no custom endpoint.
    """

    _windows: ClassVar[dict[tuple[str, str], ContextWindow]] = {}  # per endpoint and model, for the process
    _no_max_tokens: ClassVar[set[str]] = set()  # endpoints that refused max_tokens
    reads_prompts: ClassVar[PromptReadCheck] = PromptReadCheck()  # per endpoint, model and message form
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, name: str, config: GenerateConfig) -> None:
        super().__init__("openai", name, config)
        if config.api_version is not None:
            raise InputError(
                f"api_version={config.api_version!r} applies to Gemini models only; an OpenAI-compatible server's "
                f"API version is part of its base_url (e.g. 'http://127.0.0.1:8080/v1'): remove api_version for "
                f"model {name!r}",
                source="model spec",
            )
        base_url = config.base_url or os.environ.get("OPENAI_BASE_URL") or None
        if base_url:
            parsed = urllib.parse.urlsplit(base_url)
            if parsed.path in ("", "/"):
                base_url = base_url.rstrip("/") + "/v1"
        api_key = os.environ.get("OPENAI_API_KEY") or ("not-needed" if base_url else None)
        if api_key is None:
            raise InputError(
                f"OpenAI model {name!r} needs an API key: set OPENAI_API_KEY, or point `base_url` "
                "(or OPENAI_BASE_URL) at an OpenAI-compatible server such as vLLM or Ollama.",
                source="model spec",
            )
        self._base_url = base_url
        self._api_key = api_key
        self._clients: dict[asyncio.AbstractEventLoop, openai.AsyncOpenAI] = {}
        host = urllib.parse.urlsplit(base_url).hostname if base_url else "api.openai.com"
        self._official = host == "api.openai.com"
        self._url = base_url or "https://api.openai.com/v1"
        self._endpoint = ("openai", display_url(self._url), name)
        self._repeats = RepeatedErrors()

    @property
    def base_url(self) -> str | None:
        """The chat-completions base URL in use (None = OpenAI's)."""
        return self._base_url

    @property
    def endpoint_url(self) -> str:
        """The chat-completions base URL for messages (no credentials)."""
        return display_url(self._base_url) or "https://api.openai.com/v1"

    def _client(self) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        for old in [lp for lp in self._clients if lp.is_closed()]:
            del self._clients[old]
        client = self._clients.get(loop)
        if client is None:
            client = openai.AsyncOpenAI(
                base_url=self._base_url,
                api_key=self._api_key,
                max_retries=0,
                timeout=self.config.timeout_s,
                http_client=openai.DefaultAsyncHttpxClient(follow_redirects=False),  # a redirect is an error
            )
            self._clients[loop] = client
        return client

    async def generate(self, request: ModelRequest) -> ModelOutput:
        """Make one chat-completions call (see :meth:`Provider.generate`)."""
        window = await self._context_window()
        setting = self.config.structured_output
        if request.response_schema is None:
            return await self._call(request, None, window)
        return await MODES.send(self._endpoint, setting, lambda mode: self._call(request, mode, window))

    async def _call(self, request: ModelRequest, mode: OutputMode | None, window: ContextWindow | None) -> ModelOutput:
        """One HTTP call in ``mode``; a refused ``max_tokens`` is dropped for the endpoint and sent again."""
        body = self._body(request, mode)
        chars = prompt_chars(request, body.pop("_instruction", ""))
        too_long = check_fits(chars, window)
        if too_long is not None:
            raise ProviderError(too_long)
        for _ in range(2):
            try:
                response = await self._client().chat.completions.create(**body)
            except json.JSONDecodeError as exc:  # HTTP 200 with a body that is not JSON (labelled JSON)
                raise ProviderError(self._not_a_completion(exc.doc, "not JSON, though labelled so")) from None
            except openai.APIStatusError as exc:
                if 300 <= exc.status_code < 400:
                    raise ProviderError(self._redirect_error(exc)) from None
                error = self._status_error(exc, body)
                if error.reason == Reason.UNSUPPORTED_PARAMETER.value and "max_tokens" in body:
                    if "max_tokens" in error.message and "max_completion_tokens" not in error.message:
                        self._drop_max_tokens(error.message)
                        body.pop("max_tokens")
                        continue
                raise ProviderError(error) from None
            if not hasattr(response, "model_dump") or not _is_completion(response):
                raise ProviderError(self._not_a_completion(response))
            shape = _shape_problem(response)
            if shape is not None:
                raise ProviderError(self._not_a_completion(response, shape))
            limit = self.config.max_output_tokens
            output = _output(response, structured=mode is not None, limit=limit, where=self.endpoint_url)
            return await self._check_read(output, body, chars)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _check_read(self, output: ModelOutput, body: dict[str, Any], chars: int) -> ModelOutput:
        """``output``, or the ``prompt_not_seen`` error when the server did not read the prompt (``_context``)."""
        if output.text is None:
            return output
        listed = not isinstance(body["messages"][-1]["content"], str)

        async def probe(text: str) -> str | None:
            content: Any = [{"type": "text", "text": text}] if listed else text
            check: dict[str, Any] = {"model": self.name, "messages": [{"role": "user", "content": content}]}
            check["temperature"] = 0.0
            if not self._official and self._url not in self._no_max_tokens:
                check["max_tokens"] = 32
            client = self._client().with_options(timeout=min(30.0, self.config.timeout_s))
            try:
                answer = await client.chat.completions.create(**check)
            except Exception as exc:  # noqa: BLE001 - a failed check keeps the answers (PromptReadCheck)
                logger.debug("%s: check request failed: %s: %s", self.endpoint_url, type(exc).__name__, exc)
                return None
            message = answer.choices[0].message if answer.choices else None
            return (_content_text(message.content) or "") if message is not None else ""

        key = (self._url, self.name, "list" if listed else "text")
        where = f"{self.endpoint_url} (model {self.name!r})"
        failure = await self.reads_prompts.check(key, where, chars, output.usage.input_tokens, probe)
        if failure is None:
            return output
        return ModelOutput(
            text=None, finish_reason=output.finish_reason, usage=output.usage, raw=output.raw, error=failure
        )

    def _body(self, request: ModelRequest, mode: OutputMode | None) -> dict[str, Any]:
        parts = request.parts
        instruction = ""
        if mode in (OutputMode.JSON_OBJECT, OutputMode.PROMPT) and request.response_schema is not None:
            instruction = schema_instruction(request.response_schema)
            parts = with_schema_instruction(parts, request.response_schema)  # one text part (see the function)
        messages: list[Any] = []  # ChatCompletionMessageParam dicts
        if request.system_instruction is not None:
            messages.append({"role": "system", "content": request.system_instruction})
        if all(isinstance(p, str) for p in parts):
            messages.append({"role": "user", "content": "\n".join(str(p) for p in parts)})
        else:
            messages.append({"role": "user", "content": [_content(p) for p in parts]})
        config = self.config
        args: dict[str, Any] = {"model": self.name, "messages": messages}
        for name, value in config.generation.model_dump().items():  # every GenerationSettings field
            args[_PARAMETER_NAMES[name]] = value
        if config.max_output_tokens is not None and not self._official and self._url not in self._no_max_tokens:
            args["max_tokens"] = config.max_output_tokens
        if config.logprobs is not None:
            args["logprobs"] = True
        if mode is OutputMode.JSON_SCHEMA:
            args["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "response", "schema": request.response_schema, "strict": False},
            }
        elif mode is OutputMode.JSON_OBJECT:
            args["response_format"] = {"type": "json_object"}
        body = {k: v for k, v in args.items() if v is not None}
        body["_instruction"] = instruction
        return body

    def _status_error(self, exc: openai.APIStatusError, body: dict[str, Any]) -> ModelError:
        retry_after = parse_retry_after(exc.response.headers)
        error_body = exc.body if exc.body is not None else exc.response.text
        repeated = self._repeats.seen_before(RepeatedErrors.fingerprint(body), exc.status_code, error_body)
        message = f"HTTP {exc.status_code} from {self.endpoint_url}: {_server_message(error_body, exc)}"
        if exc.status_code == 404:
            message += f"; requested POST {self.endpoint_url}/chat/completions"
        return classify_http_error(exc.status_code, error_body, message, retry_after, repeated=repeated)

    def _not_a_completion(self, response: Any, shape: str | None = None) -> ModelError:
        """The error of an HTTP 200 answer that is not a chat completion (a catch-all route, an HTML page).

        Args:
            response: The parsed answer (an SDK object, or plain JSON / text when it was not an object).
            shape: What is wrong with it, when it looks like a chat completion at first sight.
        """
        body = response.model_dump(mode="json", exclude_none=True) if hasattr(response, "model_dump") else response
        fix = (
            "Check that `base_url` is an OpenAI-compatible server's API root (it usually ends in /v1); for a "
            "Gemini-protocol server use a Gemini model name without the 'openai/' prefix."
        )
        if shape is not None:
            fix = f"The answer is {shape}. {fix}"
        return wrong_protocol_error("a chat completion", f"{self.endpoint_url}/chat/completions", body, fix)

    def _redirect_error(self, exc: openai.APIStatusError) -> ModelError:
        """The error of a redirect: never followed (a POST may become a GET, the API key would go elsewhere)."""
        location = exc.response.headers.get("location", "")
        return ModelError(
            ErrorKind.FATAL,
            f"POST {self.endpoint_url}/chat/completions answered HTTP {exc.status_code}, a redirect to "
            f"{location!r}; redirects are not followed (a POST may be turned into a GET, the API key sent "
            "elsewhere). Fix: set `base_url` to the server's own API root (the redirect's target without "
            "'/chat/completions').",
            status_code=exc.status_code,
            reason=Reason.WRONG_PROTOCOL.value,
        )

    def _drop_max_tokens(self, why: str) -> None:
        with self._shared_lock:
            if self._url in self._no_max_tokens:
                return
            self._no_max_tokens.add(self._url)
        logger.warning("%s refused max_tokens (%s); sending only max_completion_tokens", self.endpoint_url, why[:200])

    async def _context_window(self) -> ContextWindow | None:
        """``max_input_tokens``, else the window ``GET /v1/models`` reports (asked once per endpoint)."""
        if self.config.max_input_tokens is not None:
            return ContextWindow(self.config.max_input_tokens, "max_input_tokens")
        if self._official:
            return None
        key = (self._url, self.name)
        window = self._windows.get(key)
        if window is None:
            window = await self._read_window()
            with self._shared_lock:
                window = self._windows.setdefault(key, window)
        return None if window is _UNKNOWN else window

    async def _read_window(self) -> ContextWindow:
        try:
            page = await self._client().with_options(timeout=min(10.0, self.config.timeout_s)).models.list()
            payload = {"data": [m.model_dump() for m in page.data]}
        except Exception as exc:  # noqa: BLE001 - a server without /v1/models: the window stays unknown
            logger.debug(
                "%s: GET /models failed (%s: %s); context window unknown", self.endpoint_url, type(exc).__name__, exc
            )
            return _UNKNOWN
        window = window_from_models(payload, self.name)
        logger.info("%s %s: context window %s", self.endpoint_url, self.name, window or "not reported")
        return window or _UNKNOWN

    def classify_error(self, exc: BaseException) -> ModelError:
        """Classify an exception the SDK raised outside an HTTP answer (connection, timeout)."""
        if isinstance(exc, openai.APIStatusError):
            retry_after = parse_retry_after(exc.response.headers)
            return classify_http_error(exc.status_code, exc.body, f"{type(exc).__name__}: {exc}", retry_after)
        if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
            return ModelError(ErrorKind.TRANSIENT, f"{type(exc).__name__} ({self.endpoint_url}): {exc}")
        return super().classify_error(exc)

    async def aclose(self) -> None:
        """Close the client of the running loop."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()


def _content(part: str | MediaPart) -> dict[str, Any]:
    if not isinstance(part, MediaPart):
        return {"type": "text", "text": str(part)}
    if not part.mime_type.startswith("image/"):
        raise ProviderError(
            ModelError(
                ErrorKind.FATAL,
                f"{part.mime_type!r} media is not supported by the openai provider (only images); "
                "use a Gemini model for video or audio",
            )
        )
    if part.data is not None:
        url = f"data:{part.mime_type};base64,{base64.b64encode(part.data).decode('ascii')}"
    elif part.uri is not None and part.uri.startswith(("http://", "https://", "data:")):
        url = part.uri
    else:
        raise ProviderError(
            ModelError(
                ErrorKind.FATAL,
                f"media URI {part.uri!r} is not supported by the openai provider (only http(s) URLs); "
                "load the bytes into MediaPart.data instead",
            )
        )
    return {"type": "image_url", "image_url": {"url": url}}


def _is_completion(response: Any) -> bool:
    """True for a chat-completions answer: one with ``choices``, or an ``error`` object (some proxies send that)."""
    fields = getattr(response, "model_fields_set", None) or set()
    extra = getattr(response, "model_extra", None) or {}
    return "choices" in fields or "error" in extra


def _server_message(body: Any, exc: openai.APIStatusError) -> str:
    """The server's own words in an error answer: ``error.message`` of the body, else the body, else the SDK's text."""
    error = body.get("error", body) if isinstance(body, dict) else body
    text = error.get("message") if isinstance(error, dict) else error
    if not isinstance(text, str) or not text.strip():
        text = json.dumps(body, ensure_ascii=False, default=str) if body else str(exc)
    return " ".join(text.split())


def _shape_problem(response: Any) -> str | None:
    """What makes an answer with ``choices`` not a chat completion, or None (an ``error`` object is handled later)."""
    extra = getattr(response, "model_extra", None) or {}
    choices = response.choices
    if not isinstance(choices, list):
        return f"'choices' is {type(choices).__name__}, not a list"
    if not choices:
        return None if "error" in extra else "a chat completion with an empty 'choices' list (no answer at all)"
    choice = choices[0]
    if getattr(choice, "message", None) is None:
        if "text" in (getattr(choice, "model_extra", None) or {}):
            return "in the legacy completions shape (choices[0].text, no message): a /v1/completions answer"
        return "a choice without a 'message'"
    content = choice.message.content
    if content is not None and not isinstance(content, (str, list)):
        return f"a message whose 'content' is {type(content).__name__}, neither text nor a list of parts"
    return None


def _content_text(content: Any) -> str | None:
    """The text of ``message.content``: the string, or the text parts of a list of parts joined (None: none)."""
    if content is None or isinstance(content, str):
        return content
    texts = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str) and part.get("type", "text") == "text":
            texts.append(part["text"])
    return "".join(texts) if texts else None


def _no_text(
    raw: dict[str, Any], message: Any, finish: str | None, output_tokens: int, limit: int | None
) -> ModelError:
    """Why an answer has no text.

    The server's error object (some proxies answer HTTP 200 with ``{"error": …}`` and no choices), the
    output-token limit (a reasoning model can spend it all thinking), or a refusal.
    """
    error = raw.get("error") if not raw.get("choices") else None
    if error:
        detail = error.get("message", error) if isinstance(error, dict) else error
        return ModelError(ErrorKind.TRANSIENT, f"the server answered with an error and no choices: {detail}")
    if finish == "max_tokens":
        return ModelError(
            ErrorKind.BLOCKED,
            f"no text: the output-token limit was reached ({output_tokens or limit} tokens, finish reason: length, "
            f"max_output_tokens={limit}; a reasoning model may have spent it thinking); raise max_output_tokens",
        )
    refusal = getattr(message, "refusal", None)
    detail = f"; refusal: {refusal}" if refusal else ""
    return ModelError(ErrorKind.BLOCKED, f"the model returned no text (finish reason: {finish or 'none'}{detail})")


def _output(response: Any, *, structured: bool, limit: int | None, where: str = "the server") -> ModelOutput:
    """The output of one answer, with the checks of the module docstring."""
    choice = response.choices[0] if response.choices else None
    finish = None
    if choice is not None and choice.finish_reason is not None:
        finish = _FINISH_REASONS.get(str(choice.finish_reason), str(choice.finish_reason))
    reported = response.usage
    usage = Usage(
        input_tokens=token_count(getattr(reported, "prompt_tokens", None), "usage.prompt_tokens", where),
        output_tokens=token_count(getattr(reported, "completion_tokens", None), "usage.completion_tokens", where),
    )
    raw = response.model_dump(mode="json", exclude_none=True)
    message = choice.message if choice is not None else None
    content = message.content if message is not None else None
    text = _content_text(content)
    failure = None
    if text is None and isinstance(content, list):
        preview = json.dumps(content, ensure_ascii=False, default=str)[:200]
        failure = ModelError(
            ErrorKind.FATAL,
            f"the answer's message.content is a list of parts without a text part: {preview!r}",
            status_code=200,
        )
    elif text is None:
        failure = _no_text(raw, message, finish, usage.output_tokens, limit)
    if failure is None and structured and finish == "max_tokens" and not is_complete_json(text):
        failure = truncation_error(usage.output_tokens, limit)
    if failure is not None:
        return ModelOutput(text=None, finish_reason=finish, usage=usage, raw=raw, error=failure)
    logprobs, problem = _logprobs(raw)
    return ModelOutput(
        text=text, finish_reason=finish, usage=usage, raw=raw, logprobs=logprobs, logprobs_problem=problem
    )


def _logprobs(raw: dict[str, Any]) -> tuple[tuple[TokenLogprob, ...] | None, str | None]:
    """``choices[0].logprobs.content`` of the answer, checked (:mod:`.._logprobs`), or None and why not."""
    choices = raw.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    value = choice.get("logprobs")
    if value is None:
        return None, None
    if not isinstance(value, dict):
        return None, f"choices[0].logprobs = {show(value)} is not an object"
    content = value.get("content")
    if content is None or content == []:
        return None, None
    try:
        return openai_logprobs(content, "choices[0].logprobs.content"), None
    except LogprobsError as exc:
        return None, str(exc)
