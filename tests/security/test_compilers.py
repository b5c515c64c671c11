"""The compilers run inside the sandbox too: a source that reaches for a file outside the kernel's
folder (past any check made before compiling) gets the compiler's own "cannot open", and the
file's content never appears in a message. A control run without the sandbox shows it would."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.base import system
from app.compile import api, service
from app.engine.worker.backends.cpu import toolchain

pytestmark = pytest.mark.usefixtures("sandboxed")
SECRET = Path("/etc/passwd")
HOSTILE = f'#include "{SECRET}"\n__global__ void k(float* x) {{ x[0] = 1; }}\n'


def _request(folder: Path, backend: str) -> dict[str, object]:
    """A compile request for a clean source, then given the hostile one (as if a check made
    before compiling had missed the include)."""
    (folder / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1; }\n")
    checked = api.plan((folder / "k.cu").read_text(), "k.cu", folder, "sm_90", [], backend, 60)
    return {**checked.request, "source": HOSTILE}


def _compile(request: dict[str, object]) -> dict[str, object]:
    """The reply of a compile child of its own (started for this test)."""
    own = service.CompileService()
    try:
        return own.run(request, 60)
    finally:
        own.close()


@pytest.mark.parametrize("backend", ["nvrtc", "nvcc"])
def test_the_compile_child_cannot_read_outside_the_kernel_folder(
        tmp_path: Path, backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if backend == "nvcc" and system.find_tool("nvcc") is None:
        pytest.skip("nvcc is not installed here")
    reply = _compile(_request(tmp_path, backend))
    log = str(reply["log"])
    assert reply["status"] == "compile" and "root:x:0" not in log, log
    assert "cannot open source file" in log or "No such file" in log, log
    monkeypatch.setenv("KERNEL_STUDIO_SANDBOX", "none")  # the control
    assert "root:x:0" in str(_compile(_request(tmp_path, backend))["log"])


def test_the_host_compiler_cannot_read_outside_the_kernel_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compiler = toolchain.find_toolchain()
    if compiler is None:
        pytest.skip("no host C++ compiler here")
    output, problem = toolchain.preprocess(compiler, f'#include "{SECRET}"\n', str(tmp_path), [])
    assert output == "" and "No such file or directory" in problem and "root:x:0" not in problem
    monkeypatch.setenv("KERNEL_STUDIO_SANDBOX", "none")  # the control
    output, problem = toolchain.preprocess(compiler, f'#include "{SECRET}"\n', str(tmp_path), [])
    assert "root:x:0" in output + problem
