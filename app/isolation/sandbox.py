"""A sandbox for code that came with a spec: Linux namespaces through bubblewrap (bwrap) and
resource limits through prlimit, both well-kept tools, nothing home-made.

A sandboxed process gets new user, pid, network, ipc, uts and cgroup namespaces (so no network
at all and no view of other processes), a new session, no capabilities, and it is killed when
the process that started it dies. Its file system is built from nothing: read-only binds of
the toolchain (/usr, the /lib links, the dynamic linker's configuration) and of the folders
the caller names, a private /tmp and /dev/shm of bounded size, /proc, a minimal /dev, and the
writable folders the caller names, which are the only places it can change. Limits on the
address space or data size, CPU seconds, file size, open files and processes come from
prlimit, applied inside the namespaces (where the process count is the sandbox's own).

`available()` says whether this works here, and why not; `Sandbox(...).command(argv)` is the
command line that runs `argv` inside one. Callers decide what runs where no sandbox can be had
(app.isolation.trust).
"""

from __future__ import annotations

import functools
import io
import os
import resource
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.base import settings

# Set inside every sandbox. bwrap cannot make a sandbox inside another here, so code that
# would wrap a command in one runs it directly instead: it is contained already.
INSIDE_VARIABLE = "KERNEL_STUDIO_IN_SANDBOX"
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
                "/etc/localtime")
# Variables a sandboxed program may see; everything else (tokens, proxies, ...) stays out.
PASSED_VARIABLES = ("PATH", "LANG", "LANGUAGE", "TZ", "PYTHONPATH", "PYTHONHASHSEED",
                    "PYTHONDONTWRITEBYTECODE", "PYTHONSAFEPATH", "CUDA_HOME", "CUDA_PATH",
                    "LD_LIBRARY_PATH")
PASSED_PREFIXES = ("LC_", "KERNEL_STUDIO_", "OMP_", "OPENBLAS_", "MKL_", "NVIDIA_")
PROBE_TIMEOUT = 20.0
LIMIT_WORDS = "memory, CPU seconds, file size, open files and processes"
# Ways to make the namespaces, tried in order: a user namespace whose processes cannot make
# another (bubblewrap 0.8 and later), a user namespace, and none (bwrap then needs privileges).
COMMON_FLAGS = ("--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
                "--hostname", "kernel-studio-sandbox")
NAMESPACE_FLAGS = ((*COMMON_FLAGS, "--unshare-user", "--disable-userns"),
                   (*COMMON_FLAGS, "--unshare-user"), COMMON_FLAGS)
MIB = 1 << 20
GIB = 1 << 30
# Every folder handed to a sandbox as writable in this process: no Python we start may import
# from one (python_environment), whatever PYTHONPATH says. Verification threads (an eval's
# pool) make sandboxes while others start Python: the lock keeps a reader from seeing the set
# change under it (which failed whole verifications with "Set changed size during iteration").
_WRITABLE: set[Path] = set()
_WRITABLE_LOCK = threading.Lock()


@dataclass(frozen=True)
class Limits:
    """Resource limits of a sandboxed process (None: leave the limit as it is)."""

    address_space: int | None = None  # bytes of virtual memory (RLIMIT_AS)
    data: int | None = None  # bytes of writable private memory (RLIMIT_DATA)
    cpu_seconds: int | None = None
    file_size: int | None = None  # bytes, for any one file it writes
    open_files: int | None = 1024
    processes: int | None = 512  # threads count too

    def prlimit_options(self) -> list[str]:
        """prlimit's options for these limits, never above the hard limits this process has
        (a process without privileges cannot raise them, and prlimit would fail)."""
        wanted = [("as", resource.RLIMIT_AS, self.address_space),
                  ("data", resource.RLIMIT_DATA, self.data),
                  ("cpu", resource.RLIMIT_CPU, self.cpu_seconds),
                  ("fsize", resource.RLIMIT_FSIZE, self.file_size),
                  ("nofile", resource.RLIMIT_NOFILE, self.open_files),
                  ("nproc", resource.RLIMIT_NPROC, self.processes)]
        options = ["--core=0"]
        for name, which, value in wanted:
            if value is not None:
                hard = resource.getrlimit(which)[1]
                value = value if hard == resource.RLIM_INFINITY else min(value, hard)
                options.append(f"--{name}={value}:{value}")
        return options

    def describe(self) -> str:
        """The limits in words, for the doctor."""
        parts = [("address space", self.address_space, GIB, "GiB"),
                 ("data", self.data, GIB, "GiB"), ("CPU", self.cpu_seconds, 1, "s"),
                 ("file size", self.file_size, GIB, "GiB"), ("open files", self.open_files, 1, ""),
                 ("processes", self.processes, 1, "")]
        return ", ".join(f"{name} {value / unit:g}{(' ' + word) if word else ''}"
                         for name, value, unit, word in parts if value is not None)


def memory_share(fraction: float = 0.75) -> int:
    """A share of this machine's physical memory, in bytes (at least 2 GiB)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        total = 8 * GIB
    return max(2 * GIB, int(total * fraction))


@dataclass(frozen=True)
class Isolation:
    """What the probe found: whether sandboxes work here, how, and why not."""

    ok: bool
    reason: str
    bwrap: str = ""
    version: str = ""
    flags: tuple[str, ...] = ()
    prlimit: str = ""

    @property
    def user_namespace(self) -> bool:
        """Whether sandboxes get a user namespace of their own."""
        return "--unshare-user" in self.flags

    def describe(self) -> str:
        """One line for the doctor."""
        if not self.ok:
            return f"none: {self.reason}"
        user = "user, " if self.user_namespace else ""
        return (f"{self.version} ({self.bwrap}): namespaces {user}pid, net, ipc, uts; "
                f"rlimits through {self.prlimit}")


def inside() -> bool:
    """Whether this process runs inside a Kernel Studio sandbox."""
    return os.environ.get(INSIDE_VARIABLE) == "1"


def create_shared(path: Path) -> io.BufferedWriter:
    """A new file in a folder a sandboxed process may write too. Whatever it left under that
    name (a link to one of your files, a FIFO) is removed first, and the file is created
    afresh, never through a link."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    return os.fdopen(fd, "wb")


def write_shared(path: Path, data: Any) -> None:
    """`data` (bytes, an array, or a tuple of such parts written one after another) as the
    whole content of a file in a folder a sandboxed process may write too: written over in
    place when a plain file with no other link is there (its pages are reused: a warm verify
    writes its buffer files this way), else into a new file made by create_shared."""
    fd = _open_plain(path)
    parts = data if isinstance(data, tuple) else (data,)
    with os.fdopen(fd, "wb") if fd is not None else create_shared(path) as handle:
        for part in parts:
            if hasattr(part, "tofile"):
                part.tofile(handle)
            else:
                handle.write(part)
        handle.truncate()


def _open_plain(path: Path) -> int | None:
    """A file opened for writing, never through a link, when it is a plain file no other name
    links to (a hard link made by a sandboxed process could lead elsewhere); else None."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    status = os.fstat(fd)
    if stat.S_ISREG(status.st_mode) and status.st_nlink == 1:
        return fd
    os.close(fd)
    return None


def open_shared(path: Path) -> io.BufferedReader:
    """A file a sandboxed process may have replaced, opened for reading: OSError unless it is
    a plain file (not a link, FIFO or device, which could hang or mislead the reader)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    handle = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        handle.close()
        raise OSError(f"{path.name} is not a plain file; its content is not used")
    return handle


def read_shared(path: Path, size: int) -> bytearray:
    """The `size` bytes of a file a sandboxed process wrote: OSError unless it is a plain file
    of exactly that size."""
    with open_shared(path) as handle:
        if os.fstat(handle.fileno()).st_size != size:
            raise OSError(f"{path.name} was replaced while the sandboxed process ran (expected "
                          f"{size} bytes); its content is not used")
        data = bytearray(size)
        if handle.readinto(data) != size:
            raise OSError(f"{path.name} changed while it was read")
    return data


def python_command(*arguments: str) -> list[str]:
    """This interpreter with `arguments`, never reading code from its working folder: -P keeps
    the working folder (for -m and -c) and a script's folder off sys.path, where `python -m`
    would put it first (a planted app/__init__.py there would be imported instead of ours)."""
    return [sys.executable, "-P", *arguments]


def python_environment(env: Mapping[str, str], root: Path) -> dict[str, str]:
    """`env` for a Python we start: PYTHONPATH is `root` (the folder holding the app package)
    and then only those entries of the caller's PYTHONPATH that are absolute and lie in no
    folder a sandbox may write (an empty or relative entry means the working folder);
    PYTHONSAFEPATH=1, so any Python started below keeps its working folder off sys.path too."""
    kept = [str(root)]
    for entry in env.get("PYTHONPATH", "").split(os.pathsep):
        if entry and os.path.isabs(entry) and not _in_writable(Path(entry)) \
                and entry not in kept:
            kept.append(entry)
    return {**env, "PYTHONPATH": os.pathsep.join(kept), "PYTHONSAFEPATH": "1"}


def _in_writable(path: Path) -> bool:
    """Whether a path lies in a folder some sandbox of this process may write, or in
    /dev/shm (where the sandboxes' session and scratch folders live)."""
    with _WRITABLE_LOCK:
        _WRITABLE.difference_update([f for f in _WRITABLE if not f.exists()])  # removed since
        known = list(_WRITABLE)
    real = Path(os.path.realpath(path))
    folders = [Path("/dev/shm"), *(Path(os.path.realpath(f)) for f in known)]
    return any(real == folder or real.is_relative_to(folder) for folder in folders)


def private_folder(prefix: str) -> Path:
    """A new empty folder only this user can use (mode 0700), in the temporary directory and
    never inside a sandbox's writable folder: a working folder, or a home for logs that a
    process outside the sandbox writes and reads."""
    return Path(tempfile.mkdtemp(prefix=prefix))


def read_log(path: Path, limit: int = 16 * MIB) -> str:
    """The text of a log another program wrote into a private folder, read without following
    a link and at most `limit` bytes ('' when there is none)."""
    try:
        with open_shared(path) as handle:
            return handle.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""


def exit_status(returncode: int) -> int:
    """A sandboxed program's exit status as Popen reports it for a program run directly:
    bubblewrap exits with 128 + N when its program was killed by signal N."""
    return -(returncode - 128) if 128 < returncode < 128 + 65 else returncode


def _bwrap_path(named: str | None) -> str | None:
    """The bubblewrap program: the one KERNEL_STUDIO_BWRAP names, else bwrap on the PATH."""
    if named:
        return named if os.access(named, os.X_OK) else None
    return shutil.which("bwrap")


def _version(bwrap: str) -> str:
    """`bwrap --version`'s line."""
    try:
        done = subprocess.run([bwrap, "--version"], capture_output=True, text=True,
                              timeout=PROBE_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "bubblewrap (version unknown)"
    return done.stdout.strip() or "bubblewrap (version unknown)"


def _try(bwrap: str, prlimit: str, flags: tuple[str, ...]) -> str:
    """Run `true` in a sandbox made with these namespace flags: '' when it worked, else
    bwrap's complaint."""
    box = Sandbox(limits=Limits(address_space=GIB, cpu_seconds=10))
    true = shutil.which("true") or "/bin/true"
    command = box.command([true], _mode=(bwrap, prlimit, flags))
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PROBE_TIMEOUT,
                              check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    return "" if done.returncode == 0 else (done.stderr.strip() or f"exit {done.returncode}")


def probe() -> Isolation:
    """Find out whether and how sandboxes can be made here (once per setting and process)."""
    return _probe(settings.text(settings.SANDBOX), settings.BWRAP.get(), inside())


@functools.cache
def _probe(setting: str | None, bwrap_setting: str | None, nested: bool) -> Isolation:
    """probe() for these settings. A new user namespace is tried first; where that is refused
    (some hosts forbid them, even to root), the other namespaces alone are tried, which needs
    bwrap to run with privileges."""
    if setting == "none":
        return Isolation(False, "turned off by KERNEL_STUDIO_SANDBOX=none")
    if nested:
        return Isolation(False, "already inside a sandbox, which contains whatever runs here")
    if not sys.platform.startswith("linux"):
        return Isolation(False, f"sandboxes need Linux namespaces; this is {sys.platform}")
    bwrap, prlimit = _bwrap_path(bwrap_setting), shutil.which("prlimit")
    if bwrap is None:
        return Isolation(False, "bubblewrap is not installed (Debian and Ubuntu: apt-get "
                         "install bubblewrap; or set KERNEL_STUDIO_BWRAP to its path)")
    if prlimit is None:
        return Isolation(False, "prlimit (util-linux) is not installed")
    complaints = []
    for flags in NAMESPACE_FLAGS:
        complaint = _try(bwrap, prlimit, flags)
        if not complaint:
            return Isolation(True, "", bwrap, _version(bwrap), flags, prlimit)
        complaints.append(complaint)
    return Isolation(False, f"bubblewrap cannot make namespaces here ({complaints[0]})", bwrap)


def available() -> tuple[bool, str]:
    """(True, '') when sandboxes work here, else (False, why not)."""
    found = probe()
    return found.ok, found.reason


def _existing(paths: Iterable[Path | str]) -> list[Path]:
    """Absolute paths that exist, without duplicates, in order."""
    seen: dict[str, Path] = {}
    for path in paths:
        absolute = Path(os.path.abspath(path))
        if absolute.exists() and str(absolute) not in seen:
            seen[str(absolute)] = absolute
    return list(seen.values())


def python_paths() -> list[Path]:
    """What a Python process of this installation needs to read: the interpreter's
    installation, the virtual environment, the package folders on sys.path and PYTHONPATH,
    and the `app` package itself (never the rest of a checkout)."""
    app_package = Path(__file__).resolve().parents[1]
    checkout = app_package.parent
    entries = [Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable).resolve().parent,
               app_package]
    python_path = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    for entry in [*sys.path, *python_path]:
        if entry and Path(entry).is_dir() and Path(entry).resolve() != checkout:
            if "site-packages" in entry or "dist-packages" in entry or entry in python_path:
                entries.append(Path(entry))
    return _existing(entries)


def toolchain_paths() -> list[Path]:
    """CUDA outside /usr (CUDA_HOME, /opt/cuda), when there is one."""
    candidates = [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""), "/opt/cuda"]
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(str(Path(nvcc).resolve().parent.parent))
    return [p for p in _existing(c for c in candidates if c) if not str(p).startswith("/usr/")]


def _system_mounts() -> list[str]:
    """/usr read-only, the /bin and /lib entries as the host has them, the linker's files."""
    args = ["--ro-bind", "/usr", "/usr"]
    for entry in SYSTEM_LINKS:
        if os.path.islink(entry):
            args += ["--symlink", os.readlink(entry), entry]
        elif os.path.isdir(entry):
            args += ["--ro-bind", entry, entry]
    for entry in SYSTEM_FILES:
        args += ["--ro-bind-try", entry, entry]
    return args


SANDBOX_USER = "sandbox"


def _environment(home: str, env: Mapping[str, str]) -> list[str]:
    """--clearenv, then the variables of `env` a sandboxed program may see."""
    args = ["--clearenv"]
    for name, value in env.items():
        if name in PASSED_VARIABLES or name.startswith(PASSED_PREFIXES):
            args += ["--setenv", name, value]
    # A user name without the password database: inside, uid 0 (or yours) may have no entry,
    # and getpass.getuser() (torch's dynamo config calls it on import) then raises.
    return args + ["--setenv", "HOME", home, "--setenv", "TMPDIR", "/tmp",
                   "--setenv", "USER", SANDBOX_USER, "--setenv", "LOGNAME", SANDBOX_USER,
                   "--setenv", INSIDE_VARIABLE, "1"]


@dataclass(frozen=True)
class Sandbox:
    """A sandbox that sees the system's toolchain plus `read_only`, and may write only in
    `writable` (and its private /tmp and /dev/shm)."""

    read_only: Sequence[Path | str] = ()
    writable: Sequence[Path | str] = ()
    limits: Limits = field(default_factory=Limits)
    cwd: Path | str | None = None
    tmp_bytes: int = 1 * GIB
    shm_bytes: int = 64 * MIB
    # The environment to pass on, filtered (default: this process's).
    env: Mapping[str, str] | None = None
    # Device nodes the program may open (a GPU's /dev/nvidia*), bound as they are on the host.
    devices: Sequence[str] = ()

    def command(self, argv: Sequence[str],
                _mode: tuple[str, str, tuple[str, ...]] | None = None) -> list[str]:
        """The command line that runs `argv` inside this sandbox (call only when available()
        says yes; `_mode` is the probe's own way in)."""
        if _mode is None:
            found = probe()
            if not found.ok:
                raise RuntimeError(f"no sandbox can be made here: {found.reason}")
            _mode = (found.bwrap, found.prlimit, found.flags)
        bwrap, prlimit, flags = _mode
        writable = _existing(self.writable)
        with _WRITABLE_LOCK:
            _WRITABLE.update(writable)
        # HOME is the private /tmp, made afresh for each sandbox: nothing one sandboxed process
        # leaves in a writable folder (a ~/.local site folder, dotfiles) is read by the next.
        home = "/tmp"
        cwd = os.path.abspath(self.cwd) if self.cwd else str(writable[0]) if writable else home
        return [bwrap, *flags, *_system_mounts(),
                *self._private_mounts(), *self._binds(writable), "--remount-ro", "/",
                *_environment(home, os.environ if self.env is None else self.env),
                "--chdir", cwd, "--",
                prlimit, *self.limits.prlimit_options(), "--", *argv]

    def _private_mounts(self) -> list[str]:
        """/proc, a minimal read-only /dev (with the devices asked for) and a bounded /dev/shm,
        a bounded /tmp."""
        devices = [arg for device in self.devices for arg in ("--dev-bind-try", device, device)]
        return ["--proc", "/proc", "--dev", "/dev", *devices,
                "--size", str(self.shm_bytes), "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
                "--size", str(self.tmp_bytes), "--tmpfs", "/tmp"]

    def _binds(self, writable: list[Path]) -> list[str]:
        """Read-only and writable binds, outer folders first so that a folder inside another
        keeps its own kind."""
        kinds = {str(p): "--ro-bind" for p in _existing([*self.read_only, *toolchain_paths()])}
        kinds.update({str(p): "--bind" for p in writable})
        args: list[str] = []
        for path in sorted(kinds, key=lambda p: (p.count("/"), p)):
            args += [kinds[path], path, path]
        return args
