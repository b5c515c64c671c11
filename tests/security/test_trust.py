"""Where no sandbox can be had, only content the user trusted runs: everything else is
"unverified" (exit 3) with a message saying how to trust it, and its reference never runs.
Trust is kept by content hash; the doctor says which isolation is in force."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.isolation import sandbox, trust
from app.spec.model import load_spec
from tests.security.payloads import cli, reference_spec, verify

pytestmark = pytest.mark.usefixtures("cpu_payloads")
NO_SANDBOX = {"KERNEL_STUDIO_SANDBOX": "none"}


def _marking_spec(folder: Path) -> tuple[Path, Path]:
    """A spec whose reference leaves a file beside itself when it runs; (spec, that file)."""
    marker = folder / "ran"
    return reference_spec(folder, f"open({str(marker)!r}, 'w').close()"), marker


def _data(tmp_path: Path) -> dict[str, str]:
    """No sandbox, and a trust file of this test's own."""
    return {**NO_SANDBOX, "KERNEL_STUDIO_DATA": str(tmp_path / "data")}


def test_untrusted_code_does_not_run_without_a_sandbox(tmp_path: Path) -> None:
    spec, marker = _marking_spec(tmp_path / "kernel")
    outcome = verify(spec, env=_data(tmp_path))
    assert outcome.code == 3 and outcome.verdict["status"] == "unverified", outcome.stdout
    assert f"kernel-studio trust {spec}" in str(outcome.verdict["message"])
    assert "Traceback" not in outcome.stderr and not marker.exists()


def test_trusted_content_runs_and_an_edit_takes_the_trust_away(tmp_path: Path) -> None:
    env = _data(tmp_path)
    spec, marker = _marking_spec(tmp_path / "kernel")
    trusted = cli("trust", str(spec), env=env)
    assert trusted.code == 0 and "k.cu" in trusted.stdout and "ref.py" in trusted.stdout
    assert verify(spec, env=env).code == 0 and marker.exists()
    marker.unlink()
    with (spec.parent / "k.cu").open("a") as kernel:
        kernel.write("// edited\n")
    assert verify(spec, env=env).code == 3 and not marker.exists()
    listed = cli("trust", "--list", env=env)
    assert "changed since: not trusted" in listed.stdout


def test_a_new_header_beside_a_trusted_kernel_is_not_trusted(tmp_path: Path) -> None:
    env = _data(tmp_path)
    spec, _marker = _marking_spec(tmp_path / "kernel")
    assert cli("trust", str(spec.parent), env=env).code == 0  # a folder: its specs
    (spec.parent / "extra.cuh").write_text("#define X 1\n")
    assert verify(spec, env=env).code == 3


def test_trust_follows_content_and_can_be_removed(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNEL_STUDIO_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("KERNEL_STUDIO_SANDBOX", "none")
    spec, _marker = _marking_spec(tmp_path / "kernel")
    trust.add(load_spec(spec))
    copy = tmp_path / "copy"
    shutil.copytree(spec.parent, copy)
    assert trust.is_trusted(load_spec(copy / spec.name))  # the same content elsewhere
    assert trust.decide(load_spec(spec)).refusal is None
    assert trust.decide(load_spec(spec), vouched=False).refusal is not None
    assert [e.spec for e in trust.remove(spec)] == [str(spec)]
    assert trust.decide(load_spec(spec)).refusal is not None
    stored = json.loads(trust.store_path().read_text())
    assert stored["format"] == 1 and stored["entries"] == []


def test_with_a_sandbox_everything_runs_inside_it(tmp_path: Path, sandboxed: None) -> None:
    spec, _marker = _marking_spec(tmp_path / "kernel")
    decision = trust.decide(load_spec(spec), vouched=False)
    assert decision.sandboxed and decision.refusal is None


def test_bad_trust_commands_exit_2_with_one_message(tmp_path: Path) -> None:
    env = _data(tmp_path)
    for args in (["trust"], ["trust", str(tmp_path / "missing.toml")],
                 ["trust", "--remove", str(tmp_path / "x.toml")], ["trust", str(tmp_path)]):
        outcome = cli(*args, env=env)
        assert outcome.code == 2 and outcome.stderr.strip(), args
        assert "Traceback" not in outcome.stderr
    store = tmp_path / "data" / "trust.json"
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text("{ not json")
    outcome = cli("trust", "--list", env=env)
    assert outcome.code == 2 and "cannot be read" in outcome.stderr


def test_the_doctor_says_which_isolation_is_in_force(tmp_path: Path) -> None:
    checks = {c["name"]: c for c in json.loads(cli("doctor", "--json").stdout)["checks"]}
    works, reason = sandbox.available()
    assert checks["sandbox"]["ok"] is works
    assert ("bubblewrap" in checks["sandbox"]["value"]) if works else (
        reason in checks["sandbox"]["value"])
    off = {c["name"]: c for c in json.loads(cli("doctor", "--json", env=_data(tmp_path))
                                           .stdout)["checks"]}
    assert off["sandbox"]["value"] == "none: turned off by KERNEL_STUDIO_SANDBOX=none"
    assert "kernel-studio trust" in off["sandbox"]["note"]


def _importing_spec(folder: Path, module_folder: str) -> Path:
    """A spec whose reference imports `helper` from `module_folder` beside it."""
    return reference_spec(folder, (
        f"sys.path.insert(0, os.path.join(os.path.dirname(__file__), {module_folder!r}))\n"
        "import helper"))


def test_a_hidden_module_of_a_trusted_reference_is_covered(tmp_path: Path) -> None:
    env = _data(tmp_path)
    spec = _importing_spec(tmp_path / "kernel", ".lib")
    (spec.parent / ".lib").mkdir()
    helper = spec.parent / ".lib" / "helper.py"
    helper.write_text("VALUE = 1\n")
    assert cli("trust", str(spec), env=env).code == 0
    assert verify(spec, env=env).code == 0
    marker = tmp_path / "ran"
    helper.write_text(f"open({str(marker)!r}, 'w').close()\n")
    assert verify(spec, env=env).code == 3 and not marker.exists()  # untrusted again


def test_a_planted_bytecode_cache_is_never_loaded(tmp_path: Path) -> None:
    """A __pycache__ entry made to match a trusted module's size and time, holding other code:
    Python would load it instead of the source; the reference's process never looks there."""
    import importlib.util
    import os
    import py_compile

    env = _data(tmp_path)
    spec = _importing_spec(tmp_path / "kernel", "lib")
    (spec.parent / "lib").mkdir()
    helper = spec.parent / "lib" / "helper.py"
    marker = tmp_path / "ran"
    evil = f"open({str(marker)!r}, 'w').close()\n"
    benign = "VALUE = 1" + " " * (len(evil) - len("VALUE = 1") - 1) + "\n"
    helper.write_text(evil)
    planted = Path(importlib.util.cache_from_source(str(helper)))
    py_compile.compile(str(helper), cfile=str(planted), doraise=True)
    times = helper.stat()
    helper.write_text(benign)  # the same size, and the same time below: the cache "matches"
    os.utime(helper, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert cli("trust", str(spec), env=env).code == 0
    assert verify(spec, env=env).code == 0
    assert not marker.exists() and planted.exists()
