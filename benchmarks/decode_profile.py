"""Where a decode step's time goes on the GPU (issue 18): one random Qwen2-7B-shaped model in
bf16 and in NF4 (bitsandbytes' path and the nf4_gemv kernel), at batch 1 and 8.

For each: the captured step alone (graph replays timed with CUDA events), the whole loop of
app/assist/model/fastdecode.run per token (host work included), the matrix-vector products of one
layer, and the largest kernels of one eager step (torch.profiler). For the kernel: its answers
against bitsandbytes' dequantized weights. Prints one JSON line per measurement.

    python benchmarks/decode_profile.py [--variants bf16,nf4,nf4-kernel] [--profile]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from app.assist.model import fastdecode, nf4_linear, quant  # noqa: E402

SHAPE = {"vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944,
         "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
         "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 2}


def emit(**row: Any) -> None:
    """One result line."""
    print(json.dumps(row), flush=True)


def event_ms(function: Any, repeats: int) -> float:
    """Milliseconds per call of `function`, by CUDA events around `repeats` calls."""
    function()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeats):
        function()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / repeats


def save_random(folder: Path) -> None:
    """A random bf16 Qwen2 of the 7B shape, saved for loading with a quantization."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    with torch.device("cuda"):
        model = Qwen2ForCausalLM(Qwen2Config(max_position_embeddings=32768, **SHAPE))
    model.to(torch.bfloat16).save_pretrained(str(folder))
    del model
    torch.cuda.empty_cache()


def load(folder: Path, quantization: str) -> Any:
    """The saved model on the GPU, loaded as the app loads it."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(folder),
                                                 **quant.load_arguments(quantization, "cuda"))
    return model.eval()


def layer_products(model: Any, variant: str) -> None:
    """The matrix-vector products of layer 0 at 1 and 8 rows: time and bandwidth."""
    mlp, attention = model.model.layers[0].mlp, model.model.layers[0].self_attn
    for name, module in (("gate", mlp.gate_proj), ("down", mlp.down_proj),
                         ("q", attention.q_proj), ("lm_head", model.lm_head)):
        k = module.in_features
        n = module.out_features
        for rows in (1, 8):
            x = torch.randn(rows, k, dtype=torch.bfloat16, device="cuda")
            with torch.inference_mode():
                ms = event_ms(lambda m=module, v=x: m(v), 200)
            weight_bytes = n * k * (2 if variant == "bf16" or name == "lm_head" else 0.5)
            emit(what="product", variant=variant, layer=name, rows=rows, n=n, k=k,
                 us=round(1000 * ms, 2), weight_gb_s=round(weight_bytes / ms / 1e6, 1))


def kernel_agreement(model: Any) -> None:
    """nf4_gemv against bitsandbytes' dequantized weights (float32 products) at 1, 3, 8 rows."""
    import bitsandbytes.functional as bnbf

    module = model.model.layers[0].mlp.gate_proj
    state = module.weight.quant_state
    dense = bnbf.dequantize_4bit(module.weight.data, state).float()
    for rows in (1, 3, 8):
        x = torch.randn(rows, module.in_features, dtype=torch.bfloat16, device="cuda")
        with torch.inference_mode():
            got = module(x).float()
        expected = x.float() @ dense.T
        error = ((got - expected).abs() / (expected.abs() + 1e-2)).max().item()
        emit(what="agreement", rows=rows, max_relative_error=round(error, 5),
             bf16_unit=2 ** -8)


def decode_speed(model: Any, variant: str, batch: int, tokens: int) -> None:
    """Graph replay alone and the whole fastdecode loop per token."""
    decoder = fastdecode.FastDecoder(model, batch, 1024, use_graph=True)
    stop = threading.Event()
    ids = torch.randint(3, 40000, (batch, 32), device="cuda")
    inputs = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    choice = fastdecode.Choice(repetition_penalty=1.1, min_new_tokens=tokens, eos_ids=(2,))
    with torch.inference_mode():
        fastdecode.run(decoder, inputs, 8, choice, [], stop)  # captures the step
        replay_ms = event_ms(decoder.graph.replay, 50) if decoder.graph else 0.0
        torch.cuda.synchronize()
        started = time.perf_counter()
        fastdecode.run(decoder, inputs, tokens, choice, [], stop)
        torch.cuda.synchronize()
        loop_s = time.perf_counter() - started
    emit(what="decode", variant=variant, batch=batch, graph=decoder.graph is not None,
         note=decoder.note, replay_ms=round(replay_ms, 3),
         loop_ms_per_step=round(1000 * loop_s / tokens, 3),
         tokens_per_s=round(batch * tokens / loop_s, 1))


def kernel_table(model: Any, variant: str) -> None:
    """The largest kernels of one eager decode step at batch 1."""
    from torch.profiler import ProfilerActivity, profile

    decoder = fastdecode.FastDecoder(model, 1, 1024, use_graph=False)
    ids = torch.randint(3, 40000, (1, 32), device="cuda")
    with torch.inference_mode():
        decoder.prefill(ids, torch.ones_like(ids), threading.Event(), 2048, lambda m, f: None)
        tokens = torch.ones(1, dtype=torch.long, device="cuda")
        decoder.step(tokens, threading.Event())
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            decoder.step(tokens, threading.Event())
            torch.cuda.synchronize()
    rows = sorted(prof.key_averages(), key=lambda e: -e.self_device_time_total)[:14]
    total = sum(e.self_device_time_total for e in prof.key_averages())
    emit(what="kernels", variant=variant, total_us=round(total, 1),
         top=[(e.key[:70], e.count, round(e.self_device_time_total, 1)) for e in rows])


def main() -> int:
    """Measure every variant asked for."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variants", default="bf16,nf4,nf4-kernel")
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--profile", action="store_true", help="also the kernel table")
    parser.add_argument("--scratch", default="/dev/shm")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.scratch) as scratch:
        folder = Path(scratch) / "qwen2-7b"
        save_random(folder)
        variants = args.variants.split(",")
        for quantization in ("none", "nf4"):
            wanted = [v for v in variants if (v == "bf16") == (quantization == "none")]
            if not wanted:
                continue
            model = load(folder, quantization)
            for variant in wanted:  # nf4 (bitsandbytes) before nf4-kernel on one loaded model
                if variant == "nf4-kernel":
                    count, why = nf4_linear.use_kernel(model)
                    emit(what="kernel", layers=count, why=why)
                    kernel_agreement(model)
                measure(model, variant, args)
            del model
            torch.cuda.empty_cache()
    return 0


def measure(model: Any, variant: str, args: argparse.Namespace) -> None:
    """Every figure of one variant."""
    layer_products(model, variant)
    for batch in (1, 8):
        decode_speed(model, variant, batch, args.tokens)
    if args.profile:
        kernel_table(model, variant)


if __name__ == "__main__":
    sys.exit(main())
