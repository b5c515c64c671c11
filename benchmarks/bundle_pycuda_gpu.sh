#!/usr/bin/env bash
# The GPU bundle's pycuda wheel on a real driver (issue 28). The GPU machine has Python 3.12
# only and the bundle is for Python 3.11, so the bundle's interpreter travels with its wheel.
#   here:  bash benchmarks/bundle_pycuda_gpu.sh stage
#          (builds pycuda's wheel with packaging/pycuda_build.py, as `make bundle-gpu` does,
#          and puts it, this machine's python3.11 with its standard library, and the cp311
#          wheels it needs into .py311-kit/, about 30 MB)
#   there: carry [".py311-kit"], command `bash benchmarks/bundle_pycuda_gpu.sh check`
#          (unpacks them, finds the machine's nvidia-curand for the wheel's run path, runs
#          benchmarks/bundle_pycuda_check.py, then tries the app's own verify under 3.11)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
KIT=.py311-kit

if [ "${1:-}" = "stage" ]; then
    rm -rf "$KIT" && mkdir -p "$KIT/w" "$KIT/build"
    python3.11 -m pip download -q --no-deps --only-binary=:all: -d "$KIT/build" "nvidia-curand==10.4.0.35"
    CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} .venv/bin/python - "$KIT" <<'PY'
import sys, tempfile
from pathlib import Path
sys.path.insert(0, "packaging")
import bundle_build, pycuda_build
kit = Path(sys.argv[1])
with tempfile.TemporaryDirectory() as scratch:
    print(pycuda_build.build(bundle_build.pip, kit / "build", "https://pypi.org/simple", Path(scratch)))
PY
    mv "$KIT"/build/pycuda-*.whl "$KIT/w/" && rm -rf "$KIT/build"
    cp ../shared/device/debs/bubblewrap*.deb "$KIT/"
    python3.11 -m pip download -q --no-deps --only-binary=:all: -d "$KIT/w" numpy==2.4.6 \
        markupsafe==3.0.4 siphash24==1.9 typing_extensions==4.16.0 pytools==2026.1.1 mako==1.4.3 \
        platformdirs==4.14.8 msgspec==0.23.0 pyyaml ml_dtypes tomlkit==0.15.2 cryptography==50.0.2 \
        cffi==2.1.1 pycparser==3.12
    root=$(mktemp -d)
    mkdir -p "$root/bin" "$root/lib" && cp /usr/bin/python3.11 "$root/bin/" && cp -a /usr/lib/python3.11 "$root/lib/"
    (cd "$root/lib/python3.11" && rm -rf test idlelib tkinter turtledemo ensurepip lib2to3 \
        site-packages dist-packages config-3.11* pydoc_data &&
        find . -name __pycache__ -prune -exec rm -rf {} + && find . -name tests -type d -prune -exec rm -rf {} +)
    tar -C "$root" -cJf "$KIT/py311.tar.xz" . && rm -rf "$root"
    grep -qx "/$KIT/" .git/info/exclude || echo "/$KIT/" >> .git/info/exclude
    du -sh "$KIT"; ls "$KIT/w"
    exit 0
fi

py=/tmp/py311/bin/python3.11 site=/tmp/site311
rm -rf /tmp/py311 "$site" && mkdir -p /tmp/py311 "$site"
tar -C /tmp/py311 -xJf "$KIT/py311.tar.xz"
for wheel in "$KIT"/w/*.whl; do python3 -m zipfile -e "$wheel" "$site"; done
curand=$(find / -xdev -name 'libcurand.so.10*' -path '*nvidia/cu13/lib*' 2>/dev/null | head -1)
echo "the machine's nvidia-curand: ${curand:-none found}"
[ -n "$curand" ] && ln -s "$(dirname "$(dirname "$(dirname "$curand")")")" "$site/nvidia"
readelf -d "$site"/pycuda/_driver*.so | grep -E "NEEDED|RUNPATH|RPATH"
PYTHONNOUSERSITE=1 PYTHONPATH="$site" "$py" benchmarks/bundle_pycuda_check.py
echo "check exit $?"
for deb in "$KIT"/bubblewrap*.deb; do [ -e "$deb" ] && dpkg -x "$deb" /tmp/kitroot; done
[ -x /tmp/kitroot/usr/bin/bwrap ] && export KERNEL_STUDIO_BWRAP=/tmp/kitroot/usr/bin/bwrap
echo "the app's verify on the pycuda backend under the bundle's Python:"
PYTHONNOUSERSITE=1 PYTHONPATH="$ROOT:$site" timeout 120 "$py" -m app verify --backend pycuda \
    --compiler nvcc resources/kernels/vector_add/vector_add.toml 2>&1 | tail -15
echo "verify exit ${PIPESTATUS[0]}"
