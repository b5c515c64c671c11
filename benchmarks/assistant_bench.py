"""Time to first token, decode speed, load time and stop latency of the local assistant.

CPU: the real default model (SmolLM2-135M-Instruct) in each quantization, to choose the CPU
default (app/assist/model/quant.py: CPU_DEFAULT_QUANTIZATION). GPU: randomly initialised
Qwen2-shaped
models (1.5B and 7B shapes; no weights can be fetched there) in NF4 and bf16, loaded through the
real path (import with manifest, checks, ModelSession). Reference point (issue 7): plain
`generate` gave about 27 tokens/s in NF4 and 17 in bf16 for the 7B shape on an H200.

    python benchmarks/assistant_bench.py --cpu [--quantizations none,nf4,int8] [--threads 1,2]
    python benchmarks/assistant_bench.py --gpu [--shapes 1.5b,7b] [--quantizations nf4,none]
        [--decode graph,generate] [--batch 8]

--decode compares decoding paths (app/assist/model/fastdecode.py: graph = static KV cache and CUDA
graphs, static = static cache with eager steps, generate = transformers' generate()) on one
loaded model, in turns; --batch N adds the throughput of N answers generated as one batch.
"""

from __future__ import annotations

import argparse
import json
import os
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

from app.isolation import offline  # noqa: E402

offline.enforce()

import torch  # noqa: E402

from app.assist import GenerationOptions, ModelSession  # noqa: E402
from app.assist.model.batch import BatchModel, Request  # noqa: E402
from app.assist.model.convert import default_model_folder, import_folder  # noqa: E402
from app.assist.model.session import cpu_threads  # noqa: E402
from app.assist.prompting.prompts import PromptContext, build_prompt  # noqa: E402

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


def load(session: ModelSession) -> dict[str, Any]:
    """Load and warm up once (first-call allocations are not the steady state)."""
    report = session.load()
    session.generate(QUESTION, 8)
    return {"device": report.device, "quantization": report.quantization,
            "parameters": report.parameters, "check_s": round(report.check_s, 2),
            "load_s": round(report.load_s, 2)}


def batch_round(session: ModelSession, tokens: int, rows: int) -> float:
    """Tokens per second of `rows` answers of up to `tokens` tokens in one batch (each row its
    own seed), the prefill excluded."""
    if rows <= 1 or not isinstance(session, BatchModel):
        return 0.0
    requests = [Request(QUESTION, "", GenerationOptions(temperature=0.7, seed=row), tokens)
                for row in range(rows)]
    result = session.generate_batch(requests)
    first = min(a.first_token_s or 0.0 for a in result.answers)
    decode = result.seconds - first
    return sum(max(a.new_tokens - 1, 0) for a in result.answers) / decode if decode > 0 else 0.0


def one_round(session: ModelSession, tokens: int, batch: int = 0) -> dict[str, float]:
    """One sample of each figure: a fixed-length answer, a long-prompt first token, a stop,
    and (with batch > 1) a batch's throughput."""
    if session.report and session.report.device == "cpu":  # threads are per process: set ours
        torch.set_num_threads(session.threads or cpu_threads())
    answer = session.generate(QUESTION, tokens, options=GenerationOptions(min_new_tokens=tokens))
    kernel = ROOT / "resources" / "kernels" / "vector_add"
    context = PromptContext(description="c = a + b for float vectors",
                            spec=(kernel / "vector_add.toml").read_text(),
                            reference=(kernel / "vector_add_ref.py").read_text())
    prompt = build_prompt("propose", context, session, 64)
    long = session.generate(prompt.messages, 2, options=GenerationOptions(min_new_tokens=2))
    return {"first_token_s": answer.first_token_s or 0.0, "tokens_per_s": answer.tokens_per_s,
            "prompt_tokens": answer.prompt_tokens, "propose_prompt_tokens": long.prompt_tokens,
            "propose_first_token_s": long.first_token_s or 0.0,
            "stop_latency_ms": 1000 * stop_latency(session, 4),
            "batch_tokens_per_s": batch_round(session, tokens, batch)}


def summarise(info: dict[str, Any], rounds: list[dict[str, float]]) -> dict[str, Any]:
    """Medians (and the spread of the decode speed) over the rounds."""
    def median(key: str) -> float:
        return round(statistics.median(r[key] for r in rounds), 3)

    speeds = [r["tokens_per_s"] for r in rounds]
    batch = [r["batch_tokens_per_s"] for r in rounds if r.get("batch_tokens_per_s")]
    extra = {"batch_tokens_per_s": median("batch_tokens_per_s"),
             "batch_tokens_per_s_spread": [round(min(batch), 1), round(max(batch), 1)]
             } if batch else {}
    return {**info, "prompt_tokens": int(rounds[0]["prompt_tokens"]), **extra,
            "first_token_s": median("first_token_s"), "tokens_per_s": median("tokens_per_s"),
            "tokens_per_s_spread": [round(min(speeds), 2), round(max(speeds), 2)],
            "propose_prompt_tokens": int(rounds[0]["propose_prompt_tokens"]),
            "propose_first_token_s": median("propose_first_token_s"),
            "stop_latency_ms_max": round(max(r["stop_latency_ms"] for r in rounds), 1),
            "rounds": len(rounds), "load_average": [round(x, 2) for x in os.getloadavg()]}


def use_decode(session: ModelSession, mode: str | None) -> None:
    """Switch a loaded session's decoding path (None keeps its own)."""
    if mode is not None:
        session.decoders.requested = mode


def interleaved(sessions: dict[str, ModelSession], tokens: int, repeats: int,
                modes: dict[str, str | None] | None = None,
                batch: int = 0) -> dict[str, dict[str, Any]]:
    """Load every session, then measure them in turns, round after round, so that load from
    other work on the machine falls on all of them alike. `modes` gives a variant's decoding
    path (variants may share one loaded session)."""
    modes = modes or {}
    infos = {}
    for name, session in sessions.items():
        use_decode(session, modes.get(name))
        infos[name] = {**load(session), "decode": modes.get(name) or "auto"}
    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in sessions}
    for _ in range(repeats):
        for name, session in sessions.items():
            use_decode(session, modes.get(name))
            rounds[name].append(one_round(session, tokens, batch))
    return {name: summarise(infos[name], rounds[name]) for name in sessions}


def cpu(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The default model on the CPU in each quantization (and thread count) asked for."""
    sessions = {}
    for threads in args.threads.split(","):
        for quantization in args.quantizations.split(","):
            count = int(threads) if threads != "auto" else None
            sessions[f"{quantization}/{threads}"] = ModelSession(
                default_model_folder(), device="cpu", quantization=quantization, threads=count)
    rows = []
    for name, row in interleaved(sessions, args.tokens, args.repeats).items():
        row = {"model": "SmolLM2-135M-Instruct", "threads": name.split("/")[1], **row}
        rows.append(row)
        print(json.dumps(row), flush=True)
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
    # The SmolLM2 tokenizer (its ids all fit Qwen2's vocabulary), from the prepared model or
    # from KERNEL_STUDIO_TOKENIZER_DIR on a GPU machine where the model folder does not travel.
    tokenizer = Path(os.environ.get("KERNEL_STUDIO_TOKENIZER_DIR") or default_model_folder())
    for name in TOKENIZER_FILES:
        shutil.copyfile(tokenizer / name, folder / name)
    import_folder(folder)
    return folder


def gpu(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Random Qwen2-shaped models on the GPU, in each quantization asked for."""
    rows = []
    for shape in args.shapes.split(","):
        with tempfile.TemporaryDirectory(dir=args.scratch) as scratch:
            folder = random_qwen(shape, Path(scratch) / f"qwen2-{shape}-random")
            for quantization in args.quantizations.split(","):
                rows += gpu_variants(folder, shape, quantization, args)
    return rows


def gpu_variants(folder: Path, shape: str, quantization: str,
                 args: argparse.Namespace) -> list[dict[str, Any]]:
    """One loaded model, measured in each decoding path asked for, in turns."""
    session = BatchModel(folder, device="cuda", quantization=quantization)
    names = [f"{quantization}/{mode}" for mode in args.decode.split(",")]
    modes: dict[str, str | None] = {n: n.split("/")[1] for n in names}
    torch.cuda.reset_peak_memory_stats()
    results = interleaved(dict.fromkeys(names, session), args.tokens, args.repeats, modes,
                          args.batch if quantization in args.batch_quantizations else 0)
    rows = []
    for name in names:
        row = {"model": f"Qwen2-{shape} shape, random weights",
               "gpu": torch.cuda.get_device_name(), **results[name],
               "memory_gib": round(session._model.get_memory_footprint() / 2**30, 2),
               "peak_allocated_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2)}
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
    parser.add_argument("--threads", default="auto",
                        help="CPU threads, comma-separated to compare (1,2); auto: cores - 1")
    parser.add_argument("--scratch", default=None, help="folder for the random GPU models")
    parser.add_argument("--decode", default="auto",
                        help="GPU decoding paths to compare, comma-separated: graph, static, "
                             "generate, auto (app/assist/model/fastdecode.py)")
    parser.add_argument("--batch", type=int, default=0,
                        help="GPU: also measure N answers as one batch (e.g. 8)")
    parser.add_argument("--batch-quantizations", default="nf4",
                        help="the quantizations that get the --batch figure")
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
