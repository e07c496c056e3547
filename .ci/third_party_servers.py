#!/usr/bin/env python3
"""Third-party model servers nobody here wrote, for the tests marked ``third_party`` (stdlib only).

- ``llmock`` (PyPI ``llmock``): a scripted mock of the Gemini and OpenAI APIs with their failure shapes (429 with
  ``Retry-After``, 503), driven over its admin API (``/_llmock/scenario``) and judging the client's retries
  (``/_llmock/verdict``).
- LiteLLM's proxy (PyPI ``litellm[proxy]``): OpenAI chat completions and Gemini ``generateContent`` routes in front of
  an OpenAI-compatible server (CI's real llama.cpp server, .ci/real_server.sh).
- ``api-for-gemini`` (PyPI ``api-for-gemini``): a Gemini API → OpenAI-compatible translating proxy, with a
  catch-all route that answers HTTP 200 to every other path.

    python3 .ci/third_party_servers.py install               install (or check) the pinned versions, then exit
    python3 .ci/third_party_servers.py install --background  the same in the background; .ci/run does this

State: ``$AUTORATER_THIRD_PARTY_HOME`` (default ``~/.cache/autorater-pipelines/third-party``, outside the repo):
``venv-tools/`` (llmock, api-for-gemini), ``venv-litellm/`` (LiteLLM: its pins conflict with the project's, so it
never goes into the project's venv), ``state`` (``status=installing|ready|failed``, ``reason=``, ``install_s=``),
``install.log``. A venv whose recorded pins match is reused (seconds); a new machine installs them (about 2 min).

Launching (:func:`llmock`, :func:`litellm_proxy`, :func:`gemini_proxy`, used by the tests' fixtures): each server
binds 127.0.0.1 on a free port, is ready only after one real request through it succeeded, and is stopped (its
process group, by pid) when its ``with`` block ends. Nothing calls out: the servers get an environment without
credentials or cloud endpoints; LiteLLM's remote lookups (model cost map, blog feed, beta-header and router presets)
are pointed at a closed loopback port and its callbacks are off.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

PINS = {
    "tools": ["llmock==0.2.2", "api-for-gemini==1.4.2"],
    "litellm": ["litellm[proxy]==1.108.7"],
}
HOME = Path(
    os.environ.get("AUTORATER_THIRD_PARTY_HOME")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "autorater-pipelines" / "third-party"
)
STATE = HOME / "state"
CLOSED = "http://127.0.0.1:9/disabled"  # the discard port: nothing listens, a lookup fails at once
START_TIMEOUT_S = 240.0  # LiteLLM imports for 20-60 s on a loaded 2-core machine


def _write_state(**values: object) -> None:
    HOME.mkdir(parents=True, exist_ok=True)
    tmp = STATE.with_suffix(".tmp")
    tmp.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
    tmp.replace(STATE)


def read_state() -> dict[str, str]:
    """The install state (``status``, ``reason``, ``install_s``), empty when never installed."""
    try:
        lines = STATE.read_text().splitlines()
    except OSError:
        return {}
    return dict(line.split("=", 1) for line in lines if "=" in line)


def venv_python(name: str) -> Path:
    """The interpreter of venv ``name`` (``tools`` or ``litellm``)."""
    return HOME / f"venv-{name}" / "bin" / "python"


def install() -> None:
    """Create each venv and install its pins, unless the recorded pins match; state ``ready`` or ``failed``."""
    started = time.monotonic()
    _write_state(status="installing")
    log = HOME / "install.log"
    try:
        for name, pins in PINS.items():
            venv = HOME / f"venv-{name}"
            marker = venv / "pins.json"
            if marker.exists() and json.loads(marker.read_text()) == pins and venv_python(name).exists():
                continue
            with log.open("a") as out:
                subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, stdout=out, stderr=out)
                pip = [str(venv_python(name)), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
                subprocess.run([*pip, *pins], check=True, stdout=out, stderr=out)
            marker.write_text(json.dumps(pins))
    except (OSError, subprocess.CalledProcessError) as exc:
        _write_state(status="failed", reason=f"{type(exc).__name__}: {exc}; see {log}")
        raise
    _write_state(status="ready", install_s=round(time.monotonic() - started))


def wait_installed(timeout_s: float) -> dict[str, str]:
    """Wait while an install runs (at most ``timeout_s``); the final state."""
    deadline = time.monotonic() + timeout_s
    state = read_state()
    while state.get("status") == "installing" and time.monotonic() < deadline:
        time.sleep(2)
        state = read_state()
    return state


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _environment(home: Path, **extra: str) -> dict[str, str]:
    """A server's environment: no credentials or cloud endpoints of this shell, a private HOME."""
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(HOME=str(home), PYTHONUNBUFFERED="1", NO_PROXY="*", **extra)
    return env


def post_json(url: str, body: dict, timeout_s: float = 120.0) -> tuple[int, dict | str]:
    """POST ``body`` as JSON; (status, parsed JSON or text). Used for readiness checks and admin calls."""
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as answer:  # noqa: S310 - loopback only
            status, text = answer.status, answer.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        status, text = exc.code, exc.read().decode("utf-8", "replace")
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


class Server:
    """A running third-party server: ``url`` (``http://127.0.0.1:PORT``), ``pid``, ``log`` (its output file)."""

    def __init__(self, name: str, url: str, process: subprocess.Popen, log: Path) -> None:
        self.name, self.url, self.process, self.log = name, url, process, log

    @property
    def pid(self) -> int:
        """The server's process id (also its process group's)."""
        return self.process.pid

    def log_tail(self, lines: int = 20) -> str:
        """The last ``lines`` lines of the server's output."""
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


@contextlib.contextmanager
def _serve(
    name: str, command: list[str], env: dict[str, str], cwd: Path, port: int, ready: Callable[[str], bool]
) -> Iterator[Server]:
    """Start ``command``, wait until ``ready(url)`` (a real request) is true, yield, stop its process group."""
    log = cwd / f"{name}.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: stopped whole, by this pid
        )
    server = Server(name, f"http://127.0.0.1:{port}", process, log)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited with {process.returncode} before it was ready:\n{server.log_tail()}")
            with contextlib.suppress(OSError, ValueError):
                if ready(server.url):
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} not ready after {START_TIMEOUT_S:g} s:\n{server.log_tail()}")
            time.sleep(0.5)
        yield server
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=5)


def _answers_generate_content(url: str) -> bool:
    status, body = post_json(
        url,
        {"contents": [{"role": "user", "parts": [{"text": "Say OK."}]}], "generationConfig": {"maxOutputTokens": 2}},
        timeout_s=60,
    )
    return status == 200 and isinstance(body, dict) and bool(body.get("candidates"))


@contextlib.contextmanager
def llmock(workdir: Path) -> Iterator[Server]:
    """``llmock serve`` on 127.0.0.1 (Gemini API at ``URL/gemini``, OpenAI at ``URL/v1``); static answers."""
    port = _free_port()
    command = [
        str(venv_python("tools").with_name("llmock")),
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--response-style",
        "static",
        "--tool-mode",
        "off",
        "--log-level",
        "warning",
    ]
    ready = lambda url: _answers_generate_content(f"{url}/gemini/v1beta/models/ready:generateContent")  # noqa: E731
    with _serve("llmock", command, _environment(workdir), workdir, port, ready) as server:
        yield server


@contextlib.contextmanager
def litellm_proxy(workdir: Path, upstream: str, model: str) -> Iterator[Server]:
    """LiteLLM's proxy on 127.0.0.1 serving ``model`` from the OpenAI-compatible ``upstream`` (``http://host:port``).

    Routes: ``URL/v1/chat/completions`` and the Gemini routes ``URL/v1beta/models/MODEL:generateContent``. No master
    key (loopback only), no callbacks, no database, no remote lookups.
    """
    port = _free_port()
    config = workdir / "litellm.yaml"
    config.write_text(
        "model_list:\n"
        f"  - model_name: {model}\n"
        "    litellm_params:\n"
        f"      model: openai/{model}\n"
        f"      api_base: {upstream}/v1\n"
        "      api_key: not-needed\n"
        "      max_retries: 0\n"
        "litellm_settings:\n"
        "  telemetry: false\n"
        "  callbacks: []\n"
        "  success_callback: []\n"
        "  failure_callback: []\n"
        "  num_retries: 0\n"
        "general_settings:\n"
        "  disable_spend_logs: true\n"
        "  dangerously_permit_weak_or_unset_master_key: true\n"  # bound to 127.0.0.1 only
    )
    env = _environment(
        workdir,
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        LITELLM_MODEL_COST_MAP_URL=CLOSED,
        LITELLM_BLOG_POSTS_URL=CLOSED,
        LITELLM_ANTHROPIC_BETA_HEADERS_URL=CLOSED,
        LITELLM_AUTOROUTER_PRESETS_URL=CLOSED,
        DISABLE_ADMIN_UI="True",
        LITELLM_LOG="ERROR",
    )
    command = [
        str(venv_python("litellm").with_name("litellm")),
        "--config",
        str(config),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--num_workers",
        "1",
    ]

    def ready(url: str) -> bool:
        body = {"model": model, "messages": [{"role": "user", "content": "Say OK."}], "max_tokens": 2}
        status, answer = post_json(f"{url}/v1/chat/completions", body, timeout_s=60)
        return status == 200 and isinstance(answer, dict) and bool(answer.get("choices"))

    with _serve("litellm", command, env, workdir, port, ready) as server:
        yield server


@contextlib.contextmanager
def gemini_proxy(workdir: Path, upstream: str, model: str) -> Iterator[Server]:
    """``api-for-gemini`` on 127.0.0.1: every Gemini API model name goes to ``model`` at OpenAI-compatible ``upstream``.

    It serves ``URL/v1beta/models/M:generateContent``; every other path hits its catch-all route (HTTP 200).
    """
    port = _free_port()
    (workdir / "config.toml").write_text(  # read from the working directory (its first config location)
        "[provider.upstream]\n"
        'template = "openai"\n'
        f'api_url = "{upstream}/v1"\n'
        'api_key = "not-needed"\n\n'
        f"[model.{model}]\n"
        'provider = "upstream"\n'
        f'model = "{model}"\n\n'
        "[[transfer]]\n"
        'make = "*"\n'
        f'to = "{model}"\n'
    )
    command = [
        str(venv_python("tools")),
        "-m",
        "uvicorn",
        "api_for_gemini.server.main:app",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-access-log",
        "--log-level",
        "warning",
    ]
    ready = lambda url: _answers_generate_content(f"{url}/v1beta/models/{model}:generateContent")  # noqa: E731
    with _serve("api-for-gemini", command, _environment(workdir), workdir, port, ready) as server:
        yield server


def main(argv: list[str] | None = None) -> int:
    """Command line: ``install [--background]``; exit status 0 when installed (or started in the background)."""
    parser = argparse.ArgumentParser(prog="python3 .ci/third_party_servers.py", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["install"])
    parser.add_argument("--background", action="store_true", help="install in the background and return at once")
    args = parser.parse_args(argv)
    if args.background:
        HOME.mkdir(parents=True, exist_ok=True)
        _write_state(status="installing")
        with (HOME / "install.log").open("w") as out:
            subprocess.Popen(
                [sys.executable, __file__, "install"],
                stdout=out,
                stderr=out,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        print(f"== third-party servers: installing in the background (state: {STATE})")
        return 0
    install()
    print(f"== third-party servers installed: {read_state()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
