#!/usr/bin/env bash
# KernelBench's fast_p for kernels that passed elsewhere (an `eval --kernelbench` run on the CPU
# backend, say), in one GPU call without the model: each kernel is verified again on the GPU
# and timed against its problem's own forward, eager and under torch.compile, on the same
# inputs (`kernel-studio bench --against-pytorch`).
#
#   here:  bash benchmarks/kb_passed_gpu.sh collect RUN_DIR TASKS_DIR [ARM]   # -> .kb-passed/
#   call:  carry [".device-kit", ".kb-passed"]
#          source .device-kit/setup.sh && bash benchmarks/kb_passed_gpu.sh time
#   or, on the GPU machine right after an `eval --kernelbench --no-timing` there, both steps:
#          bash benchmarks/kb_passed_gpu.sh collect RUN_DIR TASKS_DIR && ... time
#
# `time` writes one JSON per problem and summary.txt under $OUT (or ./kb-passed-out): the GPU's
# verdict, the kernel's median, eager's and compile's, and the speedups with their intervals.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
KEPT="$ROOT/.kb-passed"

collect() {
    # Each task's KernelBench sample 0 in RUN_DIR (chain 1's kept kernel, as eval --kernelbench
    # chooses it: kernelbench_timing.first_chain_kernel), for the tasks in TASKS_DIR.
    [ $# -ge 2 ] && [ -d "$1" ] && [ -d "$2" ] || {
        echo "collect needs the eval's run folder and the task folder it evaluated" >&2; exit 2; }
    local run=$1 tasks=$2 arm=${3:-skills-on+examples-off}
    rm -rf "$KEPT" && mkdir -p "$KEPT"
    grep -qx '/.kb-passed/' "$ROOT/.git/info/exclude" 2>/dev/null || echo '/.kb-passed/' >> "$ROOT/.git/info/exclude"
    # The project's environment here; on the GPU machine (no .venv) the kit's python3.
    local python=.venv/bin/python
    [ -x "$ROOT/$python" ] || python=python3
    (cd "$ROOT" && "$python" - "$run" "$tasks" "$arm" "$KEPT") <<'EOF'
import shutil, sys
from pathlib import Path
from app.assist.evaluation.kernelbench_timing import first_chain_kernel
from app.assist.tasks.suite import load_task
run, tasks, arm, kept = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
for spec in sorted(tasks.glob("*/*.toml")):
    task = load_task(spec)
    kernel = first_chain_kernel(run, task, arm)
    if kernel is not None:
        shutil.copytree(kernel.parent, kept / task.name)
        print(f"{task.name}: {kernel.parent.name}")
EOF
    du -sh "$KEPT"
}

time_all() {
    local out=${OUT:-$ROOT/kb-passed-out}
    mkdir -p "$out"
    for folder in "$KEPT"/*/; do
        local name spec
        name=$(basename "$folder")
        spec="$folder$name.toml"
        timeout "${BENCH_SECONDS:-180}" python3 -m app bench "$spec" --against-pytorch ${NO_COMPILE:+--no-compile} --json --budget-ms 1000 \
            > "$out/$name.json" 2> "$out/$name.log" || echo "$name: bench exit $?" >> "$out/summary.txt"
    done
    python3 - "$out" <<'EOF' | tee -a "$out/summary.txt"
import json, sys
from pathlib import Path
for path in sorted(Path(sys.argv[1]).glob("*.json")):
    try:
        data = json.loads(path.read_text())
    except ValueError:
        print(f"{path.stem}: no result (see {path.stem}.log)")
        continue
    bench = data.get("bench", {})
    speeds = {s["baseline"]: s for s in data.get("speedups", [])}
    said = ", ".join(f"{b} {s['speedup']:.2f}x [{s['low']:.2f}, {s['high']:.2f}]"
                     for b, s in speeds.items() if s.get("speedup"))
    print(f"{path.stem}: {bench.get('status')} {said or data.get('pytorch', {}).get('message', '')}")
EOF
}

case "${1:-}" in
    collect) shift; collect "$@" ;;
    time) time_all ;;
    *) echo "usage: bash benchmarks/kb_passed_gpu.sh collect RUN_DIR TASKS_DIR [ARM] | time" >&2; exit 2 ;;
esac
