"""Is an OpenAI-compatible server ready to judge? Exit 0 only when one chat completion came back with text.

    python .ci/real_server_ready.py http://127.0.0.1:PORT MODEL

`GET /v1/models` is not enough: a llama.cpp build for the wrong CPU lists its models and dies (SIGILL) on the
first completion. Standard library only (it runs in the server's own virtualenv). Prints why it is not ready.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request


def ready(url: str, model: str, timeout_s: float = 120.0) -> str | None:
    """None when ``url`` answered one chat completion with a choice holding text, else the reason it did not."""
    body = json.dumps(
        {"model": model, "messages": [{"role": "user", "content": "Say OK."}], "max_tokens": 2, "temperature": 0}
    ).encode()
    request = urllib.request.Request(
        f"{url.rstrip('/')}/v1/chat/completions", data=body, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as answer:
            reply = json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return f"POST /v1/chat/completions answered HTTP {error.code}"
    except (OSError, ValueError) as error:
        return f"POST /v1/chat/completions failed: {error}"
    choices = reply.get("choices") if isinstance(reply, dict) else None
    if not choices or not isinstance((choices[0].get("message") or {}).get("content"), str):
        return f"POST /v1/chat/completions answered no choice with text: {str(reply)[:200]}"
    return None


def main(argv: list[str]) -> int:
    """Command-line entry: ``URL MODEL``; exit 0 when ready, 1 (with the reason on stderr) when not."""
    if len(argv) != 2:
        print("usage: python .ci/real_server_ready.py URL MODEL", file=sys.stderr)
        return 2
    reason = ready(argv[0], argv[1])
    if reason:
        print(f"real server not ready: {reason}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
