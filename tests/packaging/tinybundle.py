"""Small signed bundles for the installer's tests: two tiny wheels written here, sealed by the
real builder (packaging/bundle_build.py --seal) with a key made for the test."""

from __future__ import annotations

import base64
import ensurepip
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"
INSTALLER = PACKAGING / "install.sh"


def load(name: str) -> ModuleType:
    """A module of packaging/ by file (the folder is not a package: `packaging` is PyPI's)."""
    spec = importlib.util.spec_from_file_location(name, PACKAGING / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _record_line(name: str, data: bytes) -> str:
    """One RECORD line: path, urlsafe base64 SHA-256 without padding, size."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def make_wheel(folder: Path, name: str, version: str, requires: str = "") -> Path:
    """A minimal pure-Python wheel whose module `name` holds VERSION."""
    info = f"{name}-{version}.dist-info"
    files = {f"{name}/__init__.py": f"VERSION = {version!r}\n".encode(),
             f"{info}/METADATA": (f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                                  + (f"Requires-Dist: {requires}\n" if requires else "")).encode(),
             f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                              b"Tag: py3-none-any\n"}
    record = [_record_line(k, v) for k, v in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in files.items():
            archive.writestr(member, data)
    return path


def pip_wheel() -> Path:
    """The pip wheel this Python's ensurepip carries (the installer runs pip from a wheel)."""
    bundled = Path(ensurepip.__file__).parent / "_bundled"
    found = sorted(bundled.glob("pip-*.whl")) or sorted(Path("/usr/share/python-wheels").glob(
        "pip-*.whl"))
    assert found, "no pip wheel beside ensurepip"
    return found[-1]


def stage(folder: Path, version: str = "1.0") -> Path:
    """A bundle folder before sealing: ks_tiny_a (needing ks_tiny_b), ks_tiny_b, and pip."""
    make_wheel(folder / "wheels", "ks_tiny_a", version, "ks_tiny_b==1.0")
    make_wheel(folder / "wheels", "ks_tiny_b", "1.0")
    (folder / "tools").mkdir()
    shutil.copy2(pip_wheel(), folder / "tools")
    return folder


def seal(stage_folder: Path, out: Path, key: Path) -> tuple[Path, str]:
    """Seal and archive with the real builder; the archive and the key's fingerprint."""
    result = subprocess.run([sys.executable, str(PACKAGING / "bundle_build.py"), "--seal",
                             str(stage_folder), "--out", str(out), "--key", str(key)],
                            capture_output=True, text=True, check=True)
    lines = result.stdout.splitlines()
    fingerprint = lines[lines.index(next(x for x in lines if "fingerprint:" in x)) + 1].strip()
    return out / f"{stage_folder.name}.tar", fingerprint


def install(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    """Run the real installer with a fresh home, this Python, and no pip settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "XDG_"))}
    env.update(HOME=str(home), PYTHON=sys.executable)
    return subprocess.run(["bash", str(INSTALLER), *args], capture_output=True, text=True,
                          env=env, stdin=subprocess.DEVNULL, timeout=300)


def copy_bundle(source: Path, target: Path) -> Path:
    """A copy of an unpacked bundle folder, to tamper with."""
    shutil.copytree(source, target)
    return target
