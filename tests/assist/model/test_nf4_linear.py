"""The NF4 kernel's hook (app/assist/model/nf4_linear.py) on the CPU: which layers it would take and
why it takes none here; the kernel itself runs in test_nf4_linear_gpu.py."""

from __future__ import annotations

from typing import Any

import pytest

from app.assist.model import nf4_linear

torch = pytest.importorskip("torch")
bnb = pytest.importorskip("bitsandbytes")


def four_bit(double_quant: bool, quant_type: str = "nf4") -> Any:
    """A real bitsandbytes 4-bit layer (quantized on the CPU) inside a small model."""
    layer = bnb.nn.Linear4bit(128, 64, bias=False, compute_dtype=torch.bfloat16,
                              compress_statistics=double_quant, quant_type=quant_type)
    layer.load_state_dict({"weight": torch.randn(64, 128)})
    return torch.nn.Sequential(layer.to("cpu"))


def test_a_model_without_4bit_layers_keeps_its_path() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(64, 64))
    assert nf4_linear.use_kernel(model) == (0, "the model has no 4-bit layers")


def test_layers_in_another_layout_are_named_and_left_alone() -> None:
    model = four_bit(double_quant=True)
    layer = model[0]
    before = layer.forward
    count, why = nf4_linear.use_kernel(model)
    assert count == 0 and why is not None and "not on a GPU" in why
    assert layer.forward == before  # bitsandbytes' own forward, untouched
    count, why = nf4_linear.use_kernel(four_bit(double_quant=False))
    assert count == 0 and why is not None and "not double-quantized" in why
    count, why = nf4_linear.use_kernel(four_bit(double_quant=True, quant_type="fp4"))
    assert count == 0 and why is not None and "not NF4" in why


def test_the_template_compiles_within_the_register_budget() -> None:
    from app.compile.api import compile_file

    result = compile_file(nf4_linear.TEMPLATE, arch="sm_90",
                          options=[f"-DROWS_PER_BLOCK={nf4_linear.ROWS_PER_BLOCK}"])
    assert result.ok, result.message
    (kernel,) = result.kernels
    # 8 blocks of 128 threads an SM need at most 64 registers; spills would cost bandwidth.
    assert kernel.registers <= 64 and kernel.spill_stores_bytes == 0
