"""Fixtures of the CLI command tests: no network beyond loopback, no credential lookups, a fake registry."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator

import pytest

from autorater_pipelines.testing.registry import FakeKfpRegistry


def _is_loopback(address: object) -> bool:
    host = address[0] if isinstance(address, tuple) else address
    if not isinstance(host, str):  # AF_UNIX paths and the like
        return True
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any connection to a non-loopback address (the metadata server, Google APIs)."""
    real_connect = socket.socket.connect

    def connect(self: socket.socket, address: object) -> None:
        if not _is_loopback(address):
            raise AssertionError(f"test tried to reach the network: {address!r}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)


@pytest.fixture(autouse=True)
def no_credential_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    """``google.auth.default()`` fails loudly unless a test installs its own (it would probe the network)."""
    import google.auth

    def default(*args: object, **kwargs: object) -> None:
        raise AssertionError("google.auth.default() called: Application Default Credentials looked up")

    monkeypatch.setattr(google.auth, "default", default)


@pytest.fixture
def registry() -> Iterator[FakeKfpRegistry]:
    with FakeKfpRegistry(project="my-project", repository="templates") as fake:
        yield fake
