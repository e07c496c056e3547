"""Cloud Storage and BigQuery emulators as subprocesses on 127.0.0.1, for tests and offline demos.

- :class:`StorageEmulator` runs ``gcp-storage-emulator`` (in memory, one bucket created);
  its :attr:`~StorageEmulator.env` is ``{"STORAGE_EMULATOR_HOST": "http://127.0.0.1:PORT"}``.
- :class:`BigQueryEmulator` runs ``bqemulator`` (ephemeral, DuckDB-backed);
  its :attr:`~BigQueryEmulator.env` is ``{"BIGQUERY_EMULATOR_HOST": "127.0.0.1:PORT"}``.

Set ``env`` in ``os.environ`` before running a pipeline locally so that its component subprocesses inherit
it. Both are context managers and always stop their process (and its process group) on exit.

bqemulator loads DuckDB's ``spatial`` (required) and ``avro`` (optional) extensions at start and would
download them; :func:`prepare_bqemulator_home` installs them offline from the ``duckdb-extension-spatial``
and ``duckdb-extension-avro`` wheels into ``HOME/.duckdb/extensions`` of a HOME used only by the
emulator. ``.ci/setup_bqemulator.sh`` prepares one and exports ``AUTORATER_BQEMULATOR_HOME``; without it, each
:class:`BigQueryEmulator` prepares its own in a temporary directory. Command line::

    python -m autorater_pipelines.testing.cloud_emulators prepare-bqemulator-home DIR
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

__all__ = [
    "BQEMULATOR_HOME_ENV",
    "GCS_TEST_BUCKET",
    "BigQueryEmulator",
    "EmulatorError",
    "StorageEmulator",
    "missing_emulator",
    "prepare_bqemulator_home",
]

BQEMULATOR_HOME_ENV = "AUTORATER_BQEMULATOR_HOME"
"""A HOME prepared by :func:`prepare_bqemulator_home`, used by :class:`BigQueryEmulator` when set."""

_DUCKDB_EXTENSIONS = {"spatial": "duckdb_extension_spatial", "avro": "duckdb_extension_avro"}
_PACKAGES = {"gcs": ("gcp_storage_emulator", "gcp-storage-emulator"), "bigquery": ("bqemulator", "bqemulator")}


class EmulatorError(RuntimeError):
    """An emulator could not be prepared or did not start; the message holds the tail of its log."""


def missing_emulator(kind: str) -> str | None:
    """Return why the ``gcs`` or ``bigquery`` emulator cannot run (its package is not installed), or None."""
    module, package = _PACKAGES[kind]
    if importlib.util.find_spec(module) is None:
        return f"{package} is not installed (pip install -e '.[test]')"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _extension_file(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise EmulatorError(f"{module.replace('_', '-')} is not installed; pip install -e '.[test]'")
    files = sorted(Path(next(iter(spec.submodule_search_locations))).glob("extensions/v*/*.duckdb_extension"))
    if not files:
        raise EmulatorError(f"{module} holds no extensions/v*/*.duckdb_extension file")
    return files[-1]


def prepare_bqemulator_home(home: str | os.PathLike[str]) -> Path:
    """Install DuckDB's spatial and avro extensions offline into ``home/.duckdb/extensions``.

    Runs ``INSTALL '<file from the wheel>'`` in a DuckDB subprocess whose HOME is ``home``, the same place
    bqemulator's ``INSTALL spatial`` looks, so bqemulator started with that HOME downloads nothing.
    Safe to repeat. The wheels' version directory (``v1.5.5``) must match the installed duckdb.

    Raises:
        EmulatorError: a wheel is missing or DuckDB refused the file (e.g. a version mismatch).

    """
    home = Path(home).absolute()
    home.mkdir(parents=True, exist_ok=True)
    files = {name: _extension_file(module) for name, module in _DUCKDB_EXTENSIONS.items()}
    script = "import duckdb, sys\ncon = duckdb.connect()\nfor f in sys.argv[1:]:\n    con.execute(f\"INSTALL '{f}'\")\n"
    env = {**os.environ, "HOME": str(home)}
    result = subprocess.run(
        [sys.executable, "-c", script, *map(str, files.values())], env=env, capture_output=True, text=True
    )
    if result.returncode != 0:
        raise EmulatorError(
            f"installing DuckDB extensions {sorted(files)} into {home} failed (the duckdb and "
            f"duckdb-extension-* versions must match): {result.stderr.strip()[-2000:]}"
        )
    return home


class _Process:
    """One emulator subprocess: started in its own process group, logged to a temporary file."""

    def __init__(self, name: str, command: list[str], env: dict[str, str], ready_url: str, timeout_s: float) -> None:
        self.name = name
        self._log = tempfile.NamedTemporaryFile(prefix=f"{name}-", suffix=".log", delete=False)  # noqa: SIM115
        self._proc = subprocess.Popen(
            command,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            self._wait_ready(ready_url, timeout_s)
        except BaseException:
            self.stop()
            raise

    def log_tail(self, chars: int = 3000) -> str:
        self._log.flush()
        return Path(self._log.name).read_text(encoding="utf-8", errors="replace")[-chars:]

    def _wait_ready(self, url: str, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise EmulatorError(f"{self.name} exited with {self._proc.returncode} at start:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - loopback only
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        raise EmulatorError(f"{self.name} not ready at {url} after {timeout_s:.0f} s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self._proc.poll() is None:
            for sig, wait_s in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
                try:
                    os.killpg(self._proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self._proc.wait(wait_s)
                    break
                except subprocess.TimeoutExpired:
                    continue
        self._log.close()
        Path(self._log.name).unlink(missing_ok=True)


class _Emulator:
    name = "emulator"
    _process: _Process | None = None

    def _start(self) -> None:
        raise NotImplementedError

    def start(self) -> None:
        """Start the emulator and wait until it answers (a free port is picked; retried once if taken)."""
        for attempt in range(2):
            try:
                self._start()
                return
            except EmulatorError:
                if attempt == 1:
                    raise

    def stop(self) -> None:
        """Stop the emulator process (SIGTERM, then SIGKILL after 10 s); safe to repeat."""
        if self._process is not None:
            self._process.stop()
            self._process = None

    def __enter__(self) -> _Emulator:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class StorageEmulator(_Emulator):
    """``gcp-storage-emulator`` on 127.0.0.1, in memory, with ``bucket`` created.

    Args:
        bucket: Bucket created at start.
        startup_timeout_s: Seconds to wait for the emulator to answer.

    """

    name = "gcp-storage-emulator"

    def __init__(self, *, bucket: str = "autorater-test", startup_timeout_s: float = 30.0) -> None:
        self.bucket = bucket
        self.port = 0
        self._timeout_s = startup_timeout_s

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        """``{"STORAGE_EMULATOR_HOST": url}``: what google-cloud-storage reads to use the emulator."""
        return {"STORAGE_EMULATOR_HOST": self.url}

    def _start(self) -> None:
        self.port = _free_port()
        command = [
            sys.executable,
            "-m",
            "gcp_storage_emulator",
            "start",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--in-memory",
            "--default-bucket",
            self.bucket,
            "--quiet",
        ]
        self._process = _Process(
            self.name, command, dict(os.environ), f"{self.url}/storage/v1/b/{self.bucket}", self._timeout_s
        )

    def __enter__(self) -> StorageEmulator:
        self.start()
        return self


class BigQueryEmulator(_Emulator):
    """``bqemulator`` on 127.0.0.1 (REST; gRPC on a random port), ephemeral.

    Args:
        project: Default project of the emulator.
        home: A HOME prepared by :func:`prepare_bqemulator_home`; None = ``$AUTORATER_BQEMULATOR_HOME`` if set,
            else a temporary one prepared at start (about 3 s) and removed at stop.
        startup_timeout_s: Seconds to wait for the emulator to answer.

    """

    name = "bqemulator"

    def __init__(
        self, *, project: str = "autorater-test", home: str | None = None, startup_timeout_s: float = 60.0
    ) -> None:
        self.project = project
        self.port = 0
        self._home = home
        self._own_home: str | None = None
        self._timeout_s = startup_timeout_s

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: the REST endpoint (``client_options={"api_endpoint": url}``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        """``{"BIGQUERY_EMULATOR_HOST": "127.0.0.1:PORT"}``: what autorater_pipelines.io reads to use it."""
        return {"BIGQUERY_EMULATOR_HOST": f"127.0.0.1:{self.port}"}

    def _resolve_home(self) -> str:
        home = self._home or os.environ.get(BQEMULATOR_HOME_ENV) or self._own_home
        if not home:
            self._own_home = tempfile.mkdtemp(prefix="bqemulator-home-")
            home = str(prepare_bqemulator_home(self._own_home))
        return home

    def _start(self) -> None:
        env = {**os.environ, "HOME": self._resolve_home()}
        self.port = _free_port()
        command = [
            sys.executable,
            "-m",
            "bqemulator",
            "start",
            "--rest-host",
            "127.0.0.1",
            "--rest-port",
            str(self.port),
            "--grpc-host",
            "127.0.0.1",
            "--grpc-port",
            "0",
            "--ephemeral",
            "--project",
            self.project,
            "--log-level",
            "warning",
            "--log-format",
            "json",
        ]
        self._process = _Process(self.name, command, env, f"{self.url}/readyz", self._timeout_s)

    def stop(self) -> None:
        """Stop the emulator and remove the temporary HOME it prepared, if any."""
        super().stop()
        if self._own_home:
            shutil.rmtree(self._own_home, ignore_errors=True)
            self._own_home = None

    def __enter__(self) -> BigQueryEmulator:
        self.start()
        return self


def main(argv: list[str] | None = None) -> int:
    """``prepare-bqemulator-home DIR``: install DuckDB's extensions offline for bqemulator (prints DIR)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] != "prepare-bqemulator-home":
        print(
            "usage: python -m autorater_pipelines.testing.cloud_emulators prepare-bqemulator-home DIR", file=sys.stderr
        )
        return 2
    print(prepare_bqemulator_home(args[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())


GCS_TEST_BUCKET = "autorater-test"
"""Bucket of the session-wide Cloud Storage emulator used by the test suite (``tests/conftest.py``)."""
