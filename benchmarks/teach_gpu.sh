#!/usr/bin/env bash
# The default adapter's recipe on the lent GPU machine (`make teach-default` prints these steps):
# verified training data, the held-out eval of the base model, QLoRA training, the held-out eval
# with the adapter, and the keep-only-if-it-helps judgement. What it needs does not fit one call
# (a call carries at most 64 MiB with the 24 MB checkout: the model is 98 MB), so the model
# travels in three parts (eval_gpu.sh stage: 38 MiB, 38 MiB, and the rest with the wheels,
# bitsandbytes included) in calls made one right after the other; the machine keeps /tmp while
# it stays warm (30 s after a call).
#
#   here, once:  bash ../shared/device/stage.sh && bash benchmarks/eval_gpu.sh stage
#   call 1:  carry [".device-kit"]   (the wheels, bitsandbytes included)
#            source .device-kit/setup.sh && bash benchmarks/teach_gpu.sh data
#            Or leave call 1 out: `kernel-studio teach data` here (CPU backend; Ctrl+C keeps
#            what passed), gzip its train.jsonl into .gpu-eval/b/local-<name>.jsonl.gz, and the
#            train step reads it (with call 1's data too, when both are there).
#   call 2:  carry [".gpu-eval/a"]   bash benchmarks/eval_gpu.sh receive
#   call 2b: carry [".gpu-eval/a2"]  bash benchmarks/eval_gpu.sh receive
#   call 3:  carry [".gpu-eval/b"]   (the last part; with ".kb-tasks" for call 4)
#            bash benchmarks/teach_gpu.sh train
#            (MODEL_TWICE=1: the examples asked as a Model are taught twice;
#            DATA_BESIDE=1: call 1's data step runs here beside the base model's eval;
#            a before.json in .gpu-eval/b, the base model's eval from an earlier call with the
#            same EVAL_ARGS, is used instead of running that eval again)
#   call 4:  no carry (KB_TASKS: folders made by `import kernelbench`, carried in call 3)
#            [KB_TASKS=DIR] bash benchmarks/teach_gpu.sh judge
#            with KB_TASKS, the judge goes on to `kernelbench`: the new adapter and the shipped
#            one (which `model import` installed as "default") on those problems, and the
#            shipped one on the held-out split, so that the two adapters can be compared;
#            KB_ADAPTERS=taught SHIPPED_HELDOUT=0 keeps to the new adapter, and a call 5,
#            KB_ADAPTERS=default bash benchmarks/teach_gpu.sh kernelbench, does the rest (one
#            call's 10 minutes do not hold both at KB_SECONDS=300)
#
#   Results: a call brings back at most 8 files of 16 MiB each (the adapter's weights are 19.6
#   MB), so end each command with: tar czf - -C "$OUT_DIR" . | split -b 15m - "$OUT/callN.tgz."
#   (OUT pointed at $OUT_DIR for the step), and join the parts here with cat.
#
# Reinforcement (teach rl from the adapter just taught, on the same data; its held-out eval
# and the judgement against that adapter; with KB_TASKS its KernelBench eval too) takes most of
# a session of its own. Here, put what call 4 brought back (adapter/, after.json) and
# train.jsonl into .rl-kit/ (with the imported problems in .rl-kit/kb/, about 30 MB), then:
#   calls A, B: the two receive calls above
#   call C:  carry [".gpu-eval/b"]    bash -c "source benchmarks/eval_gpu.sh && setup"
#   call D:  carry [".rl-kit"]        RL_KIT=.rl-kit KB_TASKS=.rl-kit/kb RL_SECONDS=420 \
#                                         bash benchmarks/teach_gpu.sh rl
# (right after call 4, on the same warm machine, `bash benchmarks/teach_gpu.sh rl` alone does)
#
# On a GPU machine of your own with the project set up, one command does all of it:
#   make teach-default        (bash benchmarks/teach_gpu.sh all; the new adapter is named
#                              default-<date>: the shipped one keeps its name)
#
# What comes back under $OUT: the data's summaries and the GPU's examples (gpu-data.jsonl), both evals as JSON, the
# training log, the judgement and (when kept) the adapter folder.
set -euo pipefail
source "$(dirname "$0")/eval_gpu.sh"

TEACH=/tmp/ks-teach
PROCESSES=${PROCESSES:-14}
PER_PROCESS=${PER_PROCESS:-260}
DATA_SECONDS=${DATA_SECONDS:-230}
# Both evals alike (the judgement refuses runs that differ): every held-out task, 4 chains of
# up to 2 rounds, sampled at 0.3, NF4 as the adapter was trained over.
EVAL_ARGS=(--split heldout -k 4 --rounds 2 --skills on --examples off --temperature 0.3
           --seed 0 --batch 64 --quantization nf4 --no-estimate --time-limit "${HELDOUT_SECONDS:-260}")
TRAIN_ARGS=(--device cuda --quantization nf4 --targets all --rank 16 --learning-rate 4e-4
            --batch 16 --max-tokens 1024 --checkpoint-every 100)
MODEL=${MODEL:-/tmp/ks-models/smollm2-135m-instruct}
# Not "default": importing the packaged model installs the shipped adapter under that name.
ADAPTER=${ADAPTER:-taught}
# Imported KernelBench problems: one chain of up to 3 rounds each (pass@1 within 3 rounds).
# 300 s: at 200 s the adapter of 2026-12-07 had decided 81 of level 1's 100 and none was timed
# (an adapter whose kernels compile needs more verifying than one whose kernels do not).
KB_ARGS=(-k 1 --rounds 3 --skills on --examples off --temperature 0.3 --seed 0 --batch 64
         --quantization nf4 --no-estimate --time-limit "${KB_SECONDS:-300}" ${KB_NO_TIMING:+--no-timing})

data() {
    # Call 1: verified examples from PROCESSES generators (distinct seeds) at once, each cut
    # off after DATA_SECONDS (Ctrl+C keeps what passed).
    local out=${OUT:-/tmp/ks-out}
    mkdir -p "$out" "$TEACH"
    rm -rf "$TEACH"/d[0-9]*  # a later run starts afresh (teach data goes on in a folder it wrote)
    local pids=()
    for index in $(seq 1 "$PROCESSES"); do
        local extra=(--no-templates)
        [ "$index" = 1 ] && extra=()
        timeout -s INT "$DATA_SECONDS" python3 -m app teach data --backend pycuda \
            --out "$TEACH/d$index" --count "$PER_PROCESS" --seed $((100 + index)) "${extra[@]}" \
            > "$TEACH/d$index.log" 2>&1 &
        pids+=($!)
    done
    wait "${pids[@]}" || true
    cat "$TEACH"/d*/train.jsonl > "$TEACH/gpu-data.jsonl"
    for index in $(seq 1 "$PROCESSES"); do tail -n 2 "$TEACH/d$index.log"; done > "$out/data.log"
    python3 - "$TEACH" <<'EOF' | tee "$out/data_summary.txt"
import collections, json, pathlib, sys
root = pathlib.Path(sys.argv[1])
summaries = [json.loads(p.read_text()) for p in sorted(root.glob("d*/summary.json"))]
total = collections.Counter()
for s in summaries:
    total.update(s["families"])
keys = ("written", "dropped_failed_verification", "dropped_weak_spec", "dropped_not_canonical",
        "refused_heldout")
print({k: sum(s.get(k, 0) for s in summaries) for k in keys})
print(dict(sorted(total.items())))
print("refusals:", sorted({r.split(": ", 1)[1] for s in summaries for r in s["refusals"]}))
EOF
    cp "$TEACH/gpu-data.jsonl" "$out/"
    sha256sum "$TEACH/gpu-data.jsonl" | tee -a "$out/data_summary.txt"
}

kit_env() {
    # What .device-kit/setup.sh exported in call 1 (its installs in /tmp are still there).
    export PATH="/tmp/kitroot/usr/bin:$PATH:/usr/local/cuda/bin"
    export PYTHONPATH="$ROOT:/tmp/site${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
    export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1
}

checks() {
    # Call 2: keep the model's first half, and run the GPU checks (benchmarks/gpu_checks.sh).
    receive
    kit_env
    (cd "$ROOT" && GPU_TEST_SECONDS=${GPU_TEST_SECONDS:-300} bash benchmarks/gpu_checks.sh) || true
}

train() {
    # Call 3: the model, the base model's held-out eval, then the adapter. DATA_BESIDE=1 runs
    # the data step (call 1's) on this machine while the base model is evaluated, so that call
    # 1 can be left out; the eval's pass@1 does not depend on how busy the machine is.
    local out=${OUT:-/tmp/ks-out} data_pid=""
    mkdir -p "$out" "$TEACH"
    setup > "$out/setup.log" 2>&1 || { tail -n 30 "$out/setup.log"; return 3; }
    if [ -n "${DATA_BESIDE:-}" ]; then
        data > "$out/data-beside.log" 2>&1 &
        data_pid=$!
    fi
    if [ -f "$STAGE/b/before.json" ]; then
        # The base model's eval from an earlier call with these EVAL_ARGS, brought with part b:
        # the base model has not changed, and its eval takes 260 s of device time.
        cp "$STAGE/b/before.json" "$TEACH/before.json"
        echo "the base model's eval: brought with part b (not run again)" > "$out/before.log"
    else
        python3 -m app eval "${EVAL_ARGS[@]}" --model "$MODEL" --adapter none \
            --out "$TEACH/before-run" --json > "$TEACH/before.json" 2> "$out/before.log" || true
    fi
    cp "$TEACH/before.json" "$out/"
    tail -n 4 "$out/before.log"
    [ -z "$data_pid" ] || { wait "$data_pid" || true; tail -n 4 "$out/data-beside.log"; }
    # The data step's examples, and those verified on the development machine that came
    # with this call (plain or gzipped).
    cat "$TEACH/gpu-data.jsonl" > "$TEACH/train.jsonl" 2>/dev/null || : > "$TEACH/train.jsonl"
    cat "$STAGE"/b/local-*.jsonl >> "$TEACH/train.jsonl" 2>/dev/null || true
    zcat "$STAGE"/b/local-*.jsonl.gz >> "$TEACH/train.jsonl" 2>/dev/null || true
    if [ "${MODEL_TWICE:-0}" = 1 ]; then
        # The examples asked as a Model (KernelBench's register, the one the prompts' loop
        # lines come with) a second time, so that the data leans toward it.
        grep -F 'def forward' "$TEACH/train.jsonl" > "$TEACH/model-register.jsonl" || true
        cat "$TEACH/model-register.jsonl" >> "$TEACH/train.jsonl"
        echo "$(wc -l < "$TEACH/model-register.jsonl") examples asked as a Model, twice"
    fi
    sha256sum "$TEACH/train.jsonl" | tee "$out/train-data.sha256"
    local examples steps
    examples=$(wc -l < "$TEACH/train.jsonl")
    steps=${STEPS:-$(( (examples * ${EPOCHS:-3} + 15) / 16 ))}
    echo "$examples examples, $steps steps of 16"
    echo "$steps" > "$TEACH/steps"
    train_for "${TRAIN_SECONDS:-240}" "$out" ""
}

train_for() {
    # Train (or resume) for at most $1 seconds; Ctrl+C at the limit keeps a checkpoint.
    local started=$SECONDS
    timeout -s INT "$1" python3 -m app teach train --model "$MODEL" $3 \
        --data "$TEACH/train.jsonl" --out "$ADAPTER" --steps "$(cat "$TEACH/steps")" \
        "${TRAIN_ARGS[@]}" >> "$2/train.log" 2>&1 || true
    echo "training ran $((SECONDS - started)) s"
    grep -E "memory|step [0-9]*00/|adapter|error|Error" "$2/train.log" | tail -n 12
}

judge_adapter() {
    # Call 3: the held-out eval with the adapter and the judgement; the adapter comes back.
    local out=${OUT:-/tmp/ks-out}
    mkdir -p "$out"
    [ -n "${PREPARED:-}" ] || setup > "$out/setup.log" 2>&1 || {
        tail -n 30 "$out/setup.log"; return 3; }
    if [ -d "$MODEL/adapters/.$ADAPTER.partial" ]; then  # call 2 ran out of time: finish it
        train_for "${RESUME_SECONDS:-200}" "$out" --resume
    fi
    python3 -m app eval "${EVAL_ARGS[@]}" --model "$MODEL" --adapter "$ADAPTER" \
        --out "$TEACH/after-run" --json > "$TEACH/after.json" 2> "$out/after.log" || true
    cp "$TEACH/before.json" "$TEACH/after.json" "$out/"
    tail -n 4 "$out/after.log"
    set +e
    python3 -m app teach judge --model "$MODEL" --adapter "$ADAPTER" --before "$TEACH/before.json" \
        --after "$TEACH/after.json" 2>&1 | tee "$out/judge.txt"
    set -e
    [ -d "$MODEL/adapters/$ADAPTER" ] && cp -r "$MODEL/adapters/$ADAPTER" "$out/adapter"
    cp -r "$KERNEL_STUDIO_DATA/teach/discarded" "$out/" 2>/dev/null || true
    [ -z "${KB_TASKS:-}" ] || kernelbench
}

rl() {
    # teach rl from $ADAPTER for at most RL_SECONDS (Ctrl+C keeps a checkpoint), then judge it
    # against $ADAPTER on the held-out split: kept only if it helps.
    local out=${OUT:-/tmp/ks-out} started=$SECONDS
    mkdir -p "$out"
    [ -n "${PREPARED:-}" ] || setup > "$out/setup.log" 2>&1 || {
        tail -n 30 "$out/setup.log"; return 3; }
    if [ -n "${RL_KIT:-}" ]; then  # a later session: what call 4 brought back, carried again
        mkdir -p "$TEACH" "$MODEL/adapters"
        [ -d "$MODEL/adapters/$ADAPTER" ] || cp -r "$RL_KIT/adapter" "$MODEL/adapters/$ADAPTER"
        local name
        for name in train.jsonl after.json; do
            [ -f "$TEACH/$name" ] || cp "$RL_KIT/$name" "$TEACH/"
        done
    fi
    timeout -s INT "${RL_SECONDS:-420}" python3 -m app teach rl --model "$MODEL" \
        --data "$TEACH/train.jsonl" --from "$ADAPTER" --out "$ADAPTER-rl" \
        --steps "${RL_STEPS:-40}" --prompts 8 --group 8 --rounds 2 --device cuda \
        --max-tokens 1408 --max-new-tokens 384 \
        --quantization nf4 --backend pycuda > "$out/rl.log" 2>&1 || true
    echo "teach rl ran $((SECONDS - started)) s"
    grep -E "memory|step [0-9]+/|adapter|error|Error" "$out/rl.log" | tail -n 12
    [ -d "$MODEL/adapters/$ADAPTER-rl" ] || { echo "no adapter $ADAPTER-rl was sealed" >&2
                                               return 1; }
    python3 -m app eval "${EVAL_ARGS[@]}" --model "$MODEL" --adapter "$ADAPTER-rl" \
        --out "$TEACH/rl-run" --json > "$TEACH/rl.json" 2> "$out/rl-eval.log" || true
    cp "$TEACH/rl.json" "$out/"
    set +e
    python3 -m app teach judge --model "$MODEL" --adapter "$ADAPTER-rl" \
        --before "$TEACH/after.json" --after "$TEACH/rl.json" 2>&1 | tee "$out/rl-judge.txt"
    set -e
    if [ -n "${KB_TASKS:-}" ] && [ -d "$MODEL/adapters/$ADAPTER-rl" ]; then
        python3 -m app eval --kernelbench "$KB_TASKS" "${KB_ARGS[@]}" --model "$MODEL" \
            --adapter "$ADAPTER-rl" --out "$TEACH/kb-rl" --json > "$out/kb-rl.json" \
            2> "$out/kb-rl.log" || true
        summarize "$out/kb-rl.json" || tail -n 5 "$out/kb-rl.log"
    fi
}

summarize() {
    # One line of an eval --json result: pass@1 and KernelBench's figures, or why there are none.
    python3 - "$1" <<'EOF'
import json, sys
try:
    data = json.load(open(sys.argv[1]))
except (OSError, ValueError) as error:
    sys.exit(f"{sys.argv[1]}: no result ({error})")
for arm, s in data["summaries"].items():
    print(f"{sys.argv[1]}: tasks {s['tasks']} pass@1 {s['pass_at_1']} pass@K {s['pass_at_k']} "
          f"compile errors {s['compile_error_rate']} stopped={data['stopped']}")
kb = data.get("kernelbench") or {}
if kb:
    print("  kernelbench:", json.dumps({k: v for k, v in kb.items() if k != "problems"})[:900])
    print("  correct:", [p["task"] for p in kb["problems"] if p["correct"]])
EOF
}

kernelbench() {
    # The adapter just taught and the shipped one ("default") on the imported problems in
    # KB_TASKS, then the shipped one on the held-out split (the new one's is after.json).
    # KB_ADAPTERS names fewer (one per call where a call's 10 minutes hold no more);
    # SHIPPED_HELDOUT=0 leaves the held-out run out.
    local out=${OUT:-/tmp/ks-out} adapter
    mkdir -p "$out"
    for adapter in ${KB_ADAPTERS:-$ADAPTER default}; do
        [ -d "$MODEL/adapters/$adapter" ] || { echo "no adapter $adapter" >&2; continue; }
        python3 -m app eval --kernelbench "$KB_TASKS" "${KB_ARGS[@]}" --model "$MODEL" \
            --adapter "$adapter" --out "$TEACH/kb-$adapter" --json > "$out/kb-$adapter.json" \
            2> "$out/kb-$adapter.log" || true
        summarize "$out/kb-$adapter.json" || tail -n 5 "$out/kb-$adapter.log"
    done
    local tag=${KB_ADAPTERS:-both}
    (cd "$TEACH" && tar -czf "$out/kb-attempts-${tag// /-}.tar.gz" kb-*/) 2>/dev/null || true
    [ "${SHIPPED_HELDOUT:-1}" = 1 ] || return 0
    python3 -m app eval "${EVAL_ARGS[@]}" --model "$MODEL" --adapter default \
        --out "$TEACH/shipped-run" --json > "$out/shipped-heldout.json" \
        2> "$out/shipped-heldout.log" || true
    summarize "$out/shipped-heldout.json" || tail -n 5 "$out/shipped-heldout.log"
}

everything() {
    # One command on a GPU machine that has the project set up (make model; pycuda and
    # bitsandbytes installed): the three steps in a row on the prepared default model. The
    # shipped adapter is called "default", so a new one needs another name (ADAPTER=...).
    export PREPARED=1
    MODEL=$(cd "$ROOT" && python3 -c "from app.assist.model.convert import default_model_folder as f
print(f())")
    [ "$ADAPTER" != taught ] || ADAPTER=default-$(date +%Y%m%d)
    data && train && judge_adapter
}

case "${1:-}" in
    all) everything ;;
    data) data ;;
    checks) checks ;;
    train) train ;;
    judge) judge_adapter ;;
    kernelbench) setup > /tmp/ks-setup.log 2>&1 || { tail -n 30 /tmp/ks-setup.log; exit 3; }
                 kernelbench ;;
    rl) rl ;;
    *) echo "usage: bash benchmarks/teach_gpu.sh all | data | checks | train | judge | kernelbench | rl" >&2
       exit 2 ;;
esac
