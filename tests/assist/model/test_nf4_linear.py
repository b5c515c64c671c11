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


@pytest.mark.parametrize("variant, registers", [(nf4_linear.TENSOR_CORES, 85),
                                                 (nf4_linear.CUDA_CORES, 64)])
def test_each_kernel_compiles_within_its_register_budget(variant: Any, registers: int) -> None:
    from app.compile.api import compile_file

    result = compile_file(nf4_linear.FOLDER / variant.source, arch="sm_90", options=[])
    assert result.ok, result.message
    (kernel,) = result.kernels
    # The tensor-core kernel keeps 3 blocks of 256 threads an SM (85 registers), the CUDA-core
    # one 8 blocks of 128 (64); spills would cost bandwidth.
    assert kernel.registers <= registers and kernel.spill_stores_bytes == 0


def test_tensor_cores_are_taken_from_compute_capability_8_on() -> None:
    assert nf4_linear.variant_for((9, 0)) is nf4_linear.TENSOR_CORES
    assert nf4_linear.variant_for((8, 0)) is nf4_linear.TENSOR_CORES
    assert nf4_linear.variant_for((7, 5)) is nf4_linear.CUDA_CORES


@pytest.mark.parametrize("variant", [nf4_linear.TENSOR_CORES, nf4_linear.CUDA_CORES])
def test_each_kernel_is_launched_as_its_spec_launches_it(variant: Any) -> None:
    from app.spec.model import load_spec

    spec_path = (nf4_linear.FOLDER / variant.source).with_suffix(".toml")
    spec = load_spec(spec_path)
    assert spec.source_path.name == variant.source
    assert spec.block == (str(variant.threads),)
    tiles = f"cdiv(N, {variant.rows_per_block})"
    cap = variant.blocks_per_sm * 132  # the H200's SMs, as the spec writes it
    assert spec.grid == ((f"min({tiles}, {cap})",) if cap else (tiles,))
    assert variant.grid(18944, 132) == min(18944 // variant.rows_per_block, cap or 18944)
