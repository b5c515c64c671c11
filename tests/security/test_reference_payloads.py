"""References that misbehave: each is a reference_error (exit 2) with one message naming the file,
never a verdict on the kernel and never "passed"; inside the sandbox a reference writes nothing
outside its scratch folder and reaches no socket."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.security.payloads import Listeners, cli, reference_spec, verify

pytestmark = pytest.mark.usefixtures("cpu_payloads")


def _refused(spec: Path, *words: str, env: dict[str, str] | None = None) -> str:
    """Verify; assert a clean reference_error naming ref.py; return its message."""
    outcome = verify(spec, env=env)
    assert "Traceback" not in outcome.stderr, outcome.stderr
    assert outcome.code == 2, outcome.stdout
    verdict = outcome.verdict
    message = str(verdict["message"])
    assert verdict["status"] == "reference_error" and "ref.py" in message, message
    assert verdict.get("runs") in ([], None), verdict
    for word in words:
        assert word in message
    return message


def test_a_reference_that_calls_sys_exit_is_a_reference_error(tmp_path: Path) -> None:
    _refused(reference_spec(tmp_path / "kernel", "sys.exit(0)"), "sys.exit(0)")


def test_a_reference_that_exits_its_process_is_a_reference_error(tmp_path: Path) -> None:
    _refused(reference_spec(tmp_path / "kernel", "os._exit(0)"), "ended (exit code 0)")


def test_a_reference_that_exits_while_loading_is_a_reference_error(tmp_path: Path) -> None:
    spec = reference_spec(tmp_path / "kernel", "pass")
    reference = spec.parent / "ref.py"
    reference.write_text("import sys\nsys.exit(0)\n" + reference.read_text())
    _refused(spec, "failed to load", "sys.exit(0)")


def test_a_reference_that_raises_names_its_line(tmp_path: Path) -> None:
    _refused(reference_spec(tmp_path / "kernel", "raise ValueError('no')"),
             "ValueError: no", "(line 5)")


def test_a_reference_that_hangs_is_stopped_at_its_time_limit(tmp_path: Path) -> None:
    _refused(reference_spec(tmp_path / "kernel", "time.sleep(3600)"), "more than 2 s",
             env={"KERNEL_STUDIO_REFERENCE_TIMEOUT": "2"})


@pytest.mark.parametrize(("body", "words"), [
    ("return {'c': a[:-1]}", "element(s) for 'c'"),
    ("return {'d': a}", "no value for output 'c'"),
    ("return {'c': a.astype(object)}", "object"),
    ("return [a]", "dict of outputs, not list"),
])
def test_wrong_outputs_are_reference_errors(tmp_path: Path, body: str, words: str) -> None:
    _refused(reference_spec(tmp_path / "kernel", body), words)


def test_a_reference_linked_from_outside_its_folder_is_refused(tmp_path: Path) -> None:
    spec = reference_spec(tmp_path / "kernel", "pass")
    elsewhere = tmp_path / "elsewhere.py"
    (spec.parent / "ref.py").rename(elsewhere)
    (spec.parent / "ref.py").symlink_to(elsewhere)
    _refused(spec, "outside the spec's folder", str(elsewhere))


@pytest.mark.usefixtures("sandboxed")
def test_a_reference_cannot_write_outside_its_scratch_folder(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    targets = [tmp_path / "outside" / "written", tmp_path / "kernel" / "written"]
    tries = "".join(f"\ntry:\n    open({str(t)!r}, 'w').write('escaped')\nexcept OSError:\n"
                    "    pass" for t in targets)
    outcome = verify(reference_spec(tmp_path / "kernel", tries))
    assert outcome.code == 0, outcome.stdout  # contained: the reference still answers
    assert [t for t in targets if t.exists()] == []


def test_without_the_sandbox_a_trusted_reference_does_write_there(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    target = tmp_path / "outside" / "written"
    spec = reference_spec(tmp_path / "kernel", f"open({str(target)!r}, 'w').write('escaped')")
    env = {"KERNEL_STUDIO_SANDBOX": "none", "KERNEL_STUDIO_DATA": str(tmp_path / "data")}
    assert cli("trust", str(spec), env=env).code == 0
    assert verify(spec, env=env).code == 0 and target.read_text() == "escaped"  # the control


@pytest.mark.usefixtures("sandboxed")
def test_a_reference_reaches_no_socket(tmp_path: Path) -> None:
    listeners = Listeners()
    body = (f"socket.create_connection(('127.0.0.1', {listeners.port}), timeout=2)")
    try:
        message = _refused(reference_spec(tmp_path / "kernel", body), "refused")
        arrived = listeners.reached()
    finally:
        listeners.close()
    assert arrived == [], message
