"""The offline guard refuses every way a Python socket can reach another machine, lets local
sockets work, and sets Hugging Face's offline variables. The guard is an audit hook that cannot
be removed, so each case runs in a child process of its own, with real sockets."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from app.isolation import offline

PRELUDE = """
import os, socket, sys, _socket
from app.isolation import offline
offline.enforce()
def attempt(action):
    try:
        result = action()
    except offline.NetworkRefused as error:
        print("refused:", error)
        sys.exit(0)
    print("allowed:", result)
    sys.exit(5)
"""


def in_child(code: str) -> subprocess.CompletedProcess[str]:
    """Run `code` after the guard is enforced, in a fresh interpreter."""
    return subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize(("action", "message"), [
    ("socket.socket().connect(('93.184.216.34', 80))",
     "refused a connection to ('93.184.216.34', 80)"),
    ("socket.socket().connect_ex(('93.184.216.34', 80))",
     "refused a connection to ('93.184.216.34', 80)"),
    ("socket.socket(socket.AF_INET6).connect_ex(('2606:2800:220:1::', 80, 0, 0))",
     "refused a connection to ('2606:2800:220:1::'"),
    ("socket.socket(socket.AF_INET6).connect(('::ffff:8.8.8.8', 53))",
     "refused a connection to ('::ffff:8.8.8.8', 53)"),
    ("socket.create_connection(('93.184.216.34', 80), timeout=1)", "refused to look up"),
    ("socket.create_connection(('example.com', 80), timeout=1)",
     "refused to look up 'example.com'"),
    ("socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('8.8.8.8', 53))",
     "refused a connection to ('8.8.8.8', 53)"),
    ("socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendmsg([b'x'], [], 0, ('8.8.8.8', 53))",
     "refused a connection to ('8.8.8.8', 53)"),
    ("_socket.socket().connect(('93.184.216.34', 80))", "refused a connection"),
    ("_socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM).sendto(b'x', ('8.8.8.8', 53))",
     "refused a connection"),
    ("socket.socket(socket.AF_PACKET, socket.SOCK_RAW)", "refused a socket of family AF_PACKET"),
    ("socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM)",
     "refused a socket of family AF_NETLINK"),
    ("socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)",
     "refused a raw socket"),
    ("socket.getaddrinfo('example.com', 443)", "refused to look up 'example.com'"),
    ("socket.gethostbyname('example.com')", "refused to look up 'example.com'"),
    ("socket.gethostbyaddr('8.8.8.8')", "refused to look up '8.8.8.8'"),
    ("socket.getnameinfo(('8.8.8.8', 53), 0)", "refused to look up ('8.8.8.8', 53)"),
    ("socket.socket().bind(('0.0.0.0', 0))", "refused a bind to ('0.0.0.0', 0)"),
    ("socket.socket().bind(('', 0))", "refused a bind to ('', 0)"),
])
def test_every_way_out_is_refused(action: str, message: str) -> None:
    done = in_child(f"attempt(lambda: {action})\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert message in done.stdout


def test_libraries_meet_the_refusal_as_their_own_error() -> None:
    done = in_child("""
        import urllib.error, urllib.request
        try:
            urllib.request.urlopen('http://93.184.216.34/', timeout=1)
        except urllib.error.URLError as error:
            print(type(error.reason).__name__, error.reason)
    """)
    assert "NetworkRefused Kernel Studio works offline" in done.stdout, done.stderr


def test_local_sockets_keep_working() -> None:
    done = in_child("""
        server = socket.socket()
        server.bind(('127.0.0.1', 0))
        server.listen(1)
        client = socket.create_connection(('localhost', server.getsockname()[1]), timeout=5)
        peer, _ = server.accept()
        client.sendall(b'ping')
        assert peer.recv(4) == b'ping'
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(('127.0.0.1', 0))
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'pong', udp.getsockname())
        assert udp.recv(4) == b'pong'
        six = socket.socket(socket.AF_INET6)
        six.bind(('::1', 0))
        left, right = socket.socketpair()
        left.sendall(b'unix')
        assert right.recv(4) == b'unix'
        assert socket.getaddrinfo('localhost', 80)
        print('local ok')
    """)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "local ok" in done.stdout


def test_the_cli_runs_under_the_guard() -> None:
    code = ("import sys; from app.cli import entry as cli; from app.isolation import offline\n"
            "sys.argv = ['kernel-studio', 'doctor', '--json']\n"
            "try:\n    cli.main(sys.argv[1:])\nfinally:\n"
            "    print('guard', offline.network_guard_installed())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert "guard True" in done.stdout, done.stderr


def test_offline_env_is_applied(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    assert "HF_HUB_OFFLINE" in offline.missing_offline_env()
    offline.apply_offline_env()
    assert offline.missing_offline_env() == []
