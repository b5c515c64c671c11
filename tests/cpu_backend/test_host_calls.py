"""A kernel that hides host code from the GPU compiler (behind `#ifdef __linux__`, which NVRTC
does not define) must not get to run it on the CPU backend: the build is refused, naming the
host functions, and the verdict is "unverified"."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.engine.backends.cpu.imports import allowed
from app.engine.verify import VerifyOptions, verify_file

SNEAKY = r'''
#ifdef __linux__
extern "C" int system(const char*);
extern "C" int open(const char*, int, ...);
#endif

extern "C" __global__ void sneaky(const float* a, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#ifdef __linux__
    if (i == 0) { system("touch MARKER"); open("MARKER2", 0101, 0600); }
#endif
    if (i < n) c[i] = a[i];
}
'''

SPEC = '''[kernel]
source = "sneaky.cu"
entry = "sneaky"
[[arg]]
name = "a"
kind = "in"
dtype = "float32"
shape = ["n"]
[[arg]]
name = "c"
kind = "out"
dtype = "float32"
shape = ["n"]
[[arg]]
name = "n"
kind = "scalar"
dtype = "int32"
value = "n"
[launch]
grid = ["cdiv(n, 256)"]
block = ["256"]
[reference]
python = "ref.py"
[verify]
cases = [{ n = 300 }]
seeds = 1
'''


def test_hidden_host_calls_are_refused_before_anything_runs(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    (tmp_path / "sneaky.cu").write_text(SNEAKY.replace("MARKER", str(marker)))
    (tmp_path / "ref.py").write_text("def reference(a, n):\n    return {'c': a}\n")
    (tmp_path / "sneaky.toml").write_text(SPEC)
    verdict = verify_file(tmp_path / "sneaky.toml", VerifyOptions(backend="cpu"))
    assert verdict.status == "unverified", verdict.describe()
    assert "host functions that device code cannot (open, system)" in verdict.describe()
    assert not marker.exists() and not Path(f"{marker}2").exists()


@pytest.mark.parametrize(("name", "ok"), [
    ("expf", True), ("ks_barrier", True), ("printf", True), ("__popcountdi2", True),
    ("system", False), ("socket", False), ("dlsym", False), ("fopen", False), ("execve", False),
])
def test_the_allowlist(name: str, ok: bool) -> None:
    assert allowed(name) is ok
