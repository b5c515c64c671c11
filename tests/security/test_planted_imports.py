"""Code a sandboxed kernel plants for later processes: a CPU kernel's host code writes Python
that Python would import (app/__init__.py, sitecustomize.py, usercustomize.py, .pth files, a
user site folder under its HOME) into its working folder and the folder above it. Later
workers of the same Engine, an unsandboxed one (the selftest backend stands for the pycuda
and compute-sanitizer workers of a GPU machine) and another sandboxed cpu worker, must never
import any of it: a marker file that the planted code writes must not appear, and their
verdicts stay honest."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from selftest_spec import write_selftest_spec

from app.engine.verify.results import Status
from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.verifier import verify_file
from tests.security.payloads import COPY_KERNEL, TRAMPOLINE, c_string, kernel_spec

pytestmark = pytest.mark.usefixtures("cpu_payloads", "sandboxed")
TRAMPOLINE_GUARD = TRAMPOLINE.strip().splitlines()[0]
HOST_ONLY = "#if __has_include(<unistd.h>)"  # NVRTC has no system headers
REAL_APP = Path(__file__).resolve().parents[2] / "app"
RAN = "planted-import-ran"
SITE = f".local/lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
MODULES = ("app/__init__.py", "app/engine/__init__.py", "app/engine/worker/__init__.py",
           "sitecustomize.py", "usercustomize.py", f"{SITE}/sitecustomize.py",
           f"{SITE}/usercustomize.py")

# The constructor: make each folder, then write each file (openat relative to the working
# folder: O_WRONLY | O_CREAT | O_TRUNC), all through raw system calls.
PLANTER = r'''
KS_GUARD
__attribute__((constructor)) static void ks_payload()
{
    const char* folders[] = {FOLDERS};
    for (const char* folder : folders) ks_sys(83 /* mkdir */, (long)folder, 0755);
    const char* files[] = {FILES};
    const char* texts[] = {TEXTS};
    const long sizes[] = {SIZES};  // counted here: a loop would become strlen, an import
    for (unsigned i = 0; i < sizeof(files) / sizeof(files[0]); ++i) {
        long fd = ks_sys(257 /* openat */, -100, (long)files[i], 01101, 0644);
        if (fd >= 0) ks_sys(1 /* write */, fd, (long)texts[i], sizes[i]);
    }
}
#endif
'''


def _planted_python(marker: Path, package: bool) -> str:
    """What the planted modules do when imported: leave a mark wherever they can (the test's
    folder when unsandboxed, the working folder and HOME otherwise); a planted `app` package
    then lends itself the real one's modules, so that everything still works."""
    lines = ["import os",
             f"for target in ({str(marker)!r}, os.path.join(os.getcwd(), {RAN!r}),",
             f"               os.path.expanduser('~/{RAN}')):",
             "    try:",
             "        with open(target, 'a') as handle:",
             "            handle.write(__file__ + '\\n')",
             "    except OSError:",
             "        pass"]
    if package:
        lines.append(f"__path__.append({str(REAL_APP)!r})")
    return "\n".join(lines) + "\n"


def _plants(marker: Path) -> dict[str, str]:
    """Every file the kernel writes, in its working folder and in the one above it."""
    pth = f"import os; open({str(marker)!r}, 'a').write('pth\\n')\n"
    files = {name: _planted_python(marker, name == "app/__init__.py") for name in MODULES}
    files.update({"planted.pth": pth, f"{SITE}/planted.pth": pth})
    return {f"{prefix}{name}": text for prefix in ("", "../") for name, text in files.items()}


def _folders(files: dict[str, str]) -> list[str]:
    """The folders the files need, outer ones first."""
    needed = {str(parent) for name in files for parent in Path(name).parents
              if str(parent) not in (".", "..")}
    return sorted(needed, key=lambda folder: folder.count("/"))


def _planter_spec(folder: Path, marker: Path) -> Path:
    """A correct copy kernel whose host code plants the files when its library loads."""
    files = _plants(marker)
    spec = kernel_spec(folder, PLANTER,
                       FOLDERS=", ".join(map(c_string, _folders(files))),
                       FILES=", ".join(map(c_string, files)),
                       TEXTS=", ".join(map(c_string, files.values())),
                       SIZES=", ".join(str(len(text.encode())) for text in files.values()))
    # Host code only the host compiler sees (the trampoline's own guard included): a way in
    # for host code is a matter for the CPU backend; here it stands for any.
    kernel = folder / "k.cu"
    kernel.write_text(kernel.read_text().replace(TRAMPOLINE_GUARD, HOST_ONLY)
                      .replace("KS_GUARD", HOST_ONLY))
    return spec


def _found(folder: Path, name: str) -> list[Path]:
    """Files of that name anywhere under the folder."""
    return [path for path in folder.rglob(name) if path.is_file()]


def test_no_later_worker_imports_what_a_sandboxed_kernel_planted(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    planter = _planter_spec(tmp_path / "planter", marker)
    plain = write_selftest_spec(tmp_path / "plain", "copy_k", seeds=1)
    (tmp_path / "plain" / "k.cu").write_text(COPY_KERNEL)
    later = write_selftest_spec(tmp_path / "selftest", "copy", seeds=1)
    options = VerifyOptions(backend="cpu", random_seeds=0)
    with Engine() as engine:
        first = verify_file(planter, options, engine=engine)
        assert first.status == Status.PASSED, first.message  # contained, and copies right
        # The control: the kernel really planted its files where it could write.
        assert _found(engine.folder, "sitecustomize.py"), "the payload planted nothing"
        unsandboxed = verify_file(later, VerifyOptions(backend="selftest", random_seeds=0),
                                  engine=engine)
        sandboxed = verify_file(plain, options, engine=engine)  # a fresh cpu worker
        leftovers = _found(engine.folder, RAN)
    assert not marker.exists(), marker.read_text()
    assert leftovers == []
    assert unsandboxed.status == Status.PASSED, unsandboxed.message
    assert sandboxed.status == Status.PASSED, sandboxed.message


def test_a_sandboxed_kernel_cannot_write_beside_its_session_folder(tmp_path: Path) -> None:
    with Engine() as engine:
        verdict = verify_file(_planter_spec(tmp_path / "planter", tmp_path / "marker"),
                              VerifyOptions(backend="cpu", random_seeds=0), engine=engine)
        assert verdict.status == Status.PASSED, verdict.message
        beside = [path for path in engine.folder.iterdir() if path.is_file()
                  or path.name in ("app", ".local")]
    # The engine's own folder holds every backend's session folder: the kernel's "../" writes
    # must all have failed there.
    assert beside == []


def test_sandboxes_made_while_python_starts_on_other_threads(tmp_path: Path) -> None:
    """An eval's verification threads make sandboxes (each adds its writable folders to the
    set python_environment reads) while other threads start Python: no thread may fail, and
    every folder a sandbox could write stays off a later PYTHONPATH."""
    import threading

    from app.isolation import sandbox

    errors: list[BaseException] = []
    folders = [tmp_path / f"box-{i}" for i in range(8)]

    def make_boxes(folder: Path) -> None:
        try:
            for round_ in range(40):
                writable = folder / str(round_)
                writable.mkdir(parents=True)
                sandbox.Sandbox(writable=[writable]).command(["true"])
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    def start_python() -> None:
        try:
            for _ in range(150):
                sandbox.python_environment({"PYTHONPATH": str(folders[0])}, REAL_APP.parent)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=make_boxes, args=(f,)) for f in folders]
    threads += [threading.Thread(target=start_python) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    planted_in = str(folders[3] / "7")
    env = sandbox.python_environment({"PYTHONPATH": planted_in}, REAL_APP.parent)
    assert env["PYTHONPATH"].split(":") == [str(REAL_APP.parent)]
