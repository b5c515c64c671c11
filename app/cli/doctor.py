"""`kernel-studio doctor`: what this machine offers Kernel Studio, and what follows from it."""

from __future__ import annotations

import importlib
import os
import platform
import sys
from dataclasses import asdict, dataclass

from app.base import paths, settings, system
from app.engine.worker import backends
from app.isolation import offline, sandbox, trust


@dataclass(frozen=True)
class Check:
    """One line of the doctor's table. `essential` checks decide whether the app can run."""

    name: str
    value: str
    ok: bool
    note: str = ""
    essential: bool = False


def _python() -> Check:
    """The interpreter (3.11 or newer)."""
    version = platform.python_version()
    ok = sys.version_info >= (3, 11)
    return Check("python", f"{version} ({sys.executable})", ok,
                 "" if ok else "Kernel Studio needs Python 3.11 or newer", essential=True)


def _package(name: str, distribution: str, note: str, essential: bool = False) -> Check:
    """An installed distribution and its version."""
    version = system.package_version(distribution)
    return Check(name, version or "not installed", version is not None,
                 "" if version else note, essential)


def _nvrtc() -> Check:
    """NVRTC, the in-process compiler, from the nvidia-cuda-nvrtc wheel."""
    try:
        from cuda.bindings import nvrtc
    except ImportError:
        return Check("nvrtc", "not installed", False,
                     "compiling needs cuda-python and nvidia-cuda-nvrtc: run `make run`", True)
    try:
        _, major, minor = nvrtc.nvrtcVersion()
    except Exception as error:  # the library is missing or broken: say so, never crash
        return Check("nvrtc", "unusable", False, f"libnvrtc could not load: {error}", True)
    return Check("nvrtc", f"{major}.{minor}", True, essential=True)


def _nvcc() -> Check:
    """nvcc, the optional second compiler backend."""
    path = system.find_tool("nvcc")
    version = system.nvcc_version()
    if not path:
        return Check("nvcc", "not found", True, "optional: NVRTC compiles without it")
    return Check("nvcc", f"{version or '?'} ({path})", True)


def _gpus() -> list[Check]:
    """One line per GPU, or one line saying there is none and what verify does about it."""
    gpus = system.list_gpus()
    if not gpus:
        if system.importable("app.engine.worker.backends.cpu"):
            note = "no GPU: verify uses the CPU emulator"
        else:
            note = "no GPU: verify needs the CPU emulator, which is not available yet"
        return [Check("gpu", "none", True, note)]
    return [Check(f"gpu {g.index}", f"{g.name}, compute {g.compute_capability} ({g.arch}), "
                  f"driver {g.driver}, {g.memory_mib} MiB", True) for g in gpus]


def _pycuda(has_gpu: bool) -> Check:
    """pycuda, the GPU backend of the worker: installed, and on a GPU machine loaded (its
    extension needs the driver's libcuda, which only a GPU machine has)."""
    if not system.importable("pycuda"):
        note = ("install the gpu extra: pip install -e '.[gpu]'" if has_gpu
                else "needed only on GPU machines")
        return Check("pycuda", "not installed", not has_gpu, note)
    if not has_gpu:
        return Check("pycuda", "installed", True, "no GPU here to load it against")
    try:
        importlib.import_module("pycuda.driver")
    except ImportError as error:
        return Check("pycuda", "installed but does not load", False, str(error))
    return Check("pycuda", "loads", True)


def system_package_hint(packages: str) -> str:
    """How to get Debian packages here: from the bundle this app was installed from, if any."""
    record = paths.install_record()
    if record is not None:
        return (f"install {packages} from the bundle: as root, bash {record / 'install.sh'} "
                "BUNDLE --system-only (BUNDLE: the archive this app came from), or apt-get "
                f"install {packages}")
    return f"install {packages} (Debian: apt-get install {packages}, or make run)"


def _backend(has_gpu: bool, sandboxed: bool, trust_ok: bool) -> Check:
    """Whether some backend can verify a kernel here: a GPU with pycuda, or the CPU emulator
    with a host C++ compiler and a way to run the reference (the sandbox, or trusted specs)."""
    name, reason = backends.choose("auto")
    if name == "pycuda":
        return Check("backend", "pycuda (GPU)", True, essential=True)
    if name == "cpu" and (sandboxed or trust_ok):
        route = "" if sandboxed else "only specs you trusted (no sandbox)"
        return Check("backend", "cpu (emulator)", True, route, essential=True)
    if name == "cpu":
        return Check("backend", "none", False, "no sandbox and the trust store is unreadable; "
                     + system_package_hint("bubblewrap"), essential=True)
    hints = [system_package_hint("g++")]
    if has_gpu:
        hints.append("or install pycuda (the GPU bundle, or pip install '.[gpu]')")
    return Check("backend", "none", False, f"{reason}; " + " ".join(hints), essential=True)


def _tool(name: str, purpose: str) -> Check:
    """An optional CUDA tool such as compute-sanitizer or ncu."""
    path = system.find_tool(name)
    return Check(name, path or "not found", True, "" if path else f"optional: {purpose}")


def _model() -> Check:
    """The default model folder and its state."""
    folder = paths.models_dir() / "smollm2-135m-instruct"
    if (folder / "manifest.json").is_file():
        return Check("model", f"ready ({folder})", True)
    how = "`make model`" if paths.is_checkout() else "`kernel-studio model prepare-default`"
    return Check("model", f"not prepared ({folder})", True,
                 f"the assistant needs a model: {how} prepares the default one")


def _offline() -> Check:
    """Offline status: no proxies configured, Hugging Face offline variables set."""
    proxies = offline.proxy_settings()
    unset = offline.missing_offline_env()
    problems = ([f"proxy variables set: {', '.join(proxies)}"] if proxies else []) + (
        [f"not set: {', '.join(unset)}"] if unset else [])
    guard = "network guard on" if offline.network_guard_installed() else "network guard off"
    value = f"offline ({guard})" if not problems else "; ".join(problems)
    return Check("offline", value, not problems,
                 "" if not problems else "Kernel Studio never uses the network; unset these")


def _isolation() -> Check:
    """Which sandbox runs code from specs, or why there is none and what follows."""
    found = sandbox.probe()
    if found.ok:
        nproc = " (the process limit does not bind root)" if os.geteuid() == 0 else ""
        return Check("sandbox", found.describe(), True,
                     "kernels, references and compilers run inside it: no network, writes "
                     f"only in a scratch folder, limits on {sandbox.LIMIT_WORDS}{nproc}")
    return Check("sandbox", f"none: {found.reason}", False,
                 "only specs you trusted (`kernel-studio trust SPEC`) run here; others are "
                 "'unverified'; " + system_package_hint("bubblewrap"))


def _trusted() -> Check:
    """How many specs are trusted, and where that is kept."""
    try:
        count = len(trust.load_store())
    except trust.TrustError as error:
        return Check("trust", "unreadable", False, str(error))
    return Check("trust", f"{count} spec{'s' if count != 1 else ''} trusted "
                 f"({trust.store_path()})", True)


def run_checks() -> list[Check]:
    """Every check, in the order the table shows them."""
    gpus = _gpus()
    has_gpu = gpus[0].value != "none"
    isolation, trusted = _isolation(), _trusted()
    return [
        _python(),
        _package("qt", "PySide6-Essentials", "the GUI needs PySide6-Essentials 6.11"),
        _package("scintilla", "pyside6-scintilla", "the editor needs pyside6-scintilla"),
        _package("lexilla", "lexilla", "syntax highlighting needs lexilla"),
        _package("numpy", "numpy", "the core needs numpy", essential=True),
        _nvrtc(),
        _nvcc(),
        *gpus,
        _pycuda(has_gpu),
        _tool("compute-sanitizer", "needed for --sanitize; without it such runs are 'unverified'"),
        _tool("ncu", "Nsight Compute, for cross-checking timings"),
        _model(),
        _offline(),
        isolation,
        trusted,
        _backend(has_gpu, isolation.ok, trusted.ok),
    ]


def can_run(checks: list[Check]) -> bool:
    """The app can run when every essential check passed."""
    return all(c.ok for c in checks if c.essential)


def missing(checks: list[Check]) -> list[str]:
    """Names of failed checks, essential or not."""
    return [c.name for c in checks if not c.ok]


def as_json(checks: list[Check]) -> dict[str, object]:
    """The report as a JSON-ready dictionary."""
    return {"checks": [asdict(c) for c in checks], "can_run": can_run(checks),
            "missing": missing(checks)}


def settings_json() -> list[dict[str, str]]:
    """Every setting of the table (app.base.settings): its value here, where that came from
    (the default or its environment variable), and what is wrong with a bad value."""
    return [asdict(settings.effective(entry)) for entry in settings.TABLE]


def settings_text() -> list[str]:
    """The settings as lines for people: name, value, origin; '!!' and why, for a bad one."""
    found = [settings.effective(entry) for entry in settings.TABLE]
    width = max(len(f.name) for f in found)
    lines = []
    for f in found:
        mark = "!! " if f.problem else "   "
        lines.append(f"{mark}{f.name:<{width}}  {f.value or '-'}  ({f.origin})")
        if f.problem:
            lines.append(f"   {'':<{width}}  {f.problem}")
    return lines


def as_text(checks: list[Check]) -> str:
    """The report as a table for people: the checks, the settings, then the verdict."""
    width = max(len(c.name) for c in checks)
    lines = ["Kernel Studio doctor", ""]
    for c in checks:
        mark = "ok " if c.ok else "!! "
        lines.append(f"{mark}{c.name:<{width}}  {c.value}" + (f"  ({c.note})" if c.note else ""))
    lines += ["", "settings (kernel-studio doctor --settings --json for machines):",
              *settings_text(), ""]
    absent = missing(checks)
    if can_run(checks):
        lines.append("ready" + (f"; missing or limited: {', '.join(absent)}" if absent else ""))
    else:
        lines.append(f"cannot run: missing {', '.join(absent)}")
    return "\n".join(lines)
