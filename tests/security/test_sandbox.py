"""The sandbox itself, on real processes: what a program inside can read, write, reach and start,
its limits, and that it dies with the process that started it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from app.isolation import sandbox
from tests.security.payloads import kill_all, new_token, processes_with

pytestmark = pytest.mark.usefixtures("sandboxed")


def _python(code: str, box: sandbox.Sandbox) -> subprocess.CompletedProcess[str]:
    """Run Python code inside the sandbox."""
    return subprocess.run(box.command([sys.executable, "-c", textwrap.dedent(code)]),
                          capture_output=True, text=True, timeout=60, check=False)


def test_only_the_scratch_folder_is_writable_and_little_else_is_visible(tmp_path: Path) -> None:
    scratch, shown, hidden = tmp_path / "scratch", tmp_path / "shown", tmp_path / "hidden"
    for folder in (scratch, shown, hidden):
        folder.mkdir()
    (hidden / "secret").write_text("no")
    box = sandbox.Sandbox(read_only=[*sandbox.python_paths(), shown], writable=[scratch])
    done = _python(f"""
        import os
        for path in [{str(scratch / 'a')!r}, {str(shown / 'b')!r}, '/usr/c', '/d', '/dev/e']:
            try:
                open(path, 'w').close(); print('wrote', path)
            except OSError as error:
                print('refused', path, error.errno)
        for path in [{str(hidden / 'secret')!r}, '/etc/passwd', '/etc/hostname', '/var']:
            print('exists' if os.path.exists(path) else 'absent', path)
        open('/tmp/f', 'w').write('private /tmp is writable')
    """, box)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"wrote {scratch / 'a'}" and all(
        line.startswith("refused") for line in lines[1:5]), lines
    assert all(line.startswith("absent") for line in lines[5:]), lines
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a", "hidden", "scratch", "secret",
                                                           "shown"]


def test_there_is_no_network_and_no_other_process_in_view(tmp_path: Path) -> None:
    done = _python("""
        import os, socket
        print(sorted(os.listdir('/sys/class/net')) if os.path.isdir('/sys/class/net') else [])
        print(len([p for p in os.listdir('/proc') if p.isdigit()]))
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.sendto(b'x', ('8.8.8.8', 53)); print('sent')
        except OSError as error:
            print('unreachable', error.errno)
    """, sandbox.Sandbox(read_only=sandbox.python_paths(), writable=[tmp_path]))
    assert done.returncode == 0, done.stderr
    _interfaces, count, sent = done.stdout.splitlines()
    assert int(count) <= 3  # bwrap's init, the program, perhaps nothing else
    assert sent.startswith("unreachable")


def test_a_user_name_is_known_inside_without_the_password_database(tmp_path: Path) -> None:
    # On the GPU machine uid 0 had no passwd entry in the sandbox and torch's import of its
    # dynamo config (getpass.getuser()) raised: every KernelBench probe using it failed.
    done = _python("import getpass; print(getpass.getuser())",
                   sandbox.Sandbox(read_only=sandbox.python_paths(), writable=[tmp_path],
                                   env={"USER": "alice", "LOGNAME": "alice"}))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == sandbox.SANDBOX_USER  # not taken from the caller either


def test_only_harmless_variables_pass(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin", "HF_TOKEN": "hf_secret", "AWS_SECRET_ACCESS_KEY": "secret",
           "https_proxy": "http://proxy:3128", "KERNEL_STUDIO_CPU_THREADS": "2"}
    done = _python("import os; print(sorted(os.environ))",
                   sandbox.Sandbox(read_only=sandbox.python_paths(), writable=[tmp_path],
                                   env=env))
    names = set(eval(done.stdout))  # noqa: S307 - a list of names printed by the test itself
    assert {"PATH", "KERNEL_STUDIO_CPU_THREADS", sandbox.INSIDE_VARIABLE} <= names, done
    assert not names & {"HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "https_proxy"}, done


def test_limits_apply_inside(tmp_path: Path) -> None:
    limits = sandbox.Limits(data=512 << 20, cpu_seconds=7, file_size=1 << 20, open_files=64)
    done = _python("""
        import resource
        for name in ('DATA', 'CPU', 'FSIZE', 'NOFILE', 'CORE'):
            print(name, resource.getrlimit(getattr(resource, 'RLIMIT_' + name)))
        try:
            open('big', 'wb').write(b'x' * (2 << 20)); print('wrote 2 MiB')
        except OSError as error:
            print('file too large', error.errno)
        try:
            block = bytearray(1 << 30); print('got 1 GiB')
        except MemoryError:
            print('no memory')
    """, sandbox.Sandbox(read_only=sandbox.python_paths(), writable=[tmp_path], limits=limits,
                         cwd=tmp_path))
    lines = done.stdout.splitlines()
    assert lines[:5] == ["DATA (536870912, 536870912)", "CPU (7, 7)",
                         "FSIZE (1048576, 1048576)", "NOFILE (64, 64)", "CORE (0, 0)"], done
    assert lines[5:] == ["file too large 27", "no memory"], done


def _running(token: str) -> bool:
    """Whether the sandboxed shell itself (not only bwrap) runs."""
    for pid in processes_with(token):
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"/bin/sh\0-c\0sleep"):
                return True
        except OSError:
            continue
    return False


def test_the_sandbox_dies_with_its_parent(tmp_path: Path) -> None:
    token = new_token()
    box = sandbox.Sandbox(writable=[tmp_path])
    inner = subprocess.list2cmdline(box.command(["/bin/sh", "-c", "sleep 600", token]))
    # A parent that starts the sandbox and is then killed, as an app that crashes would be.
    parent = subprocess.Popen(["/bin/sh", "-c", f"{inner} & wait"], start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while not _running(token) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _running(token), "the sandboxed program never started"
        os.kill(parent.pid, signal.SIGKILL)  # the parent only: bwrap itself is not signalled
        parent.wait()
        deadline = time.monotonic() + 10
        while processes_with(token) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert processes_with(token) == []
    finally:
        kill_all(token)


def test_a_sandboxed_program_cannot_make_namespaces_of_its_own(tmp_path: Path) -> None:
    if not sandbox.probe().user_namespace:
        pytest.skip("sandboxes here have no user namespace of their own")
    done = subprocess.run(sandbox.Sandbox(writable=[tmp_path]).command(
        ["unshare", "--user", "--map-root-user", "true"]), capture_output=True, text=True,
        timeout=60, check=False)
    assert done.returncode != 0


def test_the_probe_says_why_not(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNEL_STUDIO_BWRAP", "/nonexistent/bwrap")
    works, reason = sandbox.available()
    assert not works and "bubblewrap is not installed" in reason
    monkeypatch.setenv(sandbox.INSIDE_VARIABLE, "1")
    assert "already inside" in sandbox.available()[1]
