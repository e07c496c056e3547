"""OpenAI-compatible chat completions (OpenAI, vLLM, Ollama, llama.cpp server) through the openai SDK.

- Endpoint: ``config.base_url``, else ``$OPENAI_BASE_URL``, else OpenAI. A base URL without a path
  (``http://127.0.0.1:8080``) gets ``/v1`` appended, so the same emulator URL serves every provider.
- API key: ``$OPENAI_API_KEY``; with a custom endpoint and no key, the placeholder ``"not-needed"``.
- Requests: one user message (text parts, images as ``image_url`` parts — inline bytes as
  ``data:`` URLs, ``http(s)`` URIs as is), the system instruction as a system message,
  ``response_format={"type": "json_schema", ..., "strict": False}`` for a response schema,
  ``max_completion_tokens``, ``temperature``, ``top_p``, ``seed``, ``logprobs`` / ``top_logprobs``.
- Not supported (the call fails with error kind ``FATAL``, no network call): video or audio parts and
  ``gs://`` URIs — chat completions have no standard way to carry them.
- ``max_retries=0``: retries live in the model wrapper only. One ``AsyncOpenAI`` per event loop (an
  httpx client cannot outlive the loop it was used in).
"""

from __future__ import annotations

import asyncio
import base64
import os
import urllib.parse
from typing import Any

import openai

from autorater_pipelines.errors import InputError
from autorater_pipelines.models._config import GenerateConfig
from autorater_pipelines.models._provider import Provider, ProviderError, classify_status, parse_retry_after
from autorater_pipelines.models._types import (
    ErrorKind,
    MediaPart,
    ModelError,
    ModelOutput,
    ModelRequest,
    TokenLogprob,
    Usage,
)

__all__ = ["OpenAIProvider"]

_FINISH_REASONS = {"length": "max_tokens", "content_filter": "safety"}


class OpenAIProvider(Provider):
    """A chat-completions model.

    Args:
        name: Model name as the server knows it, e.g. ``gpt-4o-mini`` or ``Qwen/Qwen2.5-7B-Instruct``.
        config: Connection and generation settings.

    Raises:
        InputError: no API key and no custom endpoint.
    """

    def __init__(self, name: str, config: GenerateConfig) -> None:
        super().__init__("openai", name, config)
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

    @property
    def base_url(self) -> str | None:
        """The chat-completions base URL in use (None = OpenAI's)."""
        return self._base_url

    def _client(self) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        for old in [lp for lp in self._clients if lp.is_closed()]:
            del self._clients[old]
        client = self._clients.get(loop)
        if client is None:
            client = openai.AsyncOpenAI(
                base_url=self._base_url, api_key=self._api_key, max_retries=0, timeout=self.config.timeout_s
            )
            self._clients[loop] = client
        return client

    async def generate(self, request: ModelRequest) -> ModelOutput:
        """Make one chat-completions call (see :meth:`Provider.generate`)."""
        messages: list[Any] = []  # ChatCompletionMessageParam dicts
        if request.system_instruction is not None:
            messages.append({"role": "system", "content": request.system_instruction})
        messages.append({"role": "user", "content": [_content(p) for p in request.parts]})
        config = self.config
        args: dict[str, Any] = {
            "temperature": config.temperature,
            "max_completion_tokens": config.max_output_tokens,
            "top_p": config.top_p,
            "seed": config.seed,
        }
        if config.logprobs is not None:
            args["logprobs"] = True
            args["top_logprobs"] = config.logprobs
        if request.response_schema is not None:
            args["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "response", "schema": request.response_schema, "strict": False},
            }
        response = await self._client().chat.completions.create(
            model=self.name, messages=messages, **{k: v for k, v in args.items() if v is not None}
        )
        return _output(response)

    def classify_error(self, exc: BaseException) -> ModelError:
        """Classify by exception type and HTTP status code (see :meth:`Provider.classify_error`)."""
        if isinstance(exc, openai.APIStatusError):
            retry_after = parse_retry_after(exc.response.headers)
            return classify_status(exc.status_code, f"{type(exc).__name__}: {exc}", retry_after)
        if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
            return ModelError(ErrorKind.TRANSIENT, f"{type(exc).__name__}: {exc}")
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


def _output(response: Any) -> ModelOutput:
    choice = response.choices[0] if response.choices else None
    finish = None
    if choice is not None and choice.finish_reason is not None:
        finish = _FINISH_REASONS.get(str(choice.finish_reason), str(choice.finish_reason))
    usage = Usage(
        input_tokens=(response.usage.prompt_tokens or 0) if response.usage else 0,
        output_tokens=(response.usage.completion_tokens or 0) if response.usage else 0,
    )
    raw = response.model_dump(mode="json", exclude_none=True)
    message = choice.message if choice is not None else None
    text = message.content if message is not None else None
    if text is None:
        refusal = getattr(message, "refusal", None)
        detail = f"; refusal: {refusal}" if refusal else ""
        return ModelOutput(
            text=None,
            finish_reason=finish,
            usage=usage,
            raw=raw,
            error=ModelError(
                ErrorKind.BLOCKED, f"the model returned no text (finish reason: {finish or 'none'}{detail})"
            ),
        )
    logprobs = None
    content = choice.logprobs.content if choice is not None and choice.logprobs is not None else None
    if content:
        logprobs = tuple(
            TokenLogprob(
                token=item.token,
                logprob=float(item.logprob),
                top=tuple((alt.token, float(alt.logprob)) for alt in (item.top_logprobs or [])),
            )
            for item in content
        )
    return ModelOutput(text=text, finish_reason=finish, usage=usage, raw=raw, logprobs=logprobs)
