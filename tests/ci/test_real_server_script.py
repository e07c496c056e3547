"""``.ci/real_server.sh`` reports ``ready`` only after a chat completion answered, never on ``GET /v1/models`` alone.

A llama.cpp build for the wrong CPU (native build, AMX advertised under a hypervisor) lists its models, then dies with
SIGILL on its first completion: the script must write ``status=failed`` with the reason, not ``ready`` with a dead
pid. The script runs for real here with ``AUTORATER_REAL_SERVER_EXEC`` naming a small loopback server instead of
llama.cpp (nothing is built); the readiness probe ``.ci/real_server_ready.py`` is the one CI uses.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / ".ci" / "real_server.sh"
PROBE = REPO / ".ci" / "real_server_ready.py"

_SERVER = textwrap.dedent(
    """
    import json, os, sys
    from http.server import BaseHTTPRequestHandler, HTTPServer

    MODE = sys.argv[1]

    class Handler(BaseHTTPRequestHandler):
        def _json(self, body):
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self._json({"object": "list", "data": [{"id": "smollm2", "object": "model"}]})

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if MODE == "dies":
                os._exit(132)  # as a process killed by SIGILL on its first completion
            if MODE == "no-text":
                return self._json({"choices": []})
            self._json({"choices": [{"index": 0, "message": {"role": "assistant", "content": "OK"}}]})

        def log_message(self, *args):
            pass

    HTTPServer(("127.0.0.1", int(sys.argv[2])), Handler).serve_forever()
    """
)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _state(home: Path) -> dict[str, str]:
    try:
        lines = (home / "state").read_text().splitlines()
    except OSError:
        return {}
    return dict(line.split("=", 1) for line in lines if "=" in line)


def _start(
    tmp_path: Path, mode: str, *, command: str | None = None, port: int | None = None, start_s: int = 20
) -> tuple[subprocess.Popen[str], Path]:
    server = tmp_path / "server.py"
    server.write_text(_SERVER)
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_", "OPENAI_"))}
    env.update(
        AUTORATER_REAL_SERVER_HOME=str(home),
        AUTORATER_REAL_SERVER_PORT=str(port or _free_port()),
        AUTORATER_REAL_SERVER_EXEC=command or f'exec "{sys.executable}" "{server}" {mode} "$PORT"',
        AUTORATER_REAL_SERVER_START_S=str(start_s),
        PYTHON=sys.executable,
    )
    process = subprocess.Popen(
        ["bash", str(SCRIPT)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    return process, home


def _wait_for(home: Path, process: subprocess.Popen[str], timeout_s: float = 60) -> dict[str, str]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state = _state(home)
        if state.get("status") in {"ready", "failed"}:
            return state
        if process.poll() is not None:
            return _state(home)
        time.sleep(0.2)
    raise AssertionError(f"no ready/failed state within {timeout_s} s: {_state(home)}")


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("dies", "exited before answering a chat completion"),
        ("no-text", "did not answer a chat completion"),
    ],
)
def test_a_server_that_lists_models_but_fails_its_first_completion_is_never_ready(
    tmp_path: Path, mode: str, reason: str
) -> None:
    process, home = _start(tmp_path, mode)
    try:
        state = _wait_for(home, process)
        assert process.wait(timeout=60) == 1
    finally:
        if process.poll() is None:
            process.kill()
    assert state["status"] == "failed", state
    assert reason in state["reason"]
    assert "url" not in state or not state["url"]


def test_a_server_that_answers_a_completion_is_ready_and_the_script_stops_it(tmp_path: Path) -> None:
    process, home = _start(tmp_path, "ok")
    try:
        state = _wait_for(home, process)
        assert state["status"] == "ready", (state, (home / "server.log").read_text())
        assert state["url"].startswith("http://127.0.0.1:")
        pid = int(state["pid"])
        os.kill(pid, 0)  # alive
        assert subprocess.run([sys.executable, str(PROBE), state["url"], "smollm2"]).returncode == 0
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        raise AssertionError("the script left its server running after SIGTERM")


def test_the_probe_names_what_is_wrong(tmp_path: Path) -> None:
    port = _free_port()
    result = subprocess.run(
        [sys.executable, str(PROBE), f"http://127.0.0.1:{port}", "smollm2"], capture_output=True, text=True
    )
    assert result.returncode == 1
    assert "real server not ready: POST /v1/chat/completions failed" in result.stderr
    assert subprocess.run([sys.executable, str(PROBE)], capture_output=True).returncode == 2


def test_a_foreign_server_already_on_the_port_is_never_reported_as_ours(tmp_path: Path) -> None:
    port = _free_port()
    (tmp_path / "foreign.py").write_text(_SERVER)
    foreign = subprocess.Popen([sys.executable, str(tmp_path / "foreign.py"), "ok", str(port)])
    try:
        time.sleep(0.5)
        # Our "server" loads for 5 s, as llama.cpp loads its model, then would fail to bind the taken port.
        process, home = _start(
            tmp_path, "ok", command=f'exec "{sys.executable}" -c "import time; time.sleep(5)"', port=port
        )
        try:
            state = _wait_for(home, process)
            assert process.wait(timeout=60) == 1
        finally:
            if process.poll() is None:
                process.kill()
    finally:
        foreign.kill()
        foreign.wait()
    assert state["status"] == "failed", state
    assert f"port {port} answered, but its listening socket is not held by our server" in state["reason"]


def test_a_server_that_accepts_but_never_answers_fails_within_the_start_deadline(tmp_path: Path) -> None:
    (tmp_path / "hang.py").write_text(
        "import os, socket, time\n"
        "s = socket.socket(); s.bind(('127.0.0.1', int(os.environ['PORT']))); s.listen(16)\n"
        "conns = []\n"
        "while True: conns.append(s.accept()[0])\n"
    )
    started = time.monotonic()
    process, home = _start(tmp_path, "ok", command=f'exec "{sys.executable}" "{tmp_path / "hang.py"}"', start_s=3)
    try:
        state = _wait_for(home, process, timeout_s=60)
        assert process.wait(timeout=60) == 1
    finally:
        if process.poll() is None:
            process.kill()
    elapsed = time.monotonic() - started
    assert state["status"] == "failed" and "did not answer a chat completion" in state["reason"], state
    assert elapsed < 20, elapsed  # START_S=3 bounds every probe together (was 120 s per probe)
