#!/usr/bin/env bash
# The assistant's GPU paths on the lent GPU machine (issues 18 and 28):
#   kernels:     source .device-kit/setup.sh && bash benchmarks/speed_gpu.sh kernels   (about 4
#                minutes: the nf4_gemv kernels verified, benched at a 7B layer's four shapes at
#                1 and 8 rows, against bitsandbytes (benchmarks/nf4_gemv_vs_bnb.py) and against
#                each other's build settings (benchmarks/nf4_gemv_sweep.py))
#   tests:       ... speed_gpu.sh tests   (the GPU tests of tests/assist/model, about 3 minutes)
#   decode:      ... speed_gpu.sh decode  (the assistant bench below, about 6 minutes)
# (no argument: all three, more than one call's 10 minutes.)
#   here, once:  bash benchmarks/speed_gpu.sh stage    (the tokenizer into .device-kit/tokenizer)
#                bash benchmarks/speed_gpu.sh slim     (when the kit and the checkout together pass
#                the 64 MiB a call carries: .gpu-slim/, then source .gpu-slim/setup.sh instead)
#   run:         source .device-kit/setup.sh && bash benchmarks/speed_gpu.sh   (carry .device-kit)
#   profile:     source .device-kit/setup.sh && bash benchmarks/speed_gpu.sh profile   (a second
#                call of about five minutes: benchmarks/decode_profile.py, where a step's time
#                goes in bf16, NF4 and NF4 through nf4_gemv, and the assistant bench with
#                KERNEL_STUDIO_NF4_KERNEL=on)
# Writes into $OUT (or ./gpu-out): env.txt (versions), fastdecode_tests.txt (the greedy-equality
# and Stop tests on the GPU), nf4_gemv.txt (verify and bench of the NF4 template on pycuda),
# assistant_bench.txt/.json (7B shape, NF4 and bf16, CUDA-graph decoding against generate(),
# in turns, 2 rounds: tokens/s with spread, batch-8 throughput in NF4, the 2.4k-token propose
# prompt's first token, Stop latency, memory) and summary.txt. Every step has its own time limit.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

if [ "${1:-}" = "slim" ]; then
    # The kit and this checkout together pass the 64 MiB a call may carry: a slim copy keeps
    # bitsandbytes' CUDA 13 library only (the machine's torch is built for CUDA 13).
    # Then: carry [".gpu-slim"] and begin with `source .gpu-slim/setup.sh && ...`.
    rm -rf .gpu-slim && mkdir -p .gpu-slim && cp -r .device-kit/tokenizer .device-kit/*.deb .gpu-slim/ 2>/dev/null
    cp .device-kit/wheels/*.whl .device-kit/*.whl .gpu-slim/ 2>/dev/null
    cp .device-kit/debs/bubblewrap*.deb .gpu-slim/ 2>/dev/null
    for wheel in .gpu-slim/bitsandbytes-*.whl; do
        zip -q -d "$wheel" 'bitsandbytes/libbitsandbytes_rocm*' 'bitsandbytes/libbitsandbytes_cuda11*' \
            'bitsandbytes/libbitsandbytes_cuda12*' || true
    done
    cat > .gpu-slim/setup.sh <<'SETUP'
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .gpu-slim/*.whl >/dev/null 2>&1
mkdir -p /tmp/kitroot && dpkg -x .gpu-slim/bubblewrap*.deb /tmp/kitroot
export PATH=/tmp/kitroot/usr/bin:$PATH:/usr/local/cuda/bin PYTHONPATH=$PWD:/tmp/site HF_HUB_OFFLINE=1
export KERNEL_STUDIO_TOKENIZER_DIR=$PWD/.gpu-slim/tokenizer
SETUP
    grep -qx '/.gpu-slim/' .git/info/exclude || echo '/.gpu-slim/' >> .git/info/exclude
    du -sh .gpu-slim
    exit 0
fi

if [ "${1:-}" = "stage" ]; then
    src=$(.venv/bin/python -c "from app.assist.model.convert import default_model_folder; print(default_model_folder())")
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

if [ "${1:-}" = "profile" ]; then
    stamp "decode profile (7B shape)"
    timeout 300 python3 benchmarks/decode_profile.py --profile > "$out/decode_profile.txt" 2>&1
    echo "exit $?" >> "$out/decode_profile.txt"
    grep -vE '"what": "kernels"' "$out/decode_profile.txt" | tail -40 | tee -a "$out/summary.txt"
    stamp "assistant bench, NF4 through nf4_gemv"
    KERNEL_STUDIO_NF4_KERNEL=on timeout 200 python3 benchmarks/assistant_bench.py --gpu \
        --shapes 7b --quantizations nf4 --tokens 64 --repeats 2 --decode graph --batch 8 \
        --out "$out/assistant_bench_kernel.json" > "$out/assistant_bench_kernel.txt" 2>&1
    echo "exit $?" >> "$out/assistant_bench_kernel.txt"
    grep -E "^\{|fastdecode:|exit" "$out/assistant_bench_kernel.txt" | tee -a "$out/summary.txt"
    stamp "done"
    exit 0
fi

stamp "env"
{
    python3 -c "import sys, torch, transformers; print('python', sys.version.split()[0], 'torch', torch.__version__, 'transformers', transformers.__version__, 'cuda', torch.version.cuda)"
    python3 -c "import bitsandbytes; print('bitsandbytes', bitsandbytes.__version__)"
    nvidia-smi --query-gpu=name,memory.used,memory.total,clocks.sm,clocks.mem --format=csv
    ls "$KERNEL_STUDIO_TOKENIZER_DIR"
    ls /usr/bin/python3* /usr/local/bin/python3* 2>/dev/null | tr '\n' ' '; echo
    command -v g++ gcc cc || echo "no C++ compiler"
    df -h /dev/shm /tmp
} > "$out/env.txt" 2>&1
cat "$out/env.txt"

if [ "${1:-}" = "kernels" ] || [ "${1:-}" = "" ]; then
    stamp "nf4_gemv: verify both kernels, bench the tensor-core one against the CUDA-core one"
    dir=resources/kernels/nf4_gemv
    {
        for spec in $dir/nf4_gemv.toml $dir/nf4_gemv_simt.toml $dir/nf4_gemv_ring.toml; do
            timeout 60 python3 -m app verify --backend pycuda --random-seeds 2 "$spec"; echo "verify $spec exit $?"
        done
        # The four projections of a 7B layer (Qwen2-7B), at 1 and 8 rows.
        for shape in N=3584,K=3584 N=512,K=3584 N=18944,K=3584 N=3584,K=18944; do
            for m in 1 8; do
                timeout 40 python3 -m app bench --backend pycuda --skip-verify --budget-ms 800 \
                    --case "M=$m,$shape" "$dir/nf4_gemv.toml" --vs "$dir/nf4_gemv_simt.toml"
                echo "bench M=$m,$shape exit $?"
            done
        done
    } > "$out/nf4_gemv.txt" 2>&1
    grep -E "passed|failed|exit|GB/s|median|ratio|faster|slower" "$out/nf4_gemv.txt" | tail -60 | tee -a "$out/summary.txt"
    ceiling=$(grep -oE "of the [0-9]+ GB/s copy ceiling" "$out/nf4_gemv.txt" | head -1 | grep -oE "[0-9]+")
    stamp "nf4_gemv against bitsandbytes (ceiling ${ceiling:-unknown} GB/s)"
    timeout 120 python3 benchmarks/nf4_gemv_vs_bnb.py ${ceiling:+--ceiling $ceiling} \
        --json "$out/nf4_gemv_vs_bnb.json" > "$out/nf4_gemv_vs_bnb.txt" 2>&1
    echo "exit $?" >> "$out/nf4_gemv_vs_bnb.txt"
    tail -12 "$out/nf4_gemv_vs_bnb.txt" | tee -a "$out/summary.txt"
    stamp "nf4_gemv's build settings and the ring against each other"
    timeout 150 python3 benchmarks/nf4_gemv_sweep.py ${ceiling:+--ceiling $ceiling} \
        --json "$out/nf4_gemv_sweep.json" > "$out/nf4_gemv_sweep.txt" 2>&1
    echo "exit $?" >> "$out/nf4_gemv_sweep.txt"
    grep -v '^{"setting"' "$out/nf4_gemv_sweep.txt" | tail -6 | tee -a "$out/summary.txt"
fi

if [ "${1:-}" = "tests" ] || [ "${1:-}" = "" ]; then
    stamp "the assistant's GPU tests (NF4 layers, fast decoding, Stop)"
    timeout 240 python3 -m pytest -m gpu -q -s -p no:cacheprovider -rfEs tests/assist/model \
        > "$out/assist_model_tests.txt" 2>&1
    echo "exit $?" >> "$out/assist_model_tests.txt"
    grep -E "passed|failed|error|tokens/s|latency|units|fastdecode:|^E " "$out/assist_model_tests.txt" | tail -40 | tee -a "$out/summary.txt"
fi
[ "${1:-}" = "kernels" ] || [ "${1:-}" = "tests" ] && { stamp "done"; exit 0; }

stamp "assistant bench (7B shape)"
scratch=/tmp
shm_free=$(df --output=avail -k /dev/shm 2>/dev/null | tail -1 | tr -d ' ')
if [ "${shm_free:-0}" -gt 41943040 ]; then scratch=/dev/shm; fi   # 40 GiB free: RAM beats disk
for kernel in off on; do
    KERNEL_STUDIO_NF4_KERNEL=$kernel timeout 150 python3 benchmarks/assistant_bench.py --gpu --shapes 7b \
        --quantizations nf4 --tokens 64 --repeats 2 --decode graph --batch 8 --scratch "$scratch" \
        --out "$out/assistant_bench_nf4_kernel_$kernel.json" >> "$out/assistant_bench.txt" 2>&1
    echo "nf4_gemv $kernel: exit $?" >> "$out/assistant_bench.txt"
done
timeout 120 python3 benchmarks/assistant_bench.py --gpu --shapes 7b --quantizations none \
    --tokens 64 --repeats 2 --decode graph --scratch "$scratch" \
    --out "$out/assistant_bench_bf16.json" >> "$out/assistant_bench.txt" 2>&1
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
