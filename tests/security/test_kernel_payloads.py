"""Host code hidden in a kernel, run by the CPU backend when it loads the kernel's library. Inside
the sandbox it cannot write outside the scratch folder, reach a socket or leave a process behind;
a constructor that never returns ends at --timeout. A control run without the sandbox (trusted,
as a user may choose) shows that each payload really does what it tries to."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.security.payloads import (
    NETWORK,
    PLANT,
    SPAWN,
    SPIN,
    WRITE,
    Listeners,
    c_string,
    cli,
    kernel_spec,
    kill_all,
    new_token,
    processes_with,
    verify,
)

pytestmark = pytest.mark.usefixtures("cpu_payloads")
NO_SANDBOX = {"KERNEL_STUDIO_SANDBOX": "none"}


def _write_targets(tmp_path: Path, cache: Path) -> list[Path]:
    """Files the write payload aims at: outside everything, in the kernel's own folder, and in
    the build cache that later workers load libraries from."""
    (tmp_path / "outside").mkdir()
    (cache / "cpu").mkdir(parents=True, exist_ok=True)
    return [tmp_path / "outside" / "escaped", tmp_path / "kernel" / "escaped",
            cache / "cpu" / "escaped"]


def _write_spec(tmp_path: Path, targets: list[Path]) -> Path:
    """The spec whose kernel's constructor writes every target."""
    listed = ", ".join(c_string(str(t)) for t in targets)
    return kernel_spec(tmp_path / "kernel", WRITE, TARGETS=listed)


def _clean(outcome_stderr: str) -> None:
    """No traceback reached the user."""
    assert "Traceback" not in outcome_stderr, outcome_stderr


@pytest.mark.usefixtures("sandboxed")
def test_a_constructor_cannot_write_outside_the_scratch_folder(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    targets = _write_targets(tmp_path, cache)
    outcome = verify(_write_spec(tmp_path, targets), env={"KERNEL_STUDIO_CACHE": str(cache)})
    _clean(outcome.stderr)
    assert outcome.code == 0, outcome.stdout  # contained: the kernel itself copies correctly
    assert [t for t in targets if t.exists()] == []


def test_without_the_sandbox_the_write_payload_does_escape(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    targets = _write_targets(tmp_path, cache)
    spec = _write_spec(tmp_path, targets)
    env = {**NO_SANDBOX, "KERNEL_STUDIO_CACHE": str(cache)}
    assert cli("trust", str(spec), env=env).code == 0
    outcome = verify(spec, env=env)
    assert outcome.code == 0, outcome.stdout
    assert targets[0].read_text() == "escaped"  # the control: the payload works


@pytest.mark.usefixtures("sandboxed")
def test_a_constructor_reaches_no_socket(tmp_path: Path) -> None:
    listeners = Listeners()
    try:
        outcome = verify(kernel_spec(tmp_path / "kernel", NETWORK, PORT=str(listeners.port)))
        arrived = listeners.reached()
    finally:
        listeners.close()
    _clean(outcome.stderr)
    assert outcome.code == 0, outcome.stdout
    assert arrived == []


def test_without_the_sandbox_the_network_payload_connects(tmp_path: Path) -> None:
    listeners = Listeners()
    spec = kernel_spec(tmp_path / "kernel", NETWORK, PORT=str(listeners.port))
    try:
        assert cli("trust", str(spec), env=NO_SANDBOX).code == 0
        verify(spec, env=NO_SANDBOX)
        arrived = listeners.reached()
    finally:
        listeners.close()
    assert arrived == ["tcp", "udp"]


@pytest.mark.usefixtures("sandboxed")
def test_a_program_started_by_a_constructor_harms_nothing_and_dies_with_the_run(
        tmp_path: Path) -> None:
    token, marker = new_token(), tmp_path / "outside" / "id"
    (tmp_path / "outside").mkdir()
    spec = kernel_spec(tmp_path / "kernel", SPAWN, MARKER=str(marker), TOKEN=token)
    try:
        outcome = verify(spec)
        left = processes_with(token)
    finally:
        kill_all(token)
    _clean(outcome.stderr)
    assert outcome.code == 0, outcome.stdout
    assert left == [] and not marker.exists()


def test_without_the_sandbox_the_spawn_payload_runs_id_and_stays(tmp_path: Path) -> None:
    token, marker = new_token(), tmp_path / "outside" / "id"
    (tmp_path / "outside").mkdir()
    spec = kernel_spec(tmp_path / "kernel", SPAWN, MARKER=str(marker), TOKEN=token)
    try:
        assert cli("trust", str(spec), env=NO_SANDBOX).code == 0
        verify(spec, env=NO_SANDBOX)
        deadline = time.monotonic() + 10
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        left = processes_with(token)
    finally:
        kill_all(token)
    assert "uid=" in marker.read_text() and left


def test_a_constructor_that_spins_forever_ends_at_the_time_limit(tmp_path: Path) -> None:
    spec = kernel_spec(tmp_path / "kernel", SPIN)
    # The load builds the library before its time counts, so that the run below only loads it.
    verify(spec, "--timeout", "2")
    outcome = verify(spec, "--timeout", "2")
    _clean(outcome.stderr)
    assert outcome.code == 1 and outcome.verdict["status"] == "timeout", outcome.stdout
    assert "no answer within 2 s" in str(outcome.verdict["message"])
    assert outcome.seconds < 12  # the worker's start and Python's, plus the 2 s; not 180 s


def _plant_spec(tmp_path: Path) -> tuple[Path, Path]:
    """The spec whose kernel links its output's buffer file to a file of the user's."""
    victim = tmp_path / "mine" / "precious.txt"
    victim.parent.mkdir()
    victim.write_text("precious")
    spec = kernel_spec(tmp_path / "kernel", PLANT, seeds=3, VICTIM_DIR=c_string(
        str(victim.parent)), VICTIM=c_string(str(victim)))
    return spec, victim


@pytest.mark.usefixtures("sandboxed")
def test_a_link_planted_in_the_session_folder_is_never_followed_by_the_parent(
        tmp_path: Path) -> None:
    spec, victim = _plant_spec(tmp_path)
    outcome = verify(spec)
    _clean(outcome.stderr)
    assert victim.read_text() == "precious"
    assert outcome.code == 1 and outcome.verdict["status"] == "crash", outcome.stdout
    assert "buffer-c.bin" in str(outcome.verdict["message"])


def test_without_the_sandbox_the_worker_refuses_the_planted_link_too(tmp_path: Path) -> None:
    spec, victim = _plant_spec(tmp_path)
    assert cli("trust", str(spec), env=NO_SANDBOX).code == 0
    outcome = verify(spec, env=NO_SANDBOX)
    # The control: the link was planted (the run fails on it); the worker, which once wrote
    # its outputs through it, opens buffer files without following links.
    assert victim.read_text() == "precious"
    assert outcome.code == 1 and "buffer-c.bin" in str(outcome.verdict["message"]), outcome.stdout
