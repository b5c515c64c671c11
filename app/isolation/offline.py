"""The offline guard: Kernel Studio never touches the network at run time.

Two layers: environment variables that keep Hugging Face libraries from reaching out (set before
any of them is imported), and a socket guard that refuses, in this process, everything by which
a Python socket could reach another machine.

The socket guard is an audit hook (PEP 578), not a patched method: CPython raises its `socket.*`
audit events inside the C socket module itself, so the hook sees `connect` and `connect_ex`,
`sendto` and `sendmsg`, `bind`, `socket.create_connection` and raw `_socket` use alike, and an
audit hook cannot be removed once added. It refuses, with NetworkRefused:
- creating a socket of any family but AF_UNIX, AF_INET and AF_INET6 (AF_PACKET, AF_NETLINK,
  ...), or a raw socket: those reach the network below addresses;
- connecting, sending to or binding an address that is not loopback (binding 0.0.0.0 or ""
  would accept connections from other machines);
- resolving a name other than localhost (the resolver itself sends DNS queries).
AF_UNIX sockets and loopback addresses stay usable: Qt, multiprocessing and local servers need
them. Code that calls the C library directly (ctypes, a native library) is beyond any Python
hook; the sandbox's network namespace is the layer for that.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
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
ALLOWED_FAMILIES = frozenset(int(f) for f in (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6))
# Events whose second argument is the peer or local address to check.
ADDRESS_EVENTS = frozenset({"socket.connect", "socket.sendto", "socket.sendmsg", "socket.bind"})
NAME_EVENTS = frozenset({"socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr",
                         "socket.getnameinfo"})
LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost",
                         "ip6-loopback"})


class NetworkRefused(OSError):
    """A network operation was attempted and refused by the offline guard."""


def apply_offline_env() -> None:
    """Set the variables that keep Hugging Face libraries offline, before they are imported."""
    os.environ.update(OFFLINE_ENV)


def missing_offline_env() -> list[str]:
    """Offline variables that are not set to the value the guard wants."""
    return [name for name, value in OFFLINE_ENV.items() if os.environ.get(name) != value]


def proxy_settings() -> list[str]:
    """Proxy variables set in the environment (a sign someone expects network traffic)."""
    return [name for name in PROXY_VARIABLES if os.environ.get(name)]


def _is_loopback_host(host: Any) -> bool:
    """A host name or numeric address that stays on this machine."""
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    if host.lower() in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _is_local(address: Any, binding: bool = False) -> bool:
    """True for Unix socket addresses (text, bytes, the abstract namespace) and loopback
    addresses; everything else counts as the network. "" means every interface when binding."""
    if address is None or isinstance(address, str | bytes):
        return True
    if not isinstance(address, tuple) or not address:
        return False
    if address[0] == "" and not binding:
        return True  # connect(("", port)) reaches this machine
    return _is_loopback_host(address[0])


def _refuse_socket(family: Any, kind: Any) -> None:
    """Refuse families that reach the network below addresses, and raw sockets. A family of
    -1 is _socket's default (AF_INET), or one taken from an existing descriptor."""
    if int(family) not in ALLOWED_FAMILIES and int(family) != -1:
        raise NetworkRefused(f"Kernel Studio works offline: refused a socket of family "
                             f"{_name(family, 'AF_')}")
    if int(kind) & 0xF == int(socket.SOCK_RAW) and int(family) != socket.AF_UNIX:
        raise NetworkRefused("Kernel Studio works offline: refused a raw socket")


def _name(value: Any, prefix: str) -> str:
    """A socket constant's name (AF_PACKET), or its number."""
    names = [n for n in dir(socket) if n.startswith(prefix) and getattr(socket, n) == value]
    return names[0] if names else str(value)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    """The audit hook: cheap for every event that is not about sockets."""
    if not event.startswith("socket."):
        return
    if event == "socket.__new__":
        _refuse_socket(args[1], args[2])
    elif event in ADDRESS_EVENTS:
        if not _is_local(args[1], binding=event == "socket.bind"):
            verb = "a bind to" if event == "socket.bind" else "a connection to"
            raise NetworkRefused(f"Kernel Studio works offline: refused {verb} {args[1]!r}")
    elif event in NAME_EVENTS and not _is_local_name(event, args[0] if args else None):
        raise NetworkRefused(f"Kernel Studio works offline: refused to look up {args[0]!r}")


def _is_local_name(event: str, subject: Any) -> bool:
    """Whether a lookup stays on this machine (getnameinfo takes an address, the others a
    name or a numeric host; None asks for this machine's wildcard)."""
    if subject is None:
        return True
    if event == "socket.getnameinfo":
        return isinstance(subject, tuple) and _is_local(subject)
    return _is_loopback_host(subject)


_installed = False


def install_network_guard() -> None:
    """Refuse, from now on and for good, every network operation of this process's sockets."""
    global _installed
    if _installed:
        return
    sys.addaudithook(_audit)
    _installed = True


def network_guard_installed() -> bool:
    """Whether install_network_guard() has run in this process."""
    return _installed


def enforce() -> None:
    """Apply both layers of the guard; the CLI and the GUI call this first."""
    apply_offline_env()
    install_network_guard()
