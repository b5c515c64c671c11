#!/usr/bin/env bash
# `kernel-studio eval` on the lent GPU machine with the default model (SmolLM2-135M-Instruct).
#
# The model does not fit one device call: its GGUF is 98 MB and a call carries at most 64 MiB,
# the checkout (25 MB, the default adapter included) counted. So it travels in three parts, in
# calls made one right after the other (the machine stays warm for 30 s after a call; /tmp
# survives while it is warm):
#
#   here, once:  bash benchmarks/eval_gpu.sh stage
#   call 1:      run(command="bash benchmarks/eval_gpu.sh receive", carry=[".gpu-eval/a"])
#   call 2:      run(command="bash benchmarks/eval_gpu.sh receive", carry=[".gpu-eval/a2"])
#   call 3:      run(command="bash benchmarks/eval_gpu.sh run", carry=[".gpu-eval/b"],
#                    timeout_s=600)
#
# `run` joins and checks the parts (SHA-256), installs what the machine lacks (pycuda and its
# needs, bubblewrap, gguf: from .gpu-eval/b, no index), converts the GGUF into a checked model
# folder (kernel-studio model import), then runs
#   kernel-studio eval --split dev -k 4 --rounds 3 --skills both --quantization none
# (extra arguments after `run` replace those flags; with KB_PROBLEMS=DIR the KernelBench problem
# files in DIR are imported first, into /tmp/ks-gpu-eval/kb-tasks, for `--kernelbench` there) and writes $OUT/eval.json, $OUT/report.html
# and $OUT/eval.log. A --time-limit keeps the run inside the call's 10 minutes: what was decided
# by then is reported (the result then says so).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
STAGE="$ROOT/.gpu-eval"
KIT=${KIT:-/work/shared/device}
WORK=/tmp/ks-gpu-eval
GGUF_NAME=SmolLM2-135M-Instruct.Q4_1.gguf
# 38 MiB parts: with the 24 MB checkout each call stays under the 64 MiB a call carries, and
# the last part has room for bitsandbytes (7 MB; teaching needs it) and the data.
SPLIT_BYTES=$((38 * 1024 * 1024))

stage() {
    # Runs here: the parts, the checksum, the wheels (bitsandbytes for NF4 and teaching).
    local gguf
    gguf=$(cd "$ROOT" && .venv/bin/python -c "from app.assist.model.convert import find_default_gguf; print(find_default_gguf())")
    rm -rf "$STAGE" && mkdir -p "$STAGE/a" "$STAGE/a2" "$STAGE/b"
    dd if="$gguf" of="$STAGE/a/model.part-a" bs="$SPLIT_BYTES" count=1 status=none
    dd if="$gguf" of="$STAGE/a2/model.part-a2" bs="$SPLIT_BYTES" skip=1 count=1 status=none
    dd if="$gguf" of="$STAGE/b/model.part-b" bs="$SPLIT_BYTES" skip=2 status=none
    (cd "$(dirname "$gguf")" && sha256sum "$GGUF_NAME") > "$STAGE/b/model.sha256"
    find "$KIT/wheels" -name '*.whl' -exec cp {} "$STAGE/b/" \;
    cp "$KIT"/debs/*.deb "$STAGE/b/"
    cp /opt/pypi/files/gguf-*-py3-none-any.whl "$STAGE/b/"
    # The kit predates the codec: msgspec for the machine's Python 3.12.
    "$ROOT/.venv/bin/pip" download -q "msgspec==$("$ROOT/.venv/bin/python" -c 'import msgspec; print(msgspec.__version__)')" \
        --python-version 3.12 --only-binary=:all: --no-deps -d "$STAGE/b/" \
        --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64
    grep -qx '/.gpu-eval/' "$ROOT/.git/info/exclude" 2>/dev/null || echo '/.gpu-eval/' >> "$ROOT/.git/info/exclude"
    du -sh "$STAGE/a" "$STAGE/a2" "$STAGE/b"
    echo 'call 1: run(command="bash benchmarks/eval_gpu.sh receive", carry=[".gpu-eval/a"])'
    echo 'call 2: run(command="bash benchmarks/eval_gpu.sh receive", carry=[".gpu-eval/a2"])'
    echo 'call 3: run(command="bash benchmarks/eval_gpu.sh run", carry=[".gpu-eval/b"], timeout_s=600)'
}

receive() {
    # Calls 1 and 2, on the GPU machine: keep the part carried where the last call finds it.
    mkdir -p "$WORK"
    local part
    for part in "$STAGE"/a/model.part-a "$STAGE"/a2/model.part-a2; do
        [ -f "$part" ] && cp "$part" "$WORK/" && echo "received $(basename "$part") ($(du -h "$part" | cut -f1))"
    done
    ls "$WORK"/model.part-* >/dev/null 2>&1 || { echo "no part of the model was carried" >&2; exit 2; }
}

setup() {
    # Call 2: the model and the tools, in /tmp; nothing is fetched.
    if [ ! -f "$WORK/$GGUF_NAME" ]; then
        local part
        for part in a a2; do
            [ -f "$WORK/model.part-$part" ] || { echo "part $part of the model is missing: the receive calls must come just before" >&2; exit 3; }
        done
        cat "$WORK/model.part-a" "$WORK/model.part-a2" "$STAGE/b/model.part-b" > "$WORK/$GGUF_NAME"
        rm -f "$WORK"/model.part-*
    fi
    (cd "$WORK" && sha256sum -c "$STAGE/b/model.sha256")
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site \
        "$STAGE"/b/*.whl
    mkdir -p /tmp/kitroot && for deb in "$STAGE"/b/*.deb; do dpkg -x "$deb" /tmp/kitroot; done
    export PATH="/tmp/kitroot/usr/bin:$PATH:/usr/local/cuda/bin"
    export PYTHONPATH="$ROOT:/tmp/site${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
    export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1
    export KERNEL_STUDIO_MODELS=/tmp/ks-models KERNEL_STUDIO_DATA=/tmp/ks-data
    # Once per machine: a later call keeps the folder (and any adapter trained into it).
    [ -f /tmp/ks-models/smollm2-135m-instruct/manifest.json ] ||
        python3 -m app model import "$WORK/$GGUF_NAME" --name smollm2-135m-instruct --force
}

import_problems() {
    # KB_PROBLEMS=DIR: every KernelBench problem file in DIR imported into $WORK/kb-tasks first
    # (then pass `--kernelbench $WORK/kb-tasks` to run); refusals are listed in the log.
    rm -rf "$WORK/kb-tasks" && mkdir -p "$WORK/kb-tasks"
    for problem in "$1"/*.py; do
        timeout "${IMPORT_SECONDS:-120}" python3 -m app import kernelbench "$problem" --out "$WORK/kb-tasks" >> "$2" 2>&1 ||
            echo "refused: $problem" >> "$2"
    done
    echo "imported $(ls "$WORK/kb-tasks" | wc -l) of $(ls "$1"/*.py | wc -l) problems"
}

run_eval() {
    local out=${OUT:-/tmp/ks-out}
    mkdir -p "$out"
    # Not in a pipe: setup's variables must reach the eval below.
    setup > "$out/setup.log" 2>&1 || { tail -n 30 "$out/setup.log"; return 3; }
    grep -v "GGUF tensors" "$out/setup.log" | tail -n 5
    [ -z "${KB_PROBLEMS:-}" ] || import_problems "$KB_PROBLEMS" "$out/import.log"
    local args=("$@")
    if [ ${#args[@]} -eq 0 ]; then
        args=(--split dev -k 4 --rounds 3 --skills both --time-limit 480)
    fi
    nvidia-smi -L | tee -a "$out/setup.log"
    # GPU memory and load every 15 s, for the record.
    nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu --format=csv -l 15 \
        > "$out/gpu.log" 2>&1 &
    local monitor=$!
    set +e
    python3 -m app eval "${args[@]}" --model /tmp/ks-models/smollm2-135m-instruct \
        --quantization none --out "$WORK/run" --report "$out/report.html" --json \
        > "$out/eval.json" 2> "$out/eval.log"
    local code=$?
    set -e
    kill "$monitor" 2>/dev/null || true
    tail -n 25 "$out/eval.log"
    python3 - "$out/eval.json" <<'EOF'
import json, sys
data = json.load(open(sys.argv[1]))
for arm, s in data["summaries"].items():
    print(f"{arm}: tasks {s['tasks']} pass@1 {s['pass_at_1']} pass@K {s['pass_at_k']} "
          f"compile errors {s['compile_error_rate']} attempts {s['attempts']}")
for item in data["lifts"]:
    print(f"lift {item['treatment']} over {item['control']}: {item['mean']} "
          f"[{item['low']}, {item['high']}] over {item['tasks']} tasks")
print(f"{data['seconds']} s, stopped={data['stopped']}, notes={data['notes']}")
EOF
    tar -C "$WORK" -czf "$out/attempts.tar.gz" run 2>/dev/null || true
    echo "eval exit code $code"
    return $code
}

# Sourced (benchmarks/teach_gpu.sh does), it only defines the functions above.
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0

case "${1:-}" in
    stage) stage ;;
    receive) receive ;;
    run) shift; run_eval "$@" ;;
    *) echo "usage: bash benchmarks/eval_gpu.sh stage | receive | run [eval arguments]" >&2; exit 2 ;;
esac
