#!/usr/bin/env bash
# The assistant's decoding speed on the lent GPU machine (issue 18), in one call of about five
# minutes:
#   here, once:  bash benchmarks/speed_gpu.sh stage    (the tokenizer into .device-kit/tokenizer)
#   run:         source .device-kit/setup.sh && bash benchmarks/speed_gpu.sh   (carry .device-kit)
# Writes into $OUT (or ./gpu-out): env.txt (versions), fastdecode_tests.txt (the greedy-equality
# and Stop tests on the GPU), nf4_gemv.txt (verify and bench of the NF4 template on pycuda),
# assistant_bench.txt/.json (7B shape, NF4 and bf16, CUDA-graph decoding against generate(),
# in turns, 2 rounds: tokens/s with spread, batch-8 throughput in NF4, the 2.4k-token propose
# prompt's first token, Stop latency, memory) and summary.txt. Every step has its own time limit.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

if [ "${1:-}" = "stage" ]; then
    src=$(.venv/bin/python -c "from app.assist.convert import default_model_folder; print(default_model_folder())")
    mkdir -p .device-kit/tokenizer
    for f in tokenizer.json tokenizer_config.json chat_template.jinja; do cp "$src/$f" .device-kit/tokenizer/; done
    echo "staged the tokenizer from $src into .device-kit/tokenizer"
    exit 0
fi

out=${OUT:-gpu-out}
mkdir -p "$out"
export KERNEL_STUDIO_TOKENIZER_DIR=${KERNEL_STUDIO_TOKENIZER_DIR:-$ROOT/.device-kit/tokenizer}
started=$(date +%s)
stamp() { echo "[$(( $(date +%s) - started )) s] $*" | tee -a "$out/summary.txt"; }

stamp "env"
{
    python3 -c "import sys, torch, transformers; print('python', sys.version.split()[0], 'torch', torch.__version__, 'transformers', transformers.__version__, 'cuda', torch.version.cuda)"
    python3 -c "import bitsandbytes; print('bitsandbytes', bitsandbytes.__version__)"
    nvidia-smi --query-gpu=name,memory.used,memory.total,clocks.sm,clocks.mem --format=csv
    ls "$KERNEL_STUDIO_TOKENIZER_DIR"
    df -h /dev/shm /tmp
} > "$out/env.txt" 2>&1
cat "$out/env.txt"

stamp "fastdecode GPU tests"
timeout 80 python3 -m pytest -m gpu -q -s -p no:cacheprovider -rfEs \
    tests/assist/test_fastdecode_gpu.py > "$out/fastdecode_tests.txt" 2>&1
echo "exit $?" >> "$out/fastdecode_tests.txt"
grep -E "passed|failed|error|tokens/s|latency|fastdecode:" "$out/fastdecode_tests.txt" | tail -12 | tee -a "$out/summary.txt"

stamp "nf4_gemv verify and bench (pycuda)"
spec=resources/kernels/nf4_gemv/nf4_gemv.toml
{
    timeout 40 python3 -m app verify --backend pycuda --random-seeds 2 "$spec"; echo "verify exit $?"
    timeout 30 python3 -m app bench --backend pycuda --skip-verify "$spec"; echo "bench M=1 exit $?"
    timeout 30 python3 -m app bench --backend pycuda --skip-verify --case M=8,N=18944,K=3584 "$spec"; echo "bench M=8 exit $?"
    timeout 30 python3 -m app bench --backend pycuda --skip-verify --case M=1,N=3584,K=18944 "$spec"; echo "bench down-proj M=1 exit $?"
} > "$out/nf4_gemv.txt" 2>&1
grep -E "passed|failed|exit|GB/s|median" "$out/nf4_gemv.txt" | tail -14 | tee -a "$out/summary.txt"

stamp "assistant bench (7B shape)"
scratch=/tmp
shm_free=$(df --output=avail -k /dev/shm 2>/dev/null | tail -1 | tr -d ' ')
if [ "${shm_free:-0}" -gt 41943040 ]; then scratch=/dev/shm; fi   # 40 GiB free: RAM beats disk
timeout 185 python3 benchmarks/assistant_bench.py --gpu --shapes 7b --quantizations nf4,none \
    --tokens 64 --repeats 2 --decode graph,generate --batch 8 --scratch "$scratch" \
    --out "$out/assistant_bench.json" > "$out/assistant_bench.txt" 2>&1
echo "exit $?" >> "$out/assistant_bench.txt"
python3 - "$out/assistant_bench.txt" <<'PY' | tee -a "$out/summary.txt"
import json, sys
keys = ("quantization", "decode", "tokens_per_s", "tokens_per_s_spread", "batch_tokens_per_s",
        "batch_tokens_per_s_spread", "propose_prompt_tokens", "propose_first_token_s",
        "first_token_s", "stop_latency_ms_max", "memory_gib", "peak_allocated_gib")
for line in open(sys.argv[1]):
    if line.startswith("{"):
        row = json.loads(line)
        print(" ".join(f"{k}={row.get(k)}" for k in keys))
    elif "fastdecode:" in line or "Error" in line or line.startswith("exit"):
        print(line.rstrip())
PY
stamp "done"
