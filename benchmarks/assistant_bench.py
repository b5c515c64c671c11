"""Time to first token, decode speed, load time and stop latency of the local assistant.

CPU: the real default model (SmolLM2-135M-Instruct) in each quantization, to choose the CPU
default (app/assist/quant.py: CPU_DEFAULT_QUANTIZATION). GPU: randomly initialised Qwen2-shaped
models (1.5B and 7B shapes; no weights can be fetched there) in NF4 and bf16, loaded through the
real path (import with manifest, checks, ModelSession). Reference point (issue 7): plain
`generate` gave about 27 tokens/s in NF4 and 17 in bf16 for the 7B shape on an H200.

    python benchmarks/assistant_bench.py --cpu [--quantizations none,nf4,int8] [--threads N]
    python benchmarks/assistant_bench.py --gpu [--shapes 1.5b,7b] [--quantizations nf4,none]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app import offline  # noqa: E402

offline.enforce()

from app.assist import GenerationOptions, ModelSession  # noqa: E402
from app.assist.convert import default_model_folder, import_folder  # noqa: E402
from app.assist.prompts import PromptContext, build_prompt  # noqa: E402

QUESTION = [{"role": "user", "content": "Write a CUDA kernel that adds two float vectors."}]
SHAPES = {  # Qwen2-1.5B and Qwen2-7B (Qwen2.5 shares them)
    "1.5b": {"vocab_size": 151936, "hidden_size": 1536, "intermediate_size": 8960,
             "num_hidden_layers": 28, "num_attention_heads": 12, "num_key_value_heads": 2,
             "tie_word_embeddings": True},
    "7b": {"vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944,
           "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
           "tie_word_embeddings": False},
}
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja")


def stop_latency(session: ModelSession, tokens: int) -> float:
    """Seconds from setting Stop (from another thread, mid-stream) to generate() returning."""
    stop, seen = threading.Event(), threading.Event()
    counted: list[str] = []

    def on_token(text: str) -> None:
        counted.append(text)
        if len(counted) >= tokens:
            seen.set()

    worker = threading.Thread(target=session.generate, args=(
        QUESTION, 4 * tokens + 64, on_token, stop, GenerationOptions(min_new_tokens=4 * tokens)))
    worker.start()
    seen.wait(300)
    time.sleep(0.013)  # land somewhere inside a step, not right after a token
    started = time.perf_counter()
    stop.set()
    worker.join()
    return time.perf_counter() - started


def measure(session: ModelSession, tokens: int, repeats: int) -> dict[str, Any]:
    """Load once, warm up once, then the medians of `repeats` fixed-length generations."""
    report = session.load()
    session.generate(QUESTION, 8)  # warm-up: first-call allocations are not the steady state
    runs = [session.generate(QUESTION, tokens, options=GenerationOptions(min_new_tokens=tokens))
            for _ in range(repeats)]
    first = [r.first_token_s or 0.0 for r in runs]
    speed = [r.tokens_per_s for r in runs]
    stops = [stop_latency(session, 4) for _ in range(3)]
    return {"device": report.device, "quantization": report.quantization,
            "parameters": report.parameters, "check_s": round(report.check_s, 2),
            "load_s": round(report.load_s, 2),
            "prompt_tokens": runs[0].prompt_tokens, "new_tokens": tokens,
            "first_token_s": round(statistics.median(first), 4),
            "tokens_per_s": round(statistics.median(speed), 2),
            "tokens_per_s_spread": [round(min(speed), 2), round(max(speed), 2)],
            "stop_latency_ms": round(1000 * max(stops), 1)}


def long_prompt_first_token(session: ModelSession) -> dict[str, Any]:
    """Time to first token for a realistic propose prompt (spec, reference, two skills)."""
    kernel = ROOT / "resources" / "kernels" / "vector_add"
    context = PromptContext(description="c = a + b for float vectors",
                            spec=(kernel / "vector_add.toml").read_text(),
                            reference=(kernel / "vector_add_ref.py").read_text())
    prompt = build_prompt("propose", context, session, 64)
    answer = session.generate(prompt.messages, 4, options=GenerationOptions(min_new_tokens=4))
    return {"propose_prompt_tokens": answer.prompt_tokens,
            "propose_first_token_s": round(answer.first_token_s or 0.0, 3)}


def cpu(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The default model on the CPU in each quantization asked for."""
    rows = []
    for quantization in args.quantizations.split(","):
        session = ModelSession(default_model_folder(), device="cpu", quantization=quantization,
                               threads=args.threads)
        row = {"model": "SmolLM2-135M-Instruct", "threads": args.threads or "default",
               **measure(session, args.tokens, args.repeats)}
        row.update(long_prompt_first_token(session))
        rows.append(row)
        print(json.dumps(row), flush=True)
        session.unload()
    return rows


def random_qwen(shape: str, folder: Path) -> Path:
    """A Qwen2 of the named shape with random bf16 weights (made on the GPU), imported."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    config = Qwen2Config(max_position_embeddings=32768, bos_token_id=1, eos_token_id=2,
                         pad_token_id=2, **SHAPES[shape])
    with torch.device("cuda"):
        model = Qwen2ForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(str(folder))
    del model
    torch.cuda.empty_cache()
    for name in TOKENIZER_FILES:  # the SmolLM2 tokenizer: its ids all fit Qwen2's vocabulary
        shutil.copyfile(default_model_folder() / name, folder / name)
    import_folder(folder)
    return folder


def gpu(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Random Qwen2-shaped models on the GPU, in each quantization asked for."""
    import torch

    rows = []
    for shape in args.shapes.split(","):
        with tempfile.TemporaryDirectory(dir=args.scratch) as scratch:
            folder = random_qwen(shape, Path(scratch) / f"qwen2-{shape}-random")
            for quantization in args.quantizations.split(","):
                session = ModelSession(folder, device="cuda", quantization=quantization)
                row = {"model": f"Qwen2-{shape} shape, random weights",
                       "gpu": torch.cuda.get_device_name(), **measure(session, args.tokens,
                                                                       args.repeats),
                       "memory_gib": round(session._model.get_memory_footprint() / 2**30, 2)}
                rows.append(row)
                print(json.dumps(row), flush=True)
                session.unload()
                torch.cuda.empty_cache()
    return rows


def main() -> int:
    """Run the CPU or GPU benchmark; print one JSON line per configuration."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpu", action="store_true", help="random Qwen2 shapes on the GPU")
    parser.add_argument("--cpu", action="store_true", help="the default model on the CPU")
    parser.add_argument("--quantizations", default=None,
                        help="comma-separated (default: none,nf4,int8 on CPU; nf4,none on GPU)")
    parser.add_argument("--shapes", default="1.5b,7b", help="GPU model shapes")
    parser.add_argument("--tokens", type=int, default=64, help="new tokens per measurement")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="CPU threads for torch")
    parser.add_argument("--scratch", default=None, help="folder for the random GPU models")
    parser.add_argument("--out", type=Path, help="also write all rows to this JSON file")
    args = parser.parse_args()
    if not (args.cpu or args.gpu):
        args.cpu = True
    rows: list[dict[str, Any]] = []
    if args.cpu:
        args.quantizations = args.quantizations or "none,nf4,int8"
        rows += cpu(args)
        args.quantizations = None
    if args.gpu:
        args.quantizations = args.quantizations or "nf4,none"
        rows += gpu(args)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
