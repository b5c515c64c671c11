"""The installer end to end on a tiny signed bundle: install into a fresh account, upgrade,
refuse an upgrade signed by another key, uninstall."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tinybundle import install, seal, stage


def _version(prefix: Path) -> str:
    """ks_tiny_a's version as the installed environment imports it."""
    return subprocess.run([str(prefix / "venv" / "bin" / "python"), "-c",
                           "import ks_tiny_a; print(ks_tiny_a.VERSION)"],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_install_upgrade_and_uninstall(tmp_path: Path) -> None:
    key = tmp_path / "keys" / "signing.key"
    first, fingerprint = seal(stage(tmp_path / "one" / "kernel-studio-tiny"), tmp_path, key)
    home = tmp_path / "home"
    home.mkdir()
    prefix = home / "opt" / "kernel-studio"
    result = install(str(first), "--prefix", str(prefix), "--fingerprint", fingerprint,
                     home=home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert _version(prefix) == "1.0"
    assert (prefix / "bundle" / "manifest.json").is_file()
    entry = home / ".local" / "share" / "applications" / "kernel-studio.desktop"
    assert f"Exec={prefix}/bin/kernel-studio gui" in entry.read_text()
    assert (home / ".local" / "bin" / "kernel-studio").resolve() == prefix / "bin" / "kernel-studio"
    assert [p.name for p in prefix.parent.iterdir()] == ["kernel-studio"]  # no temporary left

    again = install(str(first), "--prefix", str(prefix), "--fingerprint", fingerprint, home=home)
    assert again.returncode == 1 and "--upgrade" in again.stderr

    second, _ = seal(stage(tmp_path / "two" / "kernel-studio-tiny", "2.0"), tmp_path / "2", key)
    upgraded = install(str(second), "--upgrade", "--prefix", str(prefix), home=home)
    assert upgraded.returncode == 0, upgraded.stdout + upgraded.stderr
    assert _version(prefix) == "2.0"

    stranger, _ = seal(stage(tmp_path / "three" / "kernel-studio-tiny", "3.0"), tmp_path / "3",
                       tmp_path / "other.key")
    refused = install(str(stranger), "--upgrade", "--prefix", str(prefix), home=home)
    assert refused.returncode == 1 and "not by the key of the installed version" in refused.stderr
    assert _version(prefix) == "2.0"

    removed = install("--uninstall", "--prefix", str(prefix), home=home)
    assert removed.returncode == 0, removed.stderr
    assert not prefix.exists() and not entry.exists()
    assert not (home / ".local" / "bin" / "kernel-studio").exists()
