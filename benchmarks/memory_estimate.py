"""How much memory a verification really takes, against app.engine.verify.memory's estimate.

Runs `kernel-studio verify` on one big case of a few kernels (vector_add, and copies of uint8,
float32 and float64 written here), samples the resident memory of its whole process tree
(the CLI, the worker, the reference process) plus its buffer files in /dev/shm every 10 ms,
and prints the peak beside the estimate. The estimate should lie a little above every peak.

    python benchmarks/memory_estimate.py [--backend cpu] [--scale 1.0]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.engine.verify import buffers, memory  # noqa: E402
from app.spec.cases import resolve  # noqa: E402
from app.spec.model import load_spec  # noqa: E402

COPY_SOURCE = """extern "C" __global__ void copy_{d}(const {c}* __restrict__ x, {c}* __restrict__ y,
                                          long long n)
{{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}}
"""
COPY_SPEC = """[kernel]
source = "copy_{d}.cu"
entry = "copy_{d}"
[[arg]]
name = "x"
kind = "in"
dtype = "{d}"
shape = ["n"]
[[arg]]
name = "y"
kind = "out"
dtype = "{d}"
shape = ["n"]
[[arg]]
name = "n"
kind = "scalar"
dtype = "int64"
value = "n"
[launch]
grid = ["cdiv(n, 256)"]
block = ["256"]
[reference]
python = "copy_{d}_ref.py"
[verify]
cases = [{{ n = 1000 }}]
seeds = 1
"""
COPIES = {"uint8": ("unsigned char", 1 << 28), "float32": ("float", 1 << 26),
          "float64": ("double", 1 << 25)}


def write_copies(folder: Path) -> list[tuple[Path, int]]:
    """The copy kernels, their specs and references; (spec, n) for each."""
    specs = []
    for dtype, (c_type, n) in COPIES.items():
        (folder / f"copy_{dtype}.cu").write_text(COPY_SOURCE.format(d=dtype, c=c_type))
        (folder / f"copy_{dtype}_ref.py").write_text(
            "def reference(x, n):\n    return {'y': x.copy()}\n")
        spec = folder / f"copy_{dtype}.toml"
        spec.write_text(COPY_SPEC.format(d=dtype))
        specs.append((spec, n))
    return specs


def _tree(pid: int) -> list[int]:
    """`pid` and every descendant (a sandboxed worker is a grandchild)."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*"):
            try:
                pending += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
    return found


def _rss(pid: int) -> int:
    """Resident bytes of one process (0 once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _files(folders: list[Path]) -> int:
    """Bytes of the files under the engine folders this run created."""
    total = 0
    for folder in folders:
        for path in folder.rglob("*"):
            try:
                total += path.stat().st_size if path.is_file() else 0
            except OSError:
                continue
    return total


def peak_use(command: list[str]) -> tuple[int, int]:
    """Run `command`; the peak of its process tree's resident memory plus its buffer files
    (other programs on the machine do not count, unlike a drop in MemAvailable)."""
    shm = Path("/dev/shm")
    before = set(shm.glob("kernel-studio-*"))
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while process.poll() is None:
        folders = [f for f in shm.glob("kernel-studio-*") if f not in before]
        peak = max(peak, sum(_rss(p) for p in _tree(process.pid)) + _files(folders))
        time.sleep(0.01)
    return peak, process.returncode


def main() -> int:
    """Measure each kernel's big case and print measured and estimated peaks."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every n by this")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        runs = [(ROOT / "resources/kernels/vector_add/vector_add.toml", 1 << 26)]
        runs += write_copies(Path(folder))
        print(f"{'kernel':<12} {'n':>11} {'buffers':>9} {'measured':>9} {'estimate':>9}  exit")
        for spec_path, n in runs:
            n = int(n * args.scale)
            spec = load_spec(spec_path)
            resolved = resolve(spec, {"n": n})
            need = memory.need(spec, resolved, buffers.GUARD_BYTES)
            peak, code = peak_use([sys.executable, "-m", "app", "verify", str(spec_path),
                                    "--backend", args.backend, "--case", f"n={n}",
                                    "--seeds", "1"])
            print(f"{spec.entry:<12} {n:>11} {memory.gib(resolved.nbytes(spec)):>9} "
                  f"{memory.gib(peak):>9} {memory.gib(need.host):>9}  {code}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
