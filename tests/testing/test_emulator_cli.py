"""``python -m autorater_pipelines.testing.emulator`` prints its URL, serves, and stops on SIGTERM."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request


def test_cli_serves_until_terminated() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "autorater_pipelines.testing.emulator", "--port", "0", "--text", "fixed"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("model emulator listening on http://127.0.0.1:")
        url = line.split()[-1]
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
        request = urllib.request.Request(
            url + "/v1/chat/completions", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.loads(response.read())["choices"][0]["message"]["content"] == "fixed"
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
        process.stdout.close()


def test_cli_length_judge_quota_and_faults() -> None:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "autorater_pipelines.testing.emulator",
            "--judge",
            "length",
            "--requests-per-minute",
            "60",
            "--quota-burst",
            "1",
            "--fault-rate",
            "0",
            "--fault-status",
            "429,503",
            "--no-record",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        url = process.stdout.readline().split()[-1]
        prompt = "<<<BEGIN RESPONSE A x>>>\nlong answer\n<<<END RESPONSE A x>>>\n<<<BEGIN RESPONSE B x>>>\nno\n<<<END RESPONSE B x>>>"
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": prompt}]}).encode()
        request = urllib.request.Request(
            url + "/v1/chat/completions", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            answer = json.loads(json.loads(response.read())["choices"][0]["message"]["content"])
        assert answer["choice"] == "A"
        with urllib.request.urlopen(url + "/stats", timeout=10) as response:
            assert json.loads(response.read())["by_status"] == {"200": 1}
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
        process.stdout.close()


def test_cli_api_versions_and_catch_all() -> None:
    """``--api-versions v1 --catch-all '<html>…'``: /v1/... is served, any other path gets the page with HTTP 200."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "autorater_pipelines.testing.emulator",
            "--api-versions",
            "v1",
            "--catch-all",
            "<p>hi</p>",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        url = process.stdout.readline().split()[-1]
        body = json.dumps({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}).encode()
        answers = {}
        for version in ("v1", "v1beta1"):
            path = f"/{version}/projects/p/locations/l/publishers/google/models/m:generateContent"
            request = urllib.request.Request(url + path, data=body, headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=10) as response:
                answers[version] = (response.status, response.headers["Content-Type"], response.read().decode())
        assert answers["v1"][0] == 200 and "candidates" in json.loads(answers["v1"][2])
        assert answers["v1beta1"] == (200, "text/html; charset=UTF-8", "<p>hi</p>")
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
        process.stdout.close()


def test_cli_says_in_one_line_that_the_port_is_taken(capsys) -> None:
    import socket

    from autorater_pipelines.testing.emulator import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["--port", str(port)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: the model emulator cannot listen on 127.0.0.1:{port}: ")
    assert "another --port" in err and "Traceback" not in err and err.count("\n") == 1
