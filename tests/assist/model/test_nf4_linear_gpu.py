"""On a GPU: bitsandbytes NF4 layers through the nf4_gemv template's kernel
(app/assist/model/nf4_linear.py) give bitsandbytes' dequantized product within one bf16 unit, keep
bitsandbytes' path for many rows, and can be captured in a CUDA graph."""

from __future__ import annotations

from typing import Any

import pytest

from app.assist.model import nf4_linear

pytestmark = pytest.mark.gpu


def nf4_model(n: int, k: int) -> Any:
    """One bitsandbytes NF4 layer (double-quantized, bf16 compute) on the GPU, seed 0."""
    import torch
    from bitsandbytes.nn.modules import Linear4bit

    torch.manual_seed(0)
    layer: Any = Linear4bit(k, n, bias=True, compute_dtype=torch.bfloat16,  # type: ignore[no-untyped-call]
                              compress_statistics=True, quant_type="nf4")
    layer.load_state_dict({"weight": torch.randn(n, k) * 0.05, "bias": torch.randn(n)})
    # bf16 before the move, as a model loaded in bf16: the move to the GPU quantizes.
    return torch.nn.Sequential(layer.to(torch.bfloat16).to("cuda"))


def dense_product(layer: Any, x: Any) -> tuple[Any, Any]:
    """An independent reference: x times bitsandbytes' own dequantized weights plus the bias,
    multiplied in float64; and the size each result's rounding scales with: the largest of the
    result, the sum before the bias, and the spread of the sum's terms (the root of the sum of
    their squares)."""
    import bitsandbytes.functional as bnbf
    import torch

    weight = bnbf.dequantize_4bit(layer.weight.data, layer.weight.quant_state).double()
    wide = x.double()
    before_bias = wide @ weight.T
    product = before_bias + layer.bias.double()
    spread = ((wide * wide) @ (weight * weight).T).sqrt()
    return product, torch.maximum(torch.maximum(product.abs(), before_bias.abs()), spread)


def bf16_units(got: Any, expected: Any, size: Any) -> Any:
    """|got - expected| in units in the last place of a bf16 of `size`. A sum whose terms
    cancel cannot be closer than its terms' rounding, so a tolerance relative to the result
    alone fails correct code there: the test's old check did, -0.1416 against -0.1318 for a
    result whose sum before the bias was near 3 (rounded to bf16 before the bias is added)."""
    import torch

    unit = torch.exp2(torch.floor(torch.log2(size.clamp(min=2.0 ** -100))) - 7)
    return (got.double() - expected).abs() / unit


@pytest.mark.parametrize("rows", [1, 3, 8])
def test_the_kernel_gives_bitsandbytes_product(rows: int) -> None:
    import torch

    model = nf4_model(n=1000, k=4096)  # 64 000 absmax values: 250 second-level groups
    assert nf4_linear.use_kernel(model) == (1, None)
    x = torch.randn(rows, 4096, dtype=torch.bfloat16, device="cuda")
    with torch.inference_mode():
        got = model(x)
    expected, size = dense_product(model[0], x)
    nf4_linear.stop_using_kernel(model)
    with torch.inference_mode():
        own = model(x)
    kernel, theirs = bf16_units(got, expected, size), bf16_units(own, expected, size)
    between = bf16_units(got, own.double(), size)
    print(f"rows {rows}: kernel max {kernel.max():.2f} units ({(kernel <= 1).double().mean():.4f}"
          f" within one), bitsandbytes max {theirs.max():.2f}, kernel against bitsandbytes max "
          f"{between.max():.2f} ({(between <= 1).double().mean():.4f} within one)")
    # bitsandbytes rounds its sum and the biased sum to bf16: within one unit each. The kernel
    # also rounds the NF4 codes to bf16 (bitsandbytes rounds code times absmax instead).
    assert theirs.max() <= 1.0
    assert kernel.max() <= 2.0 and between.max() <= 2.0
    assert (between <= 1).double().mean() >= 0.99


def test_many_rows_take_bitsandbytes_path_and_the_kernel_is_captured() -> None:
    import torch

    model = nf4_model(n=256, k=512)
    nf4_linear.use_kernel(model)
    many = torch.randn(nf4_linear.MAX_ROWS + 1, 512, dtype=torch.bfloat16, device="cuda")
    with torch.inference_mode():
        expected, size = dense_product(model[0], many)
        assert bf16_units(model(many), expected, size).max() <= 1.0
        x = torch.randn(1, 512, dtype=torch.bfloat16, device="cuda")
        eager = model(x)
        side = torch.cuda.Stream()  # type: ignore[no-untyped-call]
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            model(x)  # warm-up off the default stream, as capture wants
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            captured = model(x)
        x.copy_(torch.randn_like(x))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(captured, model(x))  # the replay read the new input
        assert not torch.equal(captured, eager)
