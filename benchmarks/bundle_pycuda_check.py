"""The GPU bundle's pycuda wheel against a real NVIDIA driver (issue 28), run by the bundle's
Python (3.11) on the GPU machine: `bash benchmarks/bundle_pycuda_gpu.sh check` runs it.

Says which libcuda and libcurand the extension loaded (the driver's, and the nvidia-curand
wheel's through the wheel's run path), then compiles the vector_add template with nvcc through
pycuda and checks it against numpy at three sizes, with the output's tail poisoned to catch a
write past the end."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pycuda.driver as cuda
from pycuda.compiler import SourceModule

ROOT = Path(__file__).resolve().parent.parent
POISON = np.float32(-7.25)
TAIL = 64


def loaded_libraries() -> list[str]:
    """The CUDA libraries mapped into this process."""
    paths = {line.split()[-1] for line in Path("/proc/self/maps").read_text().splitlines()
             if "libcu" in line}
    return sorted(paths)


def check(function: object, n: int, rng: np.random.Generator) -> str:
    """vector_add at n elements against numpy; what was found."""
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    c = np.full(n + TAIL, POISON, dtype=np.float32)
    blocks = -(-n // 256)
    function(cuda.In(a), cuda.In(b), cuda.InOut(c), np.int32(n),  # type: ignore[operator]
             block=(256, 1, 1), grid=(blocks, 1))
    wrong = int(np.count_nonzero(c[:n] != a + b))
    past_end = int(np.count_nonzero(c[n:] != POISON))
    verdict = "PASSED" if wrong == 0 and past_end == 0 else "FAILED"
    return f"n={n}: {verdict} ({wrong} wrong, {past_end} written past the end)"


def main() -> int:
    cuda.init()
    device = cuda.Device(0)
    context = device.make_context()
    try:
        print("python", sys.version.split()[0], "pycuda from", Path(cuda.__file__).parent)
        print("device", device.name(), "driver", cuda.get_driver_version())
        print("libraries:", *loaded_libraries(), sep="\n  ")
        source = (ROOT / "resources/kernels/vector_add/vector_add.cu").read_text()
        function = SourceModule(source, no_extern_c=True).get_function("vector_add")
        rng = np.random.default_rng(0)
        results = [check(function, n, rng) for n in (1, 1000, 1_000_003)]
        print(*results, sep="\n")
        return 0 if all("PASSED" in r for r in results) else 1
    finally:
        context.pop()


if __name__ == "__main__":
    sys.exit(main())
