"""The CPU backend's build cache: a warm load builds nothing, and editing a header that the
kernel includes rebuilds it."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from app.engine.worker.backends.cpu import toolchain
from tests.cpu_backend.harness import CpuWorker

KERNEL = """#include "scale.cuh"
extern "C" __global__ void scaled(float* out)
{
    out[threadIdx.x] = SCALE * threadIdx.x;
}
"""


def _libraries() -> dict[str, int]:
    """Kernel libraries in the cache, with their modification times."""
    folder = toolchain.cache_folder()
    return {p.name: p.stat().st_mtime_ns for p in folder.glob("kernel-*.so")}


def test_warm_loads_reuse_the_library_and_header_edits_rebuild_it(cpu: CpuWorker,
                                                                 tmp_path: Path) -> None:
    # The worker was started with the session's private cache, the same one this test reads.
    assert os.environ["KERNEL_STUDIO_CACHE"] in str(toolchain.cache_folder())
    (tmp_path / "scale.cuh").write_text("#define SCALE 2.0f\n")
    source = tmp_path / "scaled.cu"
    source.write_text(KERNEL)
    cpu.load(source, "scaled")
    first = _libraries()
    cpu.load(source, "scaled")
    assert _libraries() == first  # nothing rebuilt, nothing rewritten
    assert (cpu.run(source, "scaled", (1,), (8,), [np.zeros(8, np.float32)])[0]
            == 2.0 * np.arange(8)).all()
    (tmp_path / "scale.cuh").write_text("#define SCALE 3.0f\n")
    cpu.load(source, "scaled")
    assert len(_libraries()) == len(first) + 1
    assert (cpu.run(source, "scaled", (1,), (8,), [np.zeros(8, np.float32)])[0]
            == 3.0 * np.arange(8)).all()


def test_spec_options_reach_the_host_compiler(cpu: CpuWorker, tmp_path: Path) -> None:
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "scale.cuh").write_text("#define SCALE (OFFSET + 1.0f)\n")
    source = tmp_path / "options.cu"
    source.write_text(KERNEL.replace('"scale.cuh"', "<scale.cuh>"))
    cpu.load(source, "scaled", ["-Iinc", "-DOFFSET=4.0f", "--fmad=false", "-O3"])
    out = cpu.run(source, "scaled", (1,), (8,), [np.zeros(8, np.float32)])[0]
    assert (out == 5.0 * np.arange(8)).all()
