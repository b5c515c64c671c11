"""On a GPU: bitsandbytes NF4 layers through the nf4_gemv template's kernel
(app/assist/model/nf4_linear.py) give bitsandbytes' dequantized product within its roundings, keep
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


def dense_product(layer: Any, x: Any) -> tuple[Any, Any, Any]:
    """An independent reference: x times bitsandbytes' own dequantized weights plus the bias,
    multiplied in float64; with the sum before the bias and the spread of each sum's terms
    (the root of the sum of their squares), the sizes its rounding scales with."""
    import bitsandbytes.functional as bnbf

    weight = bnbf.dequantize_4bit(layer.weight.data, layer.weight.quant_state).double()
    wide = x.double()
    before_bias = wide @ weight.T
    spread = ((wide * wide) @ (weight * weight).T).sqrt()
    return before_bias + layer.bias.double(), before_bias, spread


def rounding_used(got: Any, expected: Any, before_bias: Any, spread: Any) -> float:
    """How much of what its roundings allow the worst result uses (at most 1 when correct).
    The sum and the biased sum are each rounded to bf16 (half a unit of each, 2^-9 relative),
    and the weights are rounded to bf16 (bitsandbytes rounds code times absmax, the kernel the
    codes): independent errors of 2^-9 relative per weight, whose sum stays within 7 standard
    deviations, 2^-6 of the spread. A tolerance relative to the result alone fails correct code
    where the terms cancel: the test's old check did, -0.1416 against -0.1318 for a result
    whose sum before the bias was near 3."""
    allowed = 2.0 ** -8 * (before_bias.abs() + expected.abs()) + 2.0 ** -6 * spread
    return float(((got.double() - expected).abs() / allowed).max())


def bf16_units(got: Any, expected: Any, size: Any) -> Any:
    """|got - expected| in units in the last place of a bf16 of `size` (the figures the README
    quotes)."""
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
    expected, before_bias, spread = dense_product(model[0], x)
    nf4_linear.stop_using_kernel(model)
    with torch.inference_mode():
        own = model(x)
    kernel, theirs = (rounding_used(got, expected, before_bias, spread),
                      rounding_used(own, expected, before_bias, spread))
    size = torch.maximum(torch.maximum(expected.abs(), before_bias.abs()), spread)
    between = bf16_units(got, own.double(), size)
    print(f"rows {rows}: the kernel uses {kernel:.2f} of its rounding allowance, bitsandbytes "
          f"{theirs:.2f}; kernel against bitsandbytes at most {between.max():.2f} bf16 units, "
          f"{(between <= 1).double().mean():.4f} within one")
    assert theirs <= 1.0  # bitsandbytes' own path, against the independent reference
    assert kernel <= 1.0
    assert (between <= 1).double().mean() >= 0.95


def test_many_rows_take_bitsandbytes_path_and_the_kernel_is_captured() -> None:
    import torch

    model = nf4_model(n=256, k=512)
    nf4_linear.use_kernel(model)
    many = torch.randn(nf4_linear.MAX_ROWS + 1, 512, dtype=torch.bfloat16, device="cuda")
    with torch.inference_mode():
        expected, before_bias, spread = dense_product(model[0], many)
        assert rounding_used(model(many), expected, before_bias, spread) <= 1.0
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
