"""The job process is kept between runs: its engine's worker stays warm, the status bar shows
its state, and Cancel still stops the work (the next run starts a fresh process)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from gui_support import processes_tagged, selftest_kernel

from app.engine.verify.results import Verdict
from ui.main_window import MainWindow


@pytest.fixture
def tagged(monkeypatch: pytest.MonkeyPatch) -> str:
    """A tag in the environment of every process this test starts."""
    tag = uuid.uuid4().hex
    monkeypatch.setenv("KS_TEST_TAG", tag)
    return tag


def parent_of(pid: int) -> int:
    """A process's parent (0 once it has gone)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def in_tree(pid: int, root: int) -> bool:
    """Whether `pid` is `root` or one of its descendants."""
    while pid > 1 and pid != root:
        pid = parent_of(pid)
    return pid == root


KEPT_ROLES = (b"app.engine.worker.server", b"reference_child")


def kept(tag: str, root: int) -> set[int]:
    """The processes kept between runs: the job process (`root`), its worker and its warm
    reference (with their sandboxes), known by their command lines, not by how long they live
    (a short-lived helper such as a probe or the window's spec-check is none of them)."""
    return {pid for pid in processes_tagged(tag) if in_tree(pid, root)
            and (pid == root or any(role in command_of(pid) for role in KEPT_ROLES))}


def hanging_worker(tag: str) -> bool:
    """Whether this test's worker process is inside the selftest "hang" kernel (sleeping in
    its loop, not waiting for a request on its pipe)."""
    for pid in processes_tagged(tag):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
            waiting_in = Path(f"/proc/{pid}/wchan").read_text()
        except OSError:
            continue
        if b"app.engine.worker.server" in command and "nanosleep" in waiting_in:
            return True
    return False


def command_of(pid: int) -> bytes:
    """A process's command line (empty once it has gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def verify_and_wait(qtbot: Any, window: MainWindow) -> Verdict:
    """Verify the current kernel and return the verdict."""
    with qtbot.waitSignal(window.runner.verified, timeout=300_000) as blocker:
        assert window.verify()
    verdict = blocker.args[0]
    assert isinstance(verdict, Verdict)
    return verdict


def test_a_second_verify_reuses_the_warm_process_and_worker(
        qtbot: Any, window: MainWindow, tmp_path: Path, tagged: str) -> None:
    states: list[str] = []
    window.runner.workerState.connect(states.append)
    window.open_files([selftest_kernel(tmp_path / "ok", "copy")])
    window.runner.backend = "selftest"
    assert window.status.worker_label.text() == "worker: idle"  # nothing started yet
    assert verify_and_wait(qtbot, window).status == "passed"
    assert states == ["starting", "busy", "idle"]
    assert window.status.worker_label.text() == "worker: idle (warm)"
    job = window.runner.job.pid()
    first = kept(tagged, job)
    assert job in first
    workers = [pid for pid in first if b"app.engine.worker.server" in command_of(pid)]
    assert len(workers) == 1  # the rest is the warm reference process (and its sandbox)
    assert verify_and_wait(qtbot, window).status == "passed"
    assert kept(tagged, job) == first  # the same processes: job, worker, reference
    assert states[3:] == ["busy", "idle"] and window.runner.job.starts == 1


def test_after_a_cancel_the_next_run_restarts_the_process(
        qtbot: Any, window: MainWindow, tmp_path: Path, tagged: str) -> None:
    window.open_files([selftest_kernel(tmp_path / "hang", "hang")])
    window.runner.backend = "selftest"
    window.runner.timeout = 300.0
    assert window.verify()
    qtbot.waitUntil(lambda: len(processes_tagged(tagged)) >= 2, timeout=30000)
    # The processes exist before the worker's "busy" reaches the window (a loaded machine).
    qtbot.waitUntil(lambda: window.status.worker_label.text() == "worker: verifying\u2026",
                    timeout=30000)
    with qtbot.waitSignal(window.runner.failed, timeout=10000):
        window.status.cancel_button.click()
    qtbot.waitUntil(lambda: not processes_tagged(tagged), timeout=10000)
    assert window.runner.job.state == "stopped"
    states: list[str] = []
    window.runner.workerState.connect(states.append)
    window.open_files([selftest_kernel(tmp_path / "ok", "copy")])
    with qtbot.waitSignal(window.runner.verified, timeout=60000) as blocker:
        assert window.verify()
        assert window.status.worker_label.text() == "worker: restarting\u2026"
    assert blocker.args[0].status == "passed"
    assert states == ["restarting", "busy", "idle"] and window.runner.job.starts == 2


def test_closing_the_window_ends_the_warm_process_and_its_worker(
        qtbot: Any, tmp_path: Path, prompter: Any, tagged: str) -> None:
    main = MainWindow(settings_path=tmp_path / "s.ini", prompter=prompter, offer_recovery=False)
    qtbot.addWidget(main)
    main.show()
    main.open_files([selftest_kernel(tmp_path / "ok", "copy")])
    main.runner.backend = "selftest"
    assert verify_and_wait(qtbot, main).status == "passed"
    # The job process, its worker and the warm reference (with its sandbox) are all there...
    assert len(processes_tagged(tagged)) >= 3
    assert main.close()  # ...and all end with the window
    qtbot.waitUntil(lambda: not processes_tagged(tagged), timeout=10000)


def test_closing_the_window_during_a_hanging_run_leaves_no_worker_behind(
        qtbot: Any, tmp_path: Path, prompter: Any, tagged: str) -> None:
    main = MainWindow(settings_path=tmp_path / "s.ini", prompter=prompter, offer_recovery=False)
    qtbot.addWidget(main)
    main.show()
    main.open_files([selftest_kernel(tmp_path / "hang", "hang")])
    main.runner.backend = "selftest"
    main.runner.timeout = 300.0
    assert main.verify()
    qtbot.waitUntil(lambda: hanging_worker(tagged), timeout=30000)
    assert main.close()
    # The worker runs in a session of its own and, inside the kernel, does not read its pipe:
    # only the job process's cooperative cancel stops it.
    qtbot.waitUntil(lambda: not processes_tagged(tagged), timeout=10000)
