"""Device and quantization choices: bitsandbytes NF4 by default on a CUDA GPU, 8-bit and none as
options, and on the CPU whatever benchmarks/assistant_bench.py measured fastest."""

from __future__ import annotations

from typing import Any

from app.assist.errors import AssistError

DEVICES = ("auto", "cpu", "cuda")
QUANTIZATIONS = ("auto", "nf4", "int8", "none")
# Measured with benchmarks/assistant_bench.py (SmolLM2-135M, 2 shared cores, 1 thread, variants
# interleaved): NF4 decodes a little faster (18.6 against 16.2 tokens/s) but reads a prompt much
# slower (first token of a 2426-token propose prompt after 15.1 s against 8.7 s). Every action's
# prompt carries a spec, source or skills, so float32 answers sooner overall, and loses nothing.
CPU_DEFAULT_QUANTIZATION = "none"
GPU_DEFAULT_QUANTIZATION = "nf4"


def cuda_available() -> bool:
    """Whether torch sees a CUDA device (imports torch, so call it only when loading)."""
    import torch

    return bool(torch.cuda.is_available())


def resolve_device(device: str) -> str:
    """'auto' becomes 'cuda' when a GPU is usable, else 'cpu'; 'cuda' without one is an error."""
    if device not in DEVICES:
        raise AssistError(f"unknown device {device!r}", f"choose one of {', '.join(DEVICES)}")
    if device == "auto":
        return "cuda" if cuda_available() else "cpu"
    if device == "cuda" and not cuda_available():
        raise AssistError("no CUDA device is usable by torch here", "use --device cpu")
    return device


def resolve_quantization(quantization: str, device: str) -> str:
    """'auto' becomes NF4 on a GPU and the measured CPU default on the CPU."""
    if quantization not in QUANTIZATIONS:
        raise AssistError(f"unknown quantization {quantization!r}",
                          f"choose one of {', '.join(QUANTIZATIONS)}")
    if quantization != "auto":
        return quantization
    return GPU_DEFAULT_QUANTIZATION if device == "cuda" else CPU_DEFAULT_QUANTIZATION


def compute_dtype(device: str) -> Any:
    """bfloat16 on a GPU; float32 on the CPU, where it is the fast path for torch matmuls."""
    import torch

    return torch.bfloat16 if device == "cuda" else torch.float32


def bnb_config(quantization: str, device: str) -> Any:
    """The BitsAndBytesConfig for a resolved quantization, or None for 'none'."""
    if quantization == "none":
        return None
    import torch
    import transformers

    # transformers' constructors are untyped; go through Any rather than silence mypy per call.
    config_class: Any = transformers.BitsAndBytesConfig
    if quantization == "int8":
        return config_class(load_in_8bit=True)
    return config_class(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=torch.bfloat16 if device == "cuda" else compute_dtype(device),
    )


def load_arguments(quantization: str, device: str) -> dict[str, Any]:
    """Keyword arguments for from_pretrained that place and quantize the weights."""
    arguments: dict[str, Any] = {"dtype": compute_dtype(device)}
    config = bnb_config(quantization, device)
    if config is not None:
        arguments["quantization_config"] = config
    if device == "cuda" or config is not None:
        arguments["device_map"] = {"": device}
    return arguments
