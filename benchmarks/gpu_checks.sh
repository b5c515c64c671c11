#!/usr/bin/env bash
# The GPU checks of the verification and isolation work, in one call on the lent GPU machine:
#   bash ../shared/device/stage.sh   # once, here
#   run: source .device-kit/setup.sh && bash benchmarks/gpu_checks.sh   (carry .device-kit)
# Writes the doctor's report, every gpu test, the warm verify benchmark and each hostile
# fixture's verdict on the GPU into $OUT (or ./gpu-out).
out=${OUT:-gpu-out}
mkdir -p "$out"
python3 -m app doctor > "$out/doctor.txt" 2>&1
xdist=$(python3 -c "import xdist" 2>/dev/null && echo "-n 8 --dist loadfile")  # a wheel the kit may carry
timeout "${GPU_TEST_SECONDS:-420}" python3 -m pytest -m gpu -q -p no:cacheprovider --continue-on-collection-errors $xdist \
  tests --ignore=tests/ui -rfEs > "$out/gpu_tests.txt" 2>&1
tail -8 "$out/gpu_tests.txt"
timeout 90 python3 benchmarks/verify_bench.py --backend pycuda --repeat 7 > "$out/verify_bench.txt" 2>&1
tail -4 "$out/verify_bench.txt"
for spec in tests/fixtures/hostile/*/*.toml resources/kernels/*/*.toml; do
  status=$(timeout 60 python3 -m app verify --json --timeout 2 --backend pycuda "$spec" 2>/dev/null \
    | python3 -c "import json, sys; print(json.load(sys.stdin)['status'])" 2>/dev/null)
  echo "$(basename "$spec" .toml) ${status:-error}"
done > "$out/verdicts_gpu.txt"
cat "$out/verdicts_gpu.txt"
