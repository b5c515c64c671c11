"""Small GPU programs that benchmarks/timing_accuracy.py runs in child processes, so that each
holds its own CUDA context and the benchmark's own process never touches the GPU:

    python benchmarks/timing_helpers.py launch --cubin F --symbol S --n N --grid G --block B
        launch saxpy's cubin COUNT times (under ncu, which times each launch)
    python benchmarks/timing_helpers.py torch-copy --n N
    python benchmarks/timing_helpers.py memcpy-copy --n N
        time a device-to-device copy of N float32 (torch's copy_, or cuMemcpyDtoD through
        pycuda) with CUDA events, L2 flushed before each sample; print one JSON line
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable

SAMPLES = 50
WARMUP = 10


def launch(args: argparse.Namespace) -> int:
    """Load the cubin with pycuda and launch saxpy `count` times on random data."""
    import numpy as np
    import pycuda.driver as cuda

    cuda.init()
    context = cuda.Device(0).make_context()
    try:
        function = cuda.module_from_file(args.cubin).get_function(args.symbol)
        rng = np.random.default_rng(0)
        x = cuda.mem_alloc(4 * args.n)
        y = cuda.mem_alloc(4 * args.n)
        cuda.memcpy_htod(x, rng.standard_normal(args.n).astype(np.float32))
        cuda.memcpy_htod(y, rng.standard_normal(args.n).astype(np.float32))
        for _ in range(args.count):
            function(x, y, np.float32(2.5), np.int32(args.n), block=(args.block, 1, 1),
                     grid=(args.grid, 1, 1))
        context.synchronize()
    finally:
        context.pop()
    return 0


def _median_ms(run_once: Callable[[], float]) -> float:
    """The median of SAMPLES timed runs after WARMUP untimed ones."""
    for _ in range(WARMUP):
        run_once()
    return statistics.median(run_once() for _ in range(SAMPLES))


def torch_copy(args: argparse.Namespace) -> int:
    """y.copy_(x) timed with torch's CUDA events."""
    import torch

    source = torch.randn(args.n, device="cuda")
    target = torch.empty_like(source)
    l2 = int(getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 64 * 2**20))
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def once() -> float:
        flush.zero_()
        start.record()
        target.copy_(source)
        end.record()
        end.synchronize()
        return float(start.elapsed_time(end))

    median = _median_ms(once)
    print(json.dumps({"median_ms": median, "gbps": 8 * args.n / (median / 1000) / 1e9,
                      "what": f"torch {torch.__version__} copy_"}))
    return 0


def memcpy_copy(args: argparse.Namespace) -> int:
    """cuMemcpyDtoD through pycuda, timed with CUDA events."""
    import pycuda.driver as cuda

    cuda.init()
    device = cuda.Device(0)
    context = device.make_context()
    try:
        nbytes = 4 * args.n
        source, target = cuda.mem_alloc(nbytes), cuda.mem_alloc(nbytes)
        cuda.memset_d8(source, 1, nbytes)
        l2 = device.get_attribute(cuda.device_attribute.L2_CACHE_SIZE)
        flush = cuda.mem_alloc(2 * l2)
        start, end = cuda.Event(), cuda.Event()

        def once() -> float:
            cuda.memset_d8(flush, 0, 2 * l2)
            start.record()
            cuda.memcpy_dtod(target, source, nbytes)
            end.record()
            end.synchronize()
            return float(end.time_since(start))

        median = _median_ms(once)
    finally:
        context.pop()
    print(json.dumps({"median_ms": median, "gbps": 2 * nbytes / (median / 1000) / 1e9,
                      "what": "cuMemcpyDtoD (pycuda)"}))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run one helper."""
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="helper", required=True)
    one = sub.add_parser("launch")
    for name in ("cubin", "symbol"):
        one.add_argument(f"--{name}", required=True)
    for name in ("n", "grid", "block"):
        one.add_argument(f"--{name}", type=int, required=True)
    one.add_argument("--count", type=int, default=5)
    for name in ("torch-copy", "memcpy-copy"):
        sub.add_parser(name).add_argument("--n", type=int, required=True)
    args = parser.parse_args(argv)
    helpers = {"launch": launch, "torch-copy": torch_copy, "memcpy-copy": memcpy_copy}
    return helpers[args.helper](args)


if __name__ == "__main__":
    sys.exit(main())
