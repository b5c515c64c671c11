"""The installer refuses a bundle that is not exactly what was signed, before anything changes
on the machine: no prefix, no folder beside it, nothing in the home folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tinybundle import copy_bundle, install, load, make_wheel, seal, stage


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    """A sealed tiny bundle (unpacked folder), its key's fingerprint, and the key file."""
    base = tmp_path_factory.mktemp("signed")
    folder = stage(base / "kernel-studio-tiny")
    key = base / "keys" / "signing.key"
    _, fingerprint = seal(folder, base / "out", key)
    return folder, fingerprint, key


def _refused(bundle: Path, fingerprint: str, tmp_path: Path) -> str:
    """Run the installer into a fresh home; assert it refused and changed nothing."""
    home = tmp_path / "home"
    home.mkdir()
    result = install(str(bundle), "--prefix", str(home / "opt" / "ks"), "--fingerprint",
                     fingerprint, home=home)
    assert result.returncode == 1, result.stdout + result.stderr
    assert list(home.iterdir()) == [], "the refused install left something in the home folder"
    return result.stderr


def test_a_tampered_wheel_is_refused(signed: tuple[Path, str, Path], tmp_path: Path) -> None:
    folder, fingerprint, _ = signed
    bundle = copy_bundle(folder, tmp_path / "bundle")
    wheel = next((bundle / "wheels").glob("ks_tiny_b-*.whl"))
    wheel.write_bytes(wheel.read_bytes() + b"\0")
    assert "wheels/ks_tiny_b-1.0-py3-none-any.whl differs" in _refused(bundle, fingerprint,
                                                                      tmp_path)


def test_an_extra_wheel_is_refused(signed: tuple[Path, str, Path], tmp_path: Path) -> None:
    folder, fingerprint, _ = signed
    bundle = copy_bundle(folder, tmp_path / "bundle")
    make_wheel(bundle / "wheels", "ks_tiny_b", "9.0")  # a higher version pip would prefer
    assert "not listed in the signed manifest: wheels/ks_tiny_b-9.0" in _refused(
        bundle, fingerprint, tmp_path)


def test_a_missing_wheel_is_refused(signed: tuple[Path, str, Path], tmp_path: Path) -> None:
    folder, fingerprint, _ = signed
    bundle = copy_bundle(folder, tmp_path / "bundle")
    next((bundle / "wheels").glob("ks_tiny_b-*.whl")).unlink()
    assert "missing: wheels/ks_tiny_b-1.0" in _refused(bundle, fingerprint, tmp_path)


def test_an_edited_manifest_is_refused(signed: tuple[Path, str, Path], tmp_path: Path) -> None:
    """A swapped wheel whose new hash was written into the manifest: the signature fails."""
    folder, fingerprint, _ = signed
    bundle = copy_bundle(folder, tmp_path / "bundle")
    wheel = next((bundle / "wheels").glob("ks_tiny_b-*.whl"))
    wheel.write_bytes(wheel.read_bytes() + b"\0")
    manifest = json.loads((bundle / "manifest.json").read_text())
    entry = manifest["files"][f"wheels/{wheel.name}"]
    entry.update(size=wheel.stat().st_size, sha256=load("bundle_sign").sha256_file(wheel))
    (bundle / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    assert "signature of manifest.json does not match" in _refused(bundle, fingerprint, tmp_path)


def test_a_signature_by_another_key_is_refused(signed: tuple[Path, str, Path],
                                               tmp_path: Path) -> None:
    """The same files re-signed by someone else's key (public key swapped too)."""
    folder, fingerprint, _ = signed
    bundle = copy_bundle(folder, tmp_path / "bundle")
    seal(bundle, tmp_path / "out", tmp_path / "other.key")
    assert "not by the key with fingerprint" in _refused(bundle, fingerprint, tmp_path)


def test_a_signature_not_matching_the_key_is_refused(signed: tuple[Path, str, Path],
                                                     tmp_path: Path) -> None:
    """The other key's signature beside the right public key."""
    folder, fingerprint, _ = signed
    other = copy_bundle(folder, tmp_path / "other")
    seal(other, tmp_path / "out", tmp_path / "other.key")
    bundle = copy_bundle(folder, tmp_path / "bundle")
    (bundle / "manifest.sig").write_bytes((other / "manifest.sig").read_bytes())
    assert "signature of manifest.json does not match" in _refused(bundle, fingerprint, tmp_path)


def test_an_unconfirmed_key_stops_the_install(signed: tuple[Path, str, Path],
                                              tmp_path: Path) -> None:
    """Without --fingerprint and with no terminal to ask on, it stops (exit 4) and says how."""
    folder, fingerprint, _ = signed
    home = tmp_path / "home"
    home.mkdir()
    result = install(str(folder), "--prefix", str(home / "ks"), home=home)
    assert result.returncode == 4
    assert fingerprint in result.stderr and "--fingerprint" in result.stderr
    assert list(home.iterdir()) == []
