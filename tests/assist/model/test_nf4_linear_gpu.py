"""On a GPU: bitsandbytes NF4 layers through the nf4_gemv template's kernel
(app/assist/model/nf4_linear.py) give bitsandbytes' dequantized product within one bf16 unit, keep
bitsandbytes' path for many rows, and can be captured in a CUDA graph."""

from __future__ import annotations

from typing import Any

import pytest

from app.assist.model import nf4_linear

pytestmark = pytest.mark.gpu
BF16_UNIT = 2.0 ** -7  # one unit in the last place of a bf16 near 1, relative


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


def dense_product(layer: Any, x: Any) -> Any:
    """x times bitsandbytes' own dequantized weights, in float32, plus the bias."""
    import bitsandbytes.functional as bnbf

    weight = bnbf.dequantize_4bit(layer.weight.data, layer.weight.quant_state).float()
    return x.float() @ weight.T + layer.bias.float()


@pytest.mark.parametrize("rows", [1, 3, 8])
def test_the_kernel_gives_bitsandbytes_product(rows: int) -> None:
    import torch

    model = nf4_model(n=1000, k=4096)  # 64 000 absmax values: 250 second-level groups
    assert nf4_linear.use_kernel(model) == (1, None)
    x = torch.randn(rows, 4096, dtype=torch.bfloat16, device="cuda")
    with torch.inference_mode():
        got = model(x).float()
    expected = dense_product(model[0], x)
    # One bf16 rounding of the sum and of the bias added to it.
    assert torch.allclose(got, expected, rtol=2 * BF16_UNIT, atol=1e-2)
    nf4_linear.stop_using_kernel(model)
    with torch.inference_mode():
        own = model(x).float()
    assert torch.allclose(own, expected, rtol=2 * BF16_UNIT, atol=1e-2)


def test_many_rows_take_bitsandbytes_path_and_the_kernel_is_captured() -> None:
    import torch

    model = nf4_model(n=256, k=512)
    nf4_linear.use_kernel(model)
    many = torch.randn(nf4_linear.MAX_ROWS + 1, 512, dtype=torch.bfloat16, device="cuda")
    with torch.inference_mode():
        assert torch.allclose(model(many).float(), dense_product(model[0], many),
                              rtol=2 * BF16_UNIT, atol=1e-2)
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
