"""A kernel sees NVRTC's predefined macros on the CPU backend too (issue 23, item 3): the CUDA
ones carry the installed NVRTC's values, and a host compiler's macro (which NVRTC does not
define, or defines otherwise) is refused by name rather than taking another #if branch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.cpu_backend.harness import CpuWorker, LaunchFailed


def test_cuda_macros_carry_nvrtcs_values(cpu: CpuWorker) -> None:
    nvrtc = pytest.importorskip("cuda.bindings.nvrtc")
    _, major, minor = nvrtc.nvrtcVersion()
    out = cpu.run("macros.cu", "version", (1,), (1,), [np.zeros(3, np.int32)])[0]
    assert out.tolist() == [major * 100 + minor, 900, 0]


@pytest.mark.parametrize("name", ["__GNUC__", "__x86_64__", "__linux__", "__SIZEOF_INT128__",
                                  "__clang__", "__OPTIMIZE__"])
def test_host_compiler_macros_are_refused_by_name(cpu: CpuWorker, tmp_path: Path,
                                                  name: str) -> None:
    kernel = tmp_path / "host_macro.cu"
    kernel.write_text("// " + name + " in a comment does not count\n"
                      'extern "C" __global__ void k(int* out) {\n'
                      f"#if defined({name})\n    out[0] = 1;\n#else\n    out[0] = 2;\n#endif\n}}\n")
    if name == "__clang__":  # gcc does not define it: then it is NVRTC's answer, undefined
        assert cpu.run(kernel, "k", (1,), (1,), [np.zeros(1, np.int32)])[0].tolist() == [2]
        return
    with pytest.raises(LaunchFailed) as failure:
        cpu.load(kernel, "k")
    assert failure.value.kind == "unsupported"
    assert f"predefined macro {name}" in str(failure.value)
    assert f"{kernel}:3" in str(failure.value)

