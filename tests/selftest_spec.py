"""Specs whose kernel is a behaviour of the engine's selftest backend (copy, hang, overrun, ...),
shaped like vector_add (in a, out c, scalar n). Shared by the engine and GUI tests; importable
because pytest puts the folder of tests/conftest.py on sys.path."""

from __future__ import annotations

from pathlib import Path

SPEC = '''[kernel]
source = "k.cu"
entry = "{entry}"

[[arg]]
name = "a"
kind = "in"
dtype = "float32"
shape = ["n"]

[[arg]]
name = "c"
kind = "out"
dtype = "float32"
shape = ["{out_size}"]

[[arg]]
name = "n"
kind = "scalar"
dtype = "int32"
value = "n"

[launch]
grid = ["cdiv(n, 256)"]
block = ["256"]

[reference]
python = "ref.py"

[verify]
cases = [{{ n = 1 }}, {{ n = 1025 }}]
seeds = {seeds}
'''

BENCH = '''
[bench]
case = { n = 4096 }
bytes = "8 * n"
flops = "n"
'''


def write_selftest_spec(folder: Path, entry: str = "copy", *,
                        reference: str = "return {'c': a}", out_size: str = "n",
                        seeds: int = 2, bench: str = "", name: str = "k") -> Path:
    """Write k.cu, ref.py and NAME.toml into `folder`; return the spec's path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "k.cu").write_text("// run by the selftest backend\n__global__ void k() {}\n")
    (folder / "ref.py").write_text(f"def reference(a, n):\n    {reference}\n")
    path = folder / f"{name}.toml"
    path.write_text(SPEC.format(entry=entry, out_size=out_size, seeds=seeds) + bench)
    return path
