"""What every small HTTP fake of this package shares: a quiet threaded server on 127.0.0.1 and its lifecycle.

A fake subclasses :class:`LocalFake` and calls :meth:`LocalFake._listen` with its request handler; handlers
reach the fake through ``self.server.registry``. ``start``/``stop`` (or ``with``) serve it in a daemon
thread; :meth:`LocalFake.serve_until_interrupted` serves it in the foreground (``python -m ...``).
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

__all__ = ["LocalFake", "LocalServer"]

_F = TypeVar("_F", bound="LocalFake")


class LocalServer(ThreadingHTTPServer):
    """A threaded HTTP server that never blocks on close and answers keep-alive requests at once."""

    daemon_threads = True
    block_on_close = False
    disable_nagle_algorithm = True  # else ~96 ms per keep-alive request (NOTES.md)
    registry: Any


class LocalFake:
    """Lifecycle of a fake served on 127.0.0.1: ``start``, ``stop``, context manager, foreground serving."""

    _thread_name = "local-fake"

    def _listen(self, handler: type[BaseHTTPRequestHandler], port: int, server: type[LocalServer]) -> None:
        """Bind ``server`` (a :class:`LocalServer` subclass) with ``handler`` on 127.0.0.1:``port`` (0: free)."""
        self._server = server(("127.0.0.1", port), handler)
        self._server.registry = self
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The TCP port served."""
        return int(self._server.server_address[1])

    def start(self: _F) -> _F:
        """Serve in a background thread; return self."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever, args=(0.05,), name=self._thread_name, daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()

    def serve_until_interrupted(self) -> None:
        """Serve in this thread until Ctrl-C, then close the socket."""
        try:
            self._server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            self._server.server_close()

    def __enter__(self: _F) -> _F:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
