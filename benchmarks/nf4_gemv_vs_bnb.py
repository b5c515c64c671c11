"""nf4_gemv (through app/assist/model/nf4_linear.py, as the assistant runs it) against
bitsandbytes' own 4-bit product on a GPU, at the shapes of a 7B model's layer (Qwen2-7B: hidden
3584, 4 key-value heads of 128, MLP 18944), for 1 and 8 rows of x.

For each shape and row count: the median time of each (CUDA events around one call, L2 flushed
before each sample by writing a buffer twice its size, the call issued while the GPU still
spins so that host time is not counted), the bandwidth the kernel reaches over
the bytes it must read, as a share of the copy ceiling given with --ceiling (what `kernel-studio
bench` measured), and how far the two products are apart in bf16 units (at the larger of the
result and the spread of its terms, as tests/assist/model/test_nf4_linear_gpu.py counts them).

    python benchmarks/nf4_gemv_vs_bnb.py [--ceiling GBPS] [--samples 50] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.assist.model import nf4_linear  # noqa: E402

# (name, N, K): the four kinds of projection in a layer of a 7B model.
SHAPES = (("q/o proj", 3584, 3584), ("k/v proj", 512, 3584), ("gate/up proj", 18944, 3584),
          ("down proj", 3584, 18944))


def need_gpu() -> None:
    """Exit 2 with the reason where torch sees no CUDA GPU (the products run only there)."""
    import torch

    if not torch.cuda.is_available():
        print("this benchmark needs an NVIDIA GPU with bf16 tensor cores; torch sees no CUDA "
              "device here", file=sys.stderr)
        raise SystemExit(2)


def layer(n: int, k: int) -> Any:
    """A bitsandbytes NF4 layer (double-quantized, bf16 compute) on the GPU."""
    import torch
    from bitsandbytes.nn.modules import Linear4bit

    module: Any = Linear4bit(k, n, bias=False, compute_dtype=torch.bfloat16,  # type: ignore[no-untyped-call]
                             compress_statistics=True, quant_type="nf4")
    module.load_state_dict({"weight": torch.randn(n, k) * 0.02})
    return torch.nn.Sequential(module.to(torch.bfloat16).to("cuda"))


def weight_bytes(n: int, k: int, rows: int) -> int:
    """What the product must read and write: codes, absmax, scales, x and out."""
    return n * k // 2 + n * k // 64 + 4 * -(-(n * k // 64) // 256) + 2 * rows * k + 2 * rows * n


def timed(call: Any, samples: int, flush: Any) -> list[float]:
    """Milliseconds of each call, L2 flushed before each. The GPU is kept busy (a spin) while
    the host issues the call, so the time is the GPU's, not the Python's in front of it."""
    import torch

    for _ in range(3):
        call()
    times = []
    for index in range(samples):
        flush.fill_(index & 0xFF)
        torch.cuda._sleep(400_000)  # type: ignore[no-untyped-call]  # about 0.2 ms at 2 GHz: longer than issuing the call
        start = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
        end = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return times


def units_apart(a: Any, b: Any, x: Any, module: Any) -> tuple[float, float]:
    """(max, share within one) of |a - b| in bf16 units at max(|b|, the terms' spread)."""
    import bitsandbytes.functional as bnbf
    import torch

    weight = bnbf.dequantize_4bit(module.weight.data, module.weight.quant_state).double()
    spread = ((x.double() ** 2) @ (weight ** 2).T).sqrt()
    size = torch.maximum(b.double().abs(), spread).clamp(min=2.0 ** -100)
    unit = torch.exp2(torch.floor(torch.log2(size)) - 7)
    apart = (a.double() - b.double()).abs() / unit
    return float(apart.max()), float((apart <= 1).double().mean())


def measure(name: str, n: int, k: int, rows: int, samples: int, flush: Any,
            ceiling: float | None) -> dict[str, Any]:
    """One shape at one row count."""
    import torch

    model = layer(n, k)
    x = torch.randn(rows, k, dtype=torch.bfloat16, device="cuda")
    with torch.inference_mode():
        theirs = model(x)
        bnb_ms = statistics.median(timed(lambda: model(x), samples, flush))
        count, why = nf4_linear.use_kernel(model)
        if not count:
            raise SystemExit(f"nf4_gemv not used: {why}")
        ours = model(x)
        ours_ms = statistics.median(timed(lambda: model(x), samples, flush))
    most, within = units_apart(ours, theirs, x, model[0])
    moved = weight_bytes(n, k, rows)
    row = {"shape": name, "N": n, "K": k, "M": rows, "nf4_gemv_us": round(ours_ms * 1000, 2),
           "bitsandbytes_us": round(bnb_ms * 1000, 2), "speedup": round(bnb_ms / ours_ms, 2),
           "nf4_gemv_GBps": round(moved / ours_ms / 1e6, 1), "max_units_apart": round(most, 2),
           "within_one_unit": round(within, 5),
           "variant": nf4_linear.kernel_for(0).variant.source}
    if ceiling:
        row["share_of_ceiling"] = round(moved / ours_ms / 1e6 / ceiling, 3)
    return row


def main() -> None:
    """Every shape at 1 and 8 rows; a line of JSON each."""
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ceiling", type=float, help="the copy ceiling in GB/s (bench's)")
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--json", type=Path, help="also write every row here")
    args = parser.parse_args()
    need_gpu()
    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 64 << 20)
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    rows = []
    for name, n, k in SHAPES:
        for m in (1, 8):
            rows.append(measure(name, n, k, m, args.samples, flush, args.ceiling))
            print(json.dumps(rows[-1]), flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
