"""The kernel templates and the hostile fixtures: specs in docs/spec.md's format, kernels that the
real NVRTC compiles for sm_90 with their entry symbol, signatures that match the specs, and
references that agree with independent NumPy formulations. No GPU needed."""

from __future__ import annotations

import importlib.util
import math
import os
import re
import shutil
import struct
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from app.engine.verify.buffers import generate_inputs
from app.engine.verify.reference import expected_outputs
from app.spec import expr
from app.spec.cases import resolve
from app.spec.dtypes import DTYPES, lookup
from app.spec.model import Spec, load_spec

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE_DIR = ROOT / "resources" / "kernels"
HOSTILE_DIR = ROOT / "tests" / "fixtures" / "hostile"

TEMPLATES = ("vector_add", "saxpy", "reduce_sum", "softmax", "layernorm", "rmsnorm", "transpose",
             "matmul", "scan", "histogram", "bias_gelu", "conv1d", "linear_leaky_relu")
FIXTURE_VERDICTS = {
    "skip_tail": "unwritten", "first_block_only": "unwritten", "mutate_input": "input_changed",
    "write_past_end": "guard_zone", "constant_output": "mismatch", "stale_output": "unwritten",
    "hang": "timeout", "illegal_address": "crash", "shared_race": "racecheck finding",
    "read_past_end": "mismatch", "read_output_first": "mismatch", "off_by_one": "guard_zone",
    "memoised_result": "mismatch", "hard_coded_size": "unwritten",
    "precision_downgrade": "mismatch",
}
VERDICTS = {"mismatch", "unwritten", "input_changed", "guard_zone", "timeout", "crash",
            "racecheck finding"}

SECTIONS = {"kernel", "arg", "launch", "reference", "verify", "bench"}
KINDS = {"in", "out", "inout", "scalar"}
INIT = re.compile(r"^(normal|uniform|ones|zeros|arange|(uniform|randint)\(\s*-?[\d.]+\s*,"
                  r"\s*-?[\d.]+\s*\))$")
IDENT = re.compile(r"^[A-Za-z_]\w*$")
MAX_STATIC_SHARED = 48 * 1024  # more needs an opt-in attribute that a spec cannot set

ALL_SPECS = ([pytest.param(TEMPLATE_DIR / n / f"{n}.toml", id=n) for n in TEMPLATES]
             + [pytest.param(HOSTILE_DIR / n / f"{n}.toml", id=f"hostile-{n}")
                for n in FIXTURE_VERDICTS])
TEMPLATE_SPECS = ALL_SPECS[:len(TEMPLATES)]


def is_template(path: Path) -> bool:
    """Templates are held to a higher standard than fixtures (const inputs, no warnings)."""
    return path.parent.parent == TEMPLATE_DIR


# ---------------------------------------------------------------------------------------------
# The library is complete


def test_every_template_is_present_with_its_three_files() -> None:
    found = {p.name for p in TEMPLATE_DIR.iterdir() if p.is_dir()}
    assert set(TEMPLATES) <= found, f"missing templates: {set(TEMPLATES) - found}"
    for name in found:
        for suffix in (".cu", ".toml", "_ref.py"):
            assert (TEMPLATE_DIR / name / f"{name}{suffix}").is_file(), f"{name}{suffix}"


def test_every_fixture_is_present_and_the_readme_gives_its_verdict() -> None:
    found = {p.name for p in HOSTILE_DIR.iterdir() if p.is_dir()}
    assert found == set(FIXTURE_VERDICTS)
    rows = re.findall(r"^\| `(\w+)` \|.*\| ([a-z_ ]+) \|$",
                      (HOSTILE_DIR / "README.md").read_text(), re.MULTILINE)
    assert dict(rows) == FIXTURE_VERDICTS
    assert set(FIXTURE_VERDICTS.values()) <= VERDICTS


# ---------------------------------------------------------------------------------------------
# The spec, read with tomllib and checked field by field against docs/spec.md


def read_toml(path: Path) -> dict[str, Any]:
    """The spec as plain TOML data."""
    with path.open("rb") as handle:
        return tomllib.load(handle)


def check_expressions(values: Any, low: int, high: int, where: str) -> None:
    """A list of low..high expression strings that the safe evaluator accepts."""
    assert isinstance(values, list) and low <= len(values) <= high, where
    for text in values:
        assert isinstance(text, str), f"{where}: {text!r} should be a string"
        expr.parse(text)


def check_arg(arg: dict[str, Any]) -> None:
    """One [[arg]]: name, kind, dtype, and shape + init or value as its kind needs."""
    where = f"arg {arg.get('name')}"
    assert set(arg) <= {"name", "kind", "dtype", "shape", "init", "value"}, where
    assert IDENT.match(arg["name"]), where
    assert arg["kind"] in KINDS and arg["dtype"] in DTYPES, where
    if arg["kind"] == "scalar":
        assert "shape" not in arg and "init" not in arg, where
        expr.parse(arg["value"])
        return
    assert "value" not in arg, where
    check_expressions(arg["shape"], 1, 3, f"{where}.shape")
    if arg["kind"] == "out":
        assert "init" not in arg, f"{where}: out buffers are poisoned, not initialised"
    else:
        assert INIT.match(arg["init"]), f"{where}.init = {arg['init']!r}"


def check_verify(verify: dict[str, Any]) -> None:
    """[verify]: non-empty cases of positive whole sizes, seeds, optional tolerances."""
    assert set(verify) <= {"cases", "seeds", "rtol", "atol"}
    assert isinstance(verify["cases"], list) and verify["cases"]
    for case in verify["cases"]:
        assert all(isinstance(v, int) and v >= 1 for v in case.values()), case
    assert isinstance(verify["seeds"], int) and verify["seeds"] >= 1
    for key in ("rtol", "atol"):
        assert key not in verify or (isinstance(verify[key], float) and verify[key] >= 0)


def check_bench(bench: dict[str, Any]) -> None:
    """[bench]: a case, and bytes / flops formulas that give sensible numbers for it."""
    assert set(bench) == {"case", "bytes", "flops"}
    assert expr.evaluate(bench["bytes"], bench["case"]) > 0
    assert expr.evaluate(bench["flops"], bench["case"]) >= 0


@pytest.mark.parametrize("path", ALL_SPECS)
def test_spec_has_every_field_of_design_md_well_formed(path: Path) -> None:
    data = read_toml(path)
    name = path.stem
    assert set(data) <= SECTIONS and SECTIONS - {"bench"} <= set(data)
    kernel = data["kernel"]
    assert set(kernel) == {"source", "entry", "options"}
    assert kernel["source"] == f"{name}.cu" and (path.parent / kernel["source"]).is_file()
    assert IDENT.match(kernel["entry"]) and kernel["options"] == []
    for arg in data["arg"]:
        check_arg(arg)
    assert any(a["kind"] in ("out", "inout") for a in data["arg"])
    assert set(data["launch"]) == {"grid", "block", "shared_bytes"}
    check_expressions(data["launch"]["grid"], 1, 3, "grid")
    check_expressions(data["launch"]["block"], 1, 3, "block")
    expr.parse(data["launch"]["shared_bytes"])
    assert data["reference"] == {"python": f"{name}_ref.py"}
    assert (path.parent / data["reference"]["python"]).is_file()
    check_verify(data["verify"])
    if is_template(path):
        assert data["verify"]["seeds"] == 3
        check_bench(data["bench"])


def is_prime(value: int) -> bool:
    """Trial division; the sizes here are small."""
    return value > 2 and all(value % d for d in range(2, math.isqrt(value) + 1))


@pytest.mark.parametrize("path", TEMPLATE_SPECS)
def test_template_cases_include_the_awkward_sizes(path: Path) -> None:
    data = read_toml(path)
    cases = data["verify"]["cases"]
    block_x = int(data["launch"]["block"][0])
    values = [v for case in cases for v in case.values()]
    assert any(all(v == 1 for v in case.values()) for case in cases), "no case of size 1"
    assert any(v > block_x and v % block_x for v in values), "no size past a partial block"
    assert any(is_prime(v) for v in values), "no odd prime size"


# ---------------------------------------------------------------------------------------------
# The spec through the app's own loader, and every case through its launch limits


@pytest.mark.parametrize("path", ALL_SPECS)
def test_spec_loads_with_app_spec_and_every_case_resolves(path: Path) -> None:
    spec = load_spec(path)
    assert spec.entry == read_toml(path)["kernel"]["entry"]
    cases = [*spec.cases, *([spec.bench_case] if spec.bench_case else [])]
    for case in cases:
        resolved = resolve(spec, case)
        assert resolved.shared_bytes <= MAX_STATIC_SHARED
        for arg in spec.args:
            if arg.is_buffer:  # the kernels index with int
                assert math.prod(resolved.shapes[arg.name]) < 2**31, (arg.name, case)
        if is_template(path):  # the warp-level code assumes whole warps
            assert math.prod(resolved.block) % 32 == 0


@pytest.mark.parametrize("path", TEMPLATE_SPECS)
def test_bench_bytes_are_every_buffer_crossing_dram_once(path: Path) -> None:
    spec = load_spec(path)
    resolved = resolve(spec, spec.bench_case)
    assert spec.bench_bytes is not None
    # Inputs are read once, outputs written once, inout buffers both: the least traffic any
    # implementation can have, which is what GB/s should be measured against.
    least = sum(math.prod(resolved.shapes[a.name]) * lookup(a.dtype).itemsize
                * (2 if a.kind == "inout" else 1) for a in spec.args if a.is_buffer)
    claimed = expr.evaluate(spec.bench_bytes, spec.bench_case)
    assert claimed == pytest.approx(least, rel=1e-3), (claimed, least)


# ---------------------------------------------------------------------------------------------
# The kernel compiles for sm_90, and its signature is the spec's argument list


def cuda_include_dir() -> Path | None:
    """The CUDA toolkit's headers (cuda_fp16.h), which NVRTC does not carry built in."""
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.insert(0, str(Path(nvcc).resolve().parent.parent))
    for root in filter(None, roots):
        if (Path(root) / "include" / "cuda_fp16.h").is_file():
            return Path(root) / "include"
    return None


def nvrtc_compile(source: Path) -> tuple[bytes, str]:
    """Compile with the real NVRTC as `nvcc -cubin -arch=sm_90 -lineinfo` would: (cubin, log)."""
    from cuda.bindings import nvrtc

    text = source.read_bytes()
    options = [b"--gpu-architecture=sm_90", b"-lineinfo"]
    if b"#include <cuda_" in text:
        include = cuda_include_dir()
        if include is None:
            pytest.skip(f"{source.name} includes a CUDA header and no CUDA toolkit headers exist")
        options.append(b"--include-path=" + str(include).encode())
    _, program = nvrtc.nvrtcCreateProgram(text, source.name.encode(), 0, [], [])
    try:
        (result,) = nvrtc.nvrtcCompileProgram(program, len(options), options)
        _, size = nvrtc.nvrtcGetProgramLogSize(program)
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(program, log)
        if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            return b"", log.decode(errors="replace")
        _, size = nvrtc.nvrtcGetCUBINSize(program)
        cubin = b" " * size
        nvrtc.nvrtcGetCUBIN(program, cubin)
        return cubin, log.rstrip(b"\0").decode(errors="replace").strip()
    finally:
        nvrtc.nvrtcDestroyProgram(program)


def elf_functions(image: bytes) -> set[str]:
    """Names of the function symbols (STT_FUNC) in a little-endian ELF64 image (a cubin)."""
    assert image[:4] == b"\x7fELF" and image[4] == 2, "not an ELF64 image"
    shoff, = struct.unpack_from("<Q", image, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", image, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", image, shoff + i * shentsize)
                for i in range(shnum)]
    names: set[str] = set()
    for _, sh_type, _, _, offset, size, link, _, _, entsize in sections:
        if sh_type != 2:  # SHT_SYMTAB
            continue
        strtab = sections[link]
        for start in range(offset, offset + size, entsize):
            st_name, st_info = struct.unpack_from("<IB", image, start)
            if st_info & 0xF == 2:  # STT_FUNC
                name_at = strtab[4] + st_name
                names.add(image[name_at:image.index(b"\0", name_at)].decode())
    return names


@pytest.mark.parametrize("path", ALL_SPECS)
def test_kernel_compiles_for_sm90_and_exports_its_entry(path: Path) -> None:
    spec = load_spec(path)
    cubin, log = nvrtc_compile(spec.source_path)
    assert cubin, f"{spec.source} does not compile:\n{log}"
    assert spec.entry in elf_functions(cubin), f"no kernel {spec.entry!r} in the cubin"
    if is_template(path):
        assert "warning" not in log, log


def test_nvcc_compiles_every_template_for_sm90_too(tmp_path: Path) -> None:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH (the NVRTC test above still ran)")
    specs = [load_spec(p.values[0]) for p in TEMPLATE_SPECS]
    # One nvcc run for all of them: its start-up, not the compiling, is what costs time.
    done = subprocess.run([nvcc, "-cubin", "-arch=sm_90", "-lineinfo", "--threads", "2",
                           *[str(s.source_path) for s in specs]], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    for spec in specs:
        cubin = (tmp_path / f"{spec.source_path.stem}.cubin").read_bytes()
        assert spec.entry in elf_functions(cubin), spec.source
        assert f"{spec.source_path.name}(" not in done.stderr, done.stderr  # no warnings


def cuobjdump() -> str | None:
    """cuobjdump from the nvidia-cuda-cuobjdump wheel, or a toolkit's on PATH."""
    try:
        import nvidia
        for folder in nvidia.__path__:
            for tool in Path(folder).glob("cu*/bin/cuobjdump"):
                return str(tool)
    except ImportError:
        pass
    return shutil.which("cuobjdump")


def sass(path: Path, tmp_path: Path) -> list[str]:
    """The SASS instructions of a kernel as NVRTC compiles it, one string each."""
    tool = cuobjdump()
    if tool is None:
        pytest.skip("no cuobjdump to disassemble with")
    cubin, log = nvrtc_compile(path)
    assert cubin, log
    (tmp_path / "k.cubin").write_bytes(cubin)
    listing = subprocess.run([tool, "-sass", str(tmp_path / "k.cubin")], capture_output=True,
                             text=True, timeout=60, check=True).stdout
    return re.findall(r"/\*([0-9a-f]{4})\*/\s+([^;]+?)\s*;", listing)


def ops(listing: list[Any], opcode: str) -> list[str]:
    """The instructions whose opcode (after any @predicate) starts with `opcode`."""
    return [text for _, text in listing if re.match(r"(@!?U?P\w+\s+)?" + opcode, text)]


# A hostile kernel proves nothing if the compiler optimised its bug away: nvcc deletes an
# endless loop on a local volatile flag, for one. These check that each bug reached the SASS.


def test_hang_fixture_keeps_its_endless_loop(tmp_path: Path) -> None:
    listing = sass(HOSTILE_DIR / "hang" / "hang.cu", tmp_path)
    jumps = [(int(addr, 16), re.search(r"BRA 0x([0-9a-f]+)$", text)) for addr, text in listing]
    backward = [addr for addr, jump in jumps if jump and int(jump.group(1), 16) < addr]
    assert backward, "the spin loop was compiled away"


def test_shared_race_fixture_has_one_barrier_before_its_loop_and_none_inside(
        tmp_path: Path) -> None:
    listing = sass(HOSTILE_DIR / "shared_race" / "shared_race.cu", tmp_path)
    assert len(ops(listing, "BAR")) == 1
    assert len(ops(listing, "LDS")) >= 16, "the tree steps no longer go through shared memory"


def test_stale_and_constant_fixtures_really_do_not_compute(tmp_path: Path) -> None:
    stale = sass(HOSTILE_DIR / "stale_output" / "stale_output.cu", tmp_path)
    assert not ops(stale, "ST") and not ops(stale, "LDG")
    constant = sass(HOSTILE_DIR / "constant_output" / "constant_output.cu", tmp_path)
    assert len(ops(constant, "STG")) == 1 and not ops(constant, "LDG")


def test_illegal_address_fixture_stores_near_address_zero(tmp_path: Path) -> None:
    listing = sass(HOSTILE_DIR / "illegal_address" / "illegal_address.cu", tmp_path)
    stores = ops(listing, "ST")
    assert len(stores) == 1 and "+0x10]" in stores[0], stores


def test_linear_leaky_relu_reads_its_stages_as_float4_and_keeps_its_tile_in_registers(
        tmp_path: Path) -> None:
    # The point of its layout (k-major stages padded to 68 floats): every shared-memory read is
    # one 16-byte load, the 16 k of a stage times the 4 x 4 patch unroll into 256 multiply-adds,
    # and the 16 accumulators never spill to local memory.
    listing = sass(TEMPLATE_DIR / "linear_leaky_relu" / "linear_leaky_relu.cu", tmp_path)
    reads = ops(listing, "LDS")
    assert len(reads) >= 32 and all("LDS.128" in text for text in reads), reads
    assert len(ops(listing, "FFMA")) >= 256
    assert not ops(listing, "LDL") and not ops(listing, "STL")


def kernel_parameters(source: str, entry: str) -> list[tuple[str, str, bool, bool]]:
    """(name, base C type, is pointer, is const) for each parameter of the extern "C" entry."""
    match = re.search(r'extern\s+"C"\s+__global__\s+void\s+' + entry + r"\s*\(([^)]*)\)",
                      source)
    assert match, f'no extern "C" __global__ void {entry}(...)'
    params = []
    for text in match.group(1).split(","):
        words = text.replace("*", " * ").split()
        words = [w for w in words if w not in ("__restrict__", "volatile")]
        pointer = "*" in words
        const = "const" in words
        base = " ".join(w for w in words[:-1] if w not in ("*", "const"))
        params.append((words[-1], base, pointer, const))
    return params


@pytest.mark.parametrize("path", ALL_SPECS)
def test_kernel_signature_matches_the_spec_arguments(path: Path) -> None:
    spec = load_spec(path)
    params = kernel_parameters(spec.source_path.read_text(), spec.entry)
    assert [p[0] for p in params] == [a.name for a in spec.args]
    for (name, base, pointer, const), arg in zip(params, spec.args, strict=True):
        assert base == lookup(arg.dtype).c_type, f"{name}: {base} for {arg.dtype}"
        assert pointer == arg.is_buffer, f"{name}: pointer-ness does not match kind {arg.kind}"
        if arg.kind in ("out", "inout"):
            assert not const, f"{name} is written, so it cannot be const"
        elif arg.kind == "in" and is_template(path):
            assert const, f"input {name} should be const"


# ---------------------------------------------------------------------------------------------
# The reference: runs on every case, returns what the spec says, and is right


def load_reference(spec: Spec) -> Callable[..., dict[str, np.ndarray]]:
    """Import the reference module from its file."""
    name = f"ref_{spec.reference_path.parent.name}"
    module_spec = importlib.util.spec_from_file_location(name, spec.reference_path)
    assert module_spec and module_spec.loader
    module: ModuleType = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    function: Callable[..., dict[str, np.ndarray]] = module.reference
    return function


@pytest.mark.parametrize("path", ALL_SPECS)
def test_reference_returns_every_output_with_its_shape_and_dtype(path: Path) -> None:
    spec = load_spec(path)
    reference = load_reference(spec)
    outputs = [a for a in spec.args if a.kind in ("out", "inout")]
    for index, case in enumerate(spec.cases):
        resolved = resolve(spec, case)
        # Exactly the inputs the verifier would make for seed 0 of this case.
        inputs = generate_inputs(spec, resolved, seed=0, case_index=index)
        before = {name: array.copy() for name, array in inputs.items()}
        result = reference(**inputs, **resolved.scalars)
        assert set(result) == {a.name for a in outputs}, case
        for arg in outputs:
            value = result[arg.name]
            assert value.shape == resolved.shapes[arg.name], (arg.name, case)
            assert value.dtype == lookup(arg.dtype).numpy, (arg.name, case)
            assert np.isfinite(value.astype(np.float64)).all(), (arg.name, case)
        for name, original in before.items():
            np.testing.assert_array_equal(inputs[name], original, f"reference changed {name}")
        expected_outputs(reference, spec, resolved, inputs)  # the engine accepts them too


def run_reference(name: str, folder: Path = TEMPLATE_DIR, **inputs: Any) -> dict[str, Any]:
    """Call a template's (or fixture's) reference directly with hand-made inputs."""
    return load_reference(load_spec(folder / name / f"{name}.toml"))(**inputs)


RNG = np.random.default_rng(20260)


def normal(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    """Standard normal values of a dtype."""
    return RNG.standard_normal(shape).astype(dtype)


def test_vector_add_reference_is_the_float32_sum() -> None:
    a, b = normal(1001), normal(1001)
    np.testing.assert_array_equal(run_reference("vector_add", a=a, b=b, n=1001)["c"], a + b)


def test_saxpy_reference() -> None:
    x, y = normal(777), normal(777)
    got = run_reference("saxpy", x=x, y=y, alpha=2.5, n=777)["y"]
    np.testing.assert_allclose(got, np.float32(2.5) * x + y, rtol=1e-6, atol=1e-6)


def test_reduce_sum_reference_adds_to_the_accumulator() -> None:
    x = normal(5003)
    got = run_reference("reduce_sum", x=x, total=np.array([7.0], np.float32), n=5003)["total"]
    assert got.shape == (1,)
    assert abs(float(got[0]) - (float(np.sum(x, dtype=np.float64)) + 7.0)) < 1e-4


def test_softmax_reference_rows_are_distributions_and_shift_invariant() -> None:
    x = normal(6, 37)
    y = run_reference("softmax", x=x, rows=6, cols=37)["y"]
    np.testing.assert_allclose(y.sum(axis=1), 1.0, rtol=1e-6)
    assert (y > 0).all() and (y.argmax(axis=1) == x.argmax(axis=1)).all()
    shifted = run_reference("softmax", x=x + np.float32(40), rows=6, cols=37)["y"]
    np.testing.assert_allclose(shifted, y, rtol=1e-5, atol=1e-7)
    huge = run_reference("softmax", x=x * np.float32(1e4), rows=6, cols=37)["y"]
    assert np.isfinite(huge).all()
    np.testing.assert_allclose(huge.sum(axis=1), 1.0, rtol=1e-6)


def test_layernorm_reference_normalises_each_row() -> None:
    x = normal(5, 301) * np.float32(3) + np.float32(10)
    ones, zeros = np.ones(301, np.float32), np.zeros(301, np.float32)
    y = run_reference("layernorm", x=x, gamma=ones, beta=zeros, rows=5, cols=301,
                      eps=1e-5)["y"].astype(np.float64)
    np.testing.assert_allclose(y.mean(axis=1), 0.0, atol=1e-5)
    np.testing.assert_allclose(y.var(axis=1), 1.0, rtol=1e-4)
    gamma, beta = normal(301), normal(301)
    got = run_reference("layernorm", x=x, gamma=gamma, beta=beta, rows=5, cols=301, eps=1e-5)
    x64 = x.astype(np.float64)
    norm = (x64 - x64.mean(1, keepdims=True)) / np.sqrt(x64.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(got["y"], norm * gamma + beta, rtol=1e-5, atol=1e-5)


def test_rmsnorm_reference_gives_unit_root_mean_square() -> None:
    x = normal(4, 129)
    y = run_reference("rmsnorm", x=x, w=np.ones(129, np.float32), rows=4, cols=129,
                      eps=1e-5)["y"].astype(np.float64)
    np.testing.assert_allclose(np.sqrt((y * y).mean(axis=1)), 1.0, rtol=1e-4)
    w = normal(129)
    scaled = run_reference("rmsnorm", x=x * np.float32(4), w=w, rows=4, cols=129, eps=1e-5)
    plain = run_reference("rmsnorm", x=x, w=w, rows=4, cols=129, eps=1e-5)
    np.testing.assert_allclose(scaled["y"], plain["y"], rtol=1e-4, atol=1e-5)


def test_transpose_reference_twice_is_the_identity() -> None:
    x = normal(33, 31)
    y = run_reference("transpose", x=x, rows=33, cols=31)["y"]
    assert y.shape == (31, 33) and y[4, 20] == x[20, 4]
    np.testing.assert_array_equal(run_reference("transpose", x=y, rows=31, cols=33)["y"], x)


def test_matmul_reference_agrees_with_the_matmul_operator() -> None:
    a, b = normal(17, 29), normal(29, 13)
    got = run_reference("matmul", A=a, B=b, M=17, N=13, K=29)["C"]
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)
    eye = np.eye(29, dtype=np.float32)
    np.testing.assert_array_equal(run_reference("matmul", A=a, B=eye, M=17, N=29, K=29)["C"], a)


def test_scan_reference_ends_with_the_row_sum_and_differences_back_to_x() -> None:
    x = normal(3, 1025)
    y = run_reference("scan", x=x, rows=3, cols=1025)["y"].astype(np.float64)
    np.testing.assert_allclose(y[:, -1], x.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(y[:, 0], x[:, 0])
    np.testing.assert_allclose(np.diff(y, axis=1), x[:, 1:], atol=1e-4)


def test_histogram_reference_counts_every_byte_once() -> None:
    data = RNG.integers(0, 256, 10007).astype(np.uint8)
    start = np.arange(256, dtype=np.uint32)
    got = run_reference("histogram", data=data, hist=start, n=10007)["hist"]
    counts, _ = np.histogram(data, bins=256, range=(0, 256))
    np.testing.assert_array_equal(got, counts + start)
    assert int(got.sum()) == 10007 + int(start.sum())


def test_bias_gelu_reference_is_close_to_the_exact_erf_gelu() -> None:
    x, bias = normal(9, 65, dtype=np.float16), normal(65, dtype=np.float16)
    got = run_reference("bias_gelu", x=x, bias=bias, rows=9, cols=65)["y"].astype(np.float64)
    v = x.astype(np.float64) + bias.astype(np.float64)
    exact = 0.5 * v * (1.0 + np.vectorize(math.erf)(v / math.sqrt(2.0)))
    # The tanh form is within 5e-4 of the erf form; float16 rounding adds up to 2^-11 relative.
    np.testing.assert_allclose(got, exact, rtol=1e-3, atol=1e-3)
    edges = np.array([[0.0, 8.0, -8.0]], np.float16)
    y = run_reference("bias_gelu", x=edges, bias=np.zeros(3, np.float16), rows=1, cols=3)["y"]
    np.testing.assert_array_equal(y, np.array([[0.0, 8.0, 0.0]], np.float16))


def test_conv1d_reference_agrees_with_numpy_convolve() -> None:
    for n, ksize in ((1, 3), (2, 4), (50, 7), (30, 61)):
        x, w = normal(n), normal(ksize)
        got = run_reference("conv1d", x=x, w=w, n=n, ksize=ksize)["y"]
        left = ksize // 2
        full = np.convolve(x.astype(np.float64), w.astype(np.float64)[::-1])
        np.testing.assert_allclose(got, full[ksize - 1 - left:ksize - 1 - left + n],
                                   rtol=1e-5, atol=1e-5)
    delta = np.zeros(5, np.float32)
    delta[2] = 1.0
    x = normal(40)
    np.testing.assert_array_equal(run_reference("conv1d", x=x, w=delta, n=40, ksize=5)["y"], x)


def test_linear_leaky_relu_reference_is_the_layer_written_out_per_element() -> None:
    batch, ins, outs = 5, 23, 9
    x, weight, bias = RNG.random((batch, ins)).astype(np.float32), normal(outs, ins), normal(outs)
    got = run_reference("linear_leaky_relu", x=x, weight=weight, bias=bias, multiplier=2.0,
                        negative_slope=0.1, batch=batch, in_features=ins, out_features=outs)["out"]
    for b in range(batch):
        for n in range(outs):
            v = 2.0 * (math.fsum(float(x[b, k]) * float(weight[n, k]) for k in range(ins))
                       + float(bias[n]))
            assert got[b, n] == pytest.approx(v if v >= 0 else 0.1 * v, rel=1e-6, abs=1e-7)
    assert (got < 0).any() and (got > 0).any()  # both sides of the activation were seen
    # A slope of 1 and a multiplier of 1 leave the plain linear layer.
    plain = run_reference("linear_leaky_relu", x=x, weight=weight, bias=bias, multiplier=1.0,
                          negative_slope=1.0, batch=batch, in_features=ins, out_features=outs)
    np.testing.assert_allclose(plain["out"], x @ weight.T + bias, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", [n for n in FIXTURE_VERDICTS
                                  if n not in ("shared_race", "read_past_end")])
def test_vector_add_shaped_fixtures_have_a_correct_reference(name: str) -> None:
    a, b = normal(300), normal(300)
    c = run_reference(name, HOSTILE_DIR, a=a, b=b, n=300)["c"]
    np.testing.assert_array_equal(c, a + b)


def test_shared_race_fixture_reference_sums_each_block() -> None:
    x = normal(600)
    got = run_reference("shared_race", HOSTILE_DIR, x=x, n=600)["partial"]
    expected = np.add.reduceat(x.astype(np.float64), [0, 256, 512])
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_read_past_end_fixture_reference_is_a_matmul() -> None:
    a, b = normal(5, 19), normal(19, 3)
    got = run_reference("read_past_end", HOSTILE_DIR, A=a, B=b, M=5, N=3, K=19)["C"]
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)
