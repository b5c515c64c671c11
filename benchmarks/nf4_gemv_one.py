"""One NF4 layer's product through nf4_gemv, called a few times: a target for Nsight Compute.

    python benchmarks/nf4_gemv_one.py N K M [--calls 4]

builds a bitsandbytes NF4 layer of N x K (double-quantized, bf16 compute, as the app loads
models), routes it through nf4_gemv (app/assist/model/nf4_linear.py) and multiplies M rows of x
`--calls` times. On the H200 (device kit carried) the profile quoted in the README came from

    ncu --target-processes all -k regex:nf4_gemv -s 2 -c 1 --section SpeedOfLight \\
        --section Occupancy --section WarpStateStats --section LaunchStats \\
        --section MemoryWorkloadAnalysis --section SchedulerStats \\
        python3 benchmarks/nf4_gemv_one.py 18944 3584 1

(the third launch: the first two warm up). Needs a GPU with bf16 tensor cores.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from nf4_gemv_vs_bnb import layer, need_gpu  # noqa: E402

from app.assist.model import nf4_linear  # noqa: E402


def main() -> None:
    """Build the layer, switch it to nf4_gemv, call it."""
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("N", "K", "M"):
        parser.add_argument(name, type=int)
    parser.add_argument("--calls", type=int, default=4)
    args = parser.parse_args()
    need_gpu()
    model = layer(args.N, args.K)
    x = torch.randn(args.M, args.K, dtype=torch.bfloat16, device="cuda")
    with torch.inference_mode():
        count, why = nf4_linear.use_kernel(model)
        if not count:
            raise SystemExit(f"nf4_gemv not used: {why}")
        for _ in range(args.calls):
            model(x)
        torch.cuda.synchronize()
    print(f"nf4_gemv: {args.calls} products of {args.M} x {args.K} by {args.K} x {args.N}")


if __name__ == "__main__":
    main()
