"""The offline guard: Kernel Studio never touches the network at run time.

Two layers: environment variables that keep Hugging Face libraries from reaching out (set before
any of them is imported), and a socket guard that refuses any connection that is not local.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable
from typing import Any

OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_DATASETS_OFFLINE": "1",
    "DO_NOT_TRACK": "1",
}
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                   "ALL_PROXY")


class NetworkRefused(OSError):
    """A connection to a non-local address was attempted and refused by the offline guard."""


def apply_offline_env() -> None:
    """Set the variables that keep Hugging Face libraries offline, before they are imported."""
    os.environ.update(OFFLINE_ENV)


def missing_offline_env() -> list[str]:
    """Offline variables that are not set to the value the guard wants."""
    return [name for name, value in OFFLINE_ENV.items() if os.environ.get(name) != value]


def proxy_settings() -> list[str]:
    """Proxy variables set in the environment (a sign someone expects network traffic)."""
    return [name for name in PROXY_VARIABLES if os.environ.get(name)]


def _is_local(address: Any) -> bool:
    """True for Unix sockets and loopback addresses; everything else counts as the network."""
    if not isinstance(address, tuple):
        return True
    host = str(address[0])
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


_original_connect: Callable[..., Any] | None = None


def install_network_guard() -> None:
    """Make every non-local socket connection in this process fail with NetworkRefused."""
    global _original_connect
    if _original_connect is not None:
        return
    _original_connect = socket.socket.connect
    original = _original_connect

    def guarded_connect(self: socket.socket, address: Any) -> Any:
        """Refuse non-local peers; pass local ones to the real connect."""
        if not _is_local(address):
            raise NetworkRefused(
                f"Kernel Studio works offline: refused a connection to {address!r}")
        return original(self, address)

    socket.socket.connect = guarded_connect  # type: ignore[method-assign, assignment]


def network_guard_installed() -> bool:
    """Whether install_network_guard() has run in this process."""
    return _original_connect is not None


def enforce() -> None:
    """Apply both layers of the guard; the CLI and the GUI call this first."""
    apply_offline_env()
    install_network_guard()
