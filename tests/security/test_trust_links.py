"""Trust follows links: a link in a spec's folder to a file or folder inside it counts by what
it leads to (retargeting it takes the trust away), and a link leading outside the folder,
nowhere, round in a loop, or into a __pycache__ folder makes the spec impossible to trust, so
no file the kernel or reference can read through the folder escapes the hash."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.isolation import trust
from app.spec.model import load_spec
from tests.security.payloads import cli, reference_spec, verify

NO_SANDBOX = {"KERNEL_STUDIO_SANDBOX": "none"}


@pytest.fixture(autouse=True)
def own_trust_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A trust file of this test's own."""
    monkeypatch.setenv("KERNEL_STUDIO_DATA", str(tmp_path / "data"))


def _spec(folder: Path) -> Path:
    """A copy spec whose reference imports a helper module from its folder's `lib`."""
    spec = reference_spec(folder, "sys.path.insert(0, os.path.join(os.path.dirname("
                                  "__file__), 'lib'))\nimport helper")
    return spec


def _trusted_then(spec: Path, change: object) -> bool:
    """Trust the spec, make the change (a callable), and say whether it is still trusted."""
    trust.add(load_spec(spec))
    assert callable(change)
    change()
    return trust.is_trusted(load_spec(spec))


def test_a_linked_folder_outside_cannot_be_trusted(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "kernel")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "helper.py").write_text("VALUE = 1\n")
    (tmp_path / "kernel" / "lib").symlink_to(tmp_path / "shared", target_is_directory=True)
    with pytest.raises(trust.TrustError, match="outside the spec's folder"):
        trust.add(load_spec(spec))
    assert not trust.is_trusted(load_spec(spec))


def test_a_linked_file_outside_cannot_be_trusted(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "kernel")
    (tmp_path / "kernel" / "lib").mkdir()
    (tmp_path / "elsewhere.py").write_text("VALUE = 1\n")
    (tmp_path / "kernel" / "lib" / "helper.py").symlink_to(tmp_path / "elsewhere.py")
    with pytest.raises(trust.TrustError, match="outside the spec's folder"):
        trust.add(load_spec(spec))


def test_an_edit_through_a_linked_folder_inside_takes_the_trust_away(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "kernel")
    real = tmp_path / "kernel" / "modules"
    real.mkdir()
    (real / "helper.py").write_text("VALUE = 1\n")
    (tmp_path / "kernel" / "lib").symlink_to("modules", target_is_directory=True)
    edit = tmp_path / "kernel" / "lib" / "helper.py"
    assert not _trusted_then(spec, lambda: edit.write_text("VALUE = 2\n"))


def test_retargeting_a_link_inside_takes_the_trust_away(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "kernel")
    for name in ("one", "two"):
        (tmp_path / "kernel" / name).mkdir()
        (tmp_path / "kernel" / name / "helper.py").write_text(f"VALUE = {name!r}\n")
    lib = tmp_path / "kernel" / "lib"
    lib.symlink_to("one", target_is_directory=True)

    def retarget() -> None:
        """Point lib at the other folder: every file is as it was."""
        lib.unlink()
        lib.symlink_to("two", target_is_directory=True)
    assert not _trusted_then(spec, retarget)


def test_an_unchanged_folder_with_inside_links_stays_trusted(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "kernel")
    (tmp_path / "kernel" / "modules").mkdir()
    (tmp_path / "kernel" / "modules" / "helper.py").write_text("VALUE = 1\n")
    (tmp_path / "kernel" / "lib").symlink_to("modules", target_is_directory=True)
    (tmp_path / "kernel" / "alias.py").symlink_to("ref.py")
    assert _trusted_then(spec, lambda: None)
    entry = trust.load_store()[0]
    assert entry.files["lib ->"] == "modules" and entry.files["alias.py ->"] == "ref.py"


@pytest.mark.parametrize("make", ["loop", "dangling", "pycache"])
def test_loops_dangling_links_and_links_into_bytecode_cannot_be_trusted(
        tmp_path: Path, make: str) -> None:
    spec = _spec(tmp_path / "kernel")
    folder = tmp_path / "kernel"
    if make == "loop":
        os.symlink("b", folder / "a")
        os.symlink("a", folder / "b")
    elif make == "dangling":
        os.symlink("missing", folder / "lib")
    else:
        (folder / "__pycache__").mkdir()
        (folder / "__pycache__" / "helper.pyc").write_bytes(b"\0" * 16)
        (folder / "lib").symlink_to("__pycache__", target_is_directory=True)
    with pytest.raises(trust.TrustError):
        trust.add(load_spec(spec))


@pytest.mark.usefixtures("cpu_payloads")
def test_the_command_line_refuses_and_the_spec_does_not_run(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "kernel")
    marker = tmp_path / "ran"
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "helper.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    (tmp_path / "kernel" / "lib").symlink_to(tmp_path / "shared", target_is_directory=True)
    env = {**NO_SANDBOX, "KERNEL_STUDIO_DATA": str(tmp_path / "data")}
    refused = cli("trust", str(spec), env=env)
    assert refused.code == 2 and "outside the spec's folder" in refused.stderr, refused.stderr
    outcome = verify(spec, env=env)
    assert outcome.code == 3 and outcome.verdict["status"] == "unverified", outcome.stdout
    assert not marker.exists()
