"""Is an OpenAI-compatible server ready to judge? Exit 0 only when one chat completion came back with text.

    python .ci/real_server_ready.py http://127.0.0.1:PORT MODEL [--pid PID] [--timeout SECONDS]

`GET /v1/models` is not enough: a llama.cpp build for the wrong CPU lists its models and dies (SIGILL) on the
first completion. With ``--pid``, the listening socket of the URL's port must belong to that process or one of its
descendants (``/proc/net/tcp`` inode → the processes' fds): a foreign server already on the port is never taken for
ours (exit 3). ``--timeout`` bounds the completion (default 30 s). Standard library only (it runs in the server's own
virtualenv). Prints why it is not ready.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request

NOT_OURS = 3


def _listening_inodes(port: int) -> set[str]:
    """Inodes of the TCP sockets listening on ``port`` (IPv4 and IPv6)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table, encoding="ascii").read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    return inodes


def _family(pid: int) -> set[int]:
    """``pid`` and its descendants (the server may run under a wrapper shell)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat", encoding="ascii", errors="replace").read()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry))
    family, todo = set(), [pid]
    while todo:
        current = todo.pop()
        if current not in family:
            family.add(current)
            todo.extend(children.get(current, []))
    return family


def owner_problem(url: str, pid: int) -> str | None:
    """None when the socket listening on ``url``'s port belongs to ``pid`` (or a descendant), else why not."""
    port = urllib.parse.urlsplit(url).port
    inodes = _listening_inodes(port) if port else set()
    if not inodes:
        return f"nothing listens on port {port}"
    wanted = {f"socket:[{inode}]" for inode in inodes}
    for member in _family(pid):
        try:
            fds = os.listdir(f"/proc/{member}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{member}/fd/{fd}") in wanted:
                    return None
            except OSError:
                continue
    return f"port {port} is held by another process, not by our server (pid {pid}) or its children"


def ready(url: str, model: str, timeout_s: float = 30.0) -> str | None:
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
    """Command-line entry: ``URL MODEL [--pid PID] [--timeout S]``; exit 0 ready, 1 not ready, 3 not ours."""
    options = dict(zip(argv[2::2], argv[3::2], strict=False))
    if len(argv) < 2 or len(argv) % 2 or set(options) - {"--pid", "--timeout"}:
        print("usage: python .ci/real_server_ready.py URL MODEL [--pid PID] [--timeout SECONDS]", file=sys.stderr)
        return 2
    pid = int(options["--pid"]) if "--pid" in options else None
    reason = ready(argv[0], argv[1], float(options.get("--timeout", 30.0)))
    if reason:
        print(f"real server not ready: {reason}", file=sys.stderr)
        return 1
    if pid is not None:  # checked after the answer: the process that answered must be ours, and alive
        problem = owner_problem(argv[0], pid)
        if problem:
            print(f"real server not ready: {problem}", file=sys.stderr)
            return NOT_OURS
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
