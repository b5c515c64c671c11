"""A kernel that hides host code from the GPU compiler (behind `#if __has_include(<unistd.h>)`,
true only where there are system headers) must not get to run it on the CPU backend: the build
is refused, naming the host functions, and the verdict is "unverified". Behind a named host
macro (`#ifdef __linux__`) it is refused earlier, naming the macro."""

from __future__ import annotations

from pathlib import Path

import pytest
from selftest_spec import write_selftest_spec

from app.engine.verify.runs import VerifyOptions
from app.engine.verify.verifier import verify_file
from app.engine.worker.backends.cpu.imports import allowed

SNEAKY = r'''
#if GUARD
extern "C" int system(const char*);
extern "C" int open(const char*, int, ...);
#endif

extern "C" __global__ void sneaky(const float* a, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#if GUARD
    if (i == 0) { system("touch MARKER"); open("MARKER2", 0101, 0600); }
#endif
    if (i < n) c[i] = a[i];
}
'''

@pytest.mark.parametrize(("guard", "refusal"), [
    ("__has_include(<unistd.h>)", "host functions that device code cannot (open, system)"),
    ("defined(__linux__)", "predefined macro __linux__"),
])
def test_hidden_host_calls_are_refused_before_anything_runs(tmp_path: Path, guard: str,
                                                            refusal: str) -> None:
    marker = tmp_path / "marker"
    spec = write_selftest_spec(tmp_path / "kernel", "sneaky", seeds=1)
    spec.with_suffix(".cu").write_text(SNEAKY.replace("MARKER", str(marker))
                                       .replace("GUARD", guard))
    verdict = verify_file(spec, VerifyOptions(backend="cpu"))
    assert verdict.status == "unverified", verdict.describe()
    assert refusal in verdict.message, verdict.message
    assert not marker.exists() and not Path(f"{marker}2").exists()


@pytest.mark.parametrize(("name", "ok"), [
    ("expf", True), ("ks_barrier", True), ("printf", True), ("__popcountdi2", True),
    ("system", False), ("socket", False), ("dlsym", False), ("fopen", False), ("execve", False),
])
def test_the_allowlist(name: str, ok: bool) -> None:
    assert allowed(name) is ok


def _library(folder: Path, name: str, body: str) -> Path:
    """A shared library built by the host compiler from `body`."""
    import subprocess

    source = folder / f"{name}.cpp"
    source.write_text(body)
    library = folder / f"{name}.so"
    subprocess.run(["g++", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    return library


def test_a_library_that_passed_is_checked_again_once_its_content_changes(tmp_path: Path) -> None:
    # The check remembers the contents it passed (a cached kernel is checked at each load);
    # the same path with other bytes must be read again.
    from app.engine.worker.backends.base import BackendError
    from app.engine.worker.backends.cpu.imports import check_imports

    clean = _library(tmp_path, "clean", 'extern "C" int f() { return 1; }\n')
    sneaky = _library(tmp_path, "sneaky", 'extern "C" int system(const char*);\n'
                                          'extern "C" int f() { return system("x"); }\n')
    check_imports(clean)
    check_imports(clean)
    clean.write_bytes(sneaky.read_bytes())
    with pytest.raises(BackendError, match=r"host functions that device code cannot \(system\)"):
        check_imports(clean)
