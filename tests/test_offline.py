"""The offline guard refuses network connections and sets Hugging Face's offline variables."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from app import offline


def test_guard_refuses_a_remote_connection_in_a_child_process() -> None:
    code = (
        "import socket, sys\n"
        "from app import offline\n"
        "offline.enforce()\n"
        "s = socket.socket()\n"
        "try:\n"
        "    s.connect(('93.184.216.34', 80))\n"
        "except offline.NetworkRefused as e:\n"
        "    print('refused:', e); sys.exit(0)\n"
        "sys.exit(5)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "refused a connection to ('93.184.216.34', 80)" in done.stdout


def test_guard_lets_loopback_through() -> None:
    offline.install_network_guard()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    client = socket.socket()
    client.connect(server.getsockname())  # must not raise
    client.close()
    server.close()


def test_offline_env_is_applied(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    assert "HF_HUB_OFFLINE" in offline.missing_offline_env()
    offline.apply_offline_env()
    assert offline.missing_offline_env() == []
