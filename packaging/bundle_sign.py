"""Sealing a bundle: the requirements files with hashes, the manifest of every file, its
Ed25519 signature, and the archive. Runs on the build machine (needs `cryptography`).

The signing key is made on first use and kept outside the repository (by default
~/.config/kernel-studio/bundle-signing.key, mode 0600); its public half travels in each bundle,
and its fingerprint is printed so that the administrator can compare it over another channel.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import re
import sys
import tarfile
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bundle_verify  # noqa: E402  (the same names and fingerprint as the installer's check)

DEFAULT_KEY = Path.home() / ".config" / "kernel-studio" / "bundle-signing.key"
# Wheel platform tags that name a glibc floor without numbers in them.
LEGACY_TAGS = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
INSTALLER_FILES = ("install.sh", "bundle_verify.py", "ed25519_verify.py", "kernel-studio.desktop")


def load_key(path: Path) -> Ed25519PrivateKey:
    """The signing key at `path`, made (private to this user) when there is none yet."""
    if path.is_file():
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise SystemExit(f"{path} is not an Ed25519 key")
        return key
    key = Ed25519PrivateKey.generate()
    path.parent.mkdir(parents=True, exist_ok=True)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(pem)
    print(f"made a new signing key: {path} (keep it private; back it up)")
    return key


def public_bytes(key: Ed25519PrivateKey) -> bytes:
    """The raw 32 bytes of the public key."""
    return key.public_key().public_bytes(serialization.Encoding.Raw,
                                         serialization.PublicFormat.Raw)


def sha256_file(path: Path) -> str:
    """The SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def wheel_name_version(wheel: Path) -> tuple[str, str]:
    """The normalized project name and the version from a wheel's file name."""
    name, version = wheel.name.split("-")[:2]
    return re.sub(r"[-_.]+", "-", name).lower(), version


def requirements_text(wheels: list[Path]) -> str:
    """One pinned line with its hash per wheel, for pip's hash-checking mode."""
    lines, seen = [], set()
    for wheel in sorted(wheels):
        name, version = wheel_name_version(wheel)
        if name in seen:
            raise SystemExit(f"two wheels of {name} in {wheel.parent}: keep one")
        seen.add(name)
        lines.append(f"{name}=={version} --hash=sha256:{sha256_file(wheel)}")
    return "\n".join(lines) + "\n"


def glibc_floor(wheels: list[Path]) -> str:
    """The newest glibc any wheel's platform tag asks for (2.17 when none asks)."""
    floor = (2, 17)
    for wheel in wheels:
        for tag in wheel.stem.split("-")[-1].split("."):
            match = re.match(r"manylinux_(\d+)_(\d+)_", tag)
            found = (int(match[1]), int(match[2])) if match else LEGACY_TAGS.get(
                tag.rsplit("_x86_64", 1)[0].rsplit("_aarch64", 1)[0])
            floor = max(floor, found) if found else floor
    return ".".join(map(str, floor))


def debian_release() -> str:
    """This machine's Debian codename (the release the .deb files are for), or ''."""
    try:
        text = Path("/etc/os-release").read_text()
    except OSError:
        return ""
    match = re.search(r"^VERSION_CODENAME=(\S+)", text, re.M)
    return match[1].strip('"') if match else ""


def file_table(stage: Path) -> dict[str, dict[str, Any]]:
    """Size and SHA-256 of every file under `stage` but the three unsigned ones."""
    table = {}
    for path in sorted(p for p in stage.rglob("*") if p.is_file()):
        name = path.relative_to(stage).as_posix()
        if name not in bundle_verify.UNSIGNED:
            table[name] = {"size": path.stat().st_size, "sha256": sha256_file(path)}
    return table


def manifest(stage: Path, facts: dict[str, Any]) -> dict[str, Any]:
    """The manifest: what the bundle is for, and every file in it."""
    wheels = sorted((stage / "wheels").glob("*.whl"))
    return {"format": bundle_verify.FORMAT, "version": bundle_verify.VERSION,
            "name": stage.name,
            "created": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "python": ".".join(map(str, sys.version_info[:2])),
            "machine": platform.machine(), "glibc_floor": glibc_floor(wheels),
            "debian": debian_release(), **facts, "files": file_table(stage)}


def seal(stage: Path, key: Ed25519PrivateKey, facts: dict[str, Any]) -> str:
    """Write requirements.txt, the manifest, its signature and the public key into `stage`;
    returns the key's fingerprint."""
    (stage / "requirements.txt").write_text(
        requirements_text(sorted((stage / "wheels").glob("*.whl"))))
    model = sorted((stage / "model").glob("*.whl"))
    if model:
        (stage / "model.txt").write_text(requirements_text(model))
    raw = (json.dumps(manifest(stage, facts), indent=1, sort_keys=True) + "\n").encode()
    (stage / bundle_verify.MANIFEST).write_bytes(raw)
    (stage / bundle_verify.SIGNATURE).write_text(key.sign(raw).hex() + "\n")
    (stage / bundle_verify.PUBLIC_KEY).write_text(public_bytes(key).hex() + "\n")
    return bundle_verify.fingerprint(public_bytes(key))


def archive(stage: Path, target: Path) -> Path:
    """The stage as one uncompressed tar (its wheels and .deb files are compressed already),
    written beside `target` and renamed into place."""
    partial = target.with_name(target.name + ".partial")
    with tarfile.open(partial, "w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(stage.rglob("*")):
            info = tar.gettarinfo(str(path), f"{stage.name}/{path.relative_to(stage).as_posix()}")
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            if path.is_file():
                with open(path, "rb") as handle:
                    tar.addfile(info, handle)
            else:
                tar.addfile(info)
    partial.rename(target)
    return target
