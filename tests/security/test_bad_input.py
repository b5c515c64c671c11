"""Bad values in a spec or on the command line end as bad usage (exit 2) with one message
naming the field or flag: never a traceback, never "the kernel failed" (exit 1)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from app.engine.verify import buffers, memory
from app.engine.verify.results import RunResult
from app.engine.worker import stderr_log
from app.spec import cases, expr, inits
from app.spec.dtypes import lookup
from app.spec.model import SpecError, load_spec, parse_spec_text

ROOT = Path(__file__).resolve().parents[2]
VECTOR_ADD = ROOT / "resources" / "kernels" / "vector_add"


def kernel_studio(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI as a real process."""
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True,
                          timeout=300, check=False, cwd=ROOT)


def spec_copy(folder: Path, old: str, new: str) -> Path:
    """vector_add copied into `folder`, its spec with `old` replaced by `new` once."""
    for item in VECTOR_ADD.iterdir():
        shutil.copy(item, folder / item.name)
    path = folder / "vector_add.toml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return path


def assert_usage_error(done: subprocess.CompletedProcess[str], *names: str) -> None:
    """Exit 2, no traceback, and every name mentioned in the output."""
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "Traceback" not in output, output
    for name in names:
        assert name in output, output


# --- expressions: every intermediate result is a finite real number of sensible size --------


@pytest.mark.parametrize(("text", "message"), [
    ("0 ** -1", "raises zero to a negative power"),
    ("1e300 ** 2", "overflows"),
    ("(-1) ** 0.5", "is not a real number"),
    ("1e308 * 10", "is not a finite number"),
    ("1e999", "is not a finite number"),
    ("n ** 100", "out of range"),
    ("2 ** 10 ** 9", "exponent 1000000000 is too large"),
    ("(2 ** 80) ** 128", "out of range"),
    ("1e200 * 1e200 - 1", "is not a finite number"),
    ("cdiv(n, 0.0)", "divides by zero"),
    ("n % 0", "divides by zero"),
    ("max(n, -(2 ** 81))", "out of range"),
])
def test_expressions_refuse_values_that_are_not_finite_numbers(text: str, message: str) -> None:
    with pytest.raises(expr.ExprError, match=message):
        expr.evaluate(text, {"n": 7})


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 2**100])
def test_a_variable_that_is_not_a_sensible_number_is_refused(value: float) -> None:
    with pytest.raises(expr.ExprError, match="variable 'n'"):
        expr.evaluate("n + 1", {"n": value})


def test_large_decimals_stay_usable_while_finite() -> None:
    assert expr.evaluate("3.4e38", {}) == 3.4e38
    assert expr.evaluate("2 ** -128", {}) > 0


@pytest.mark.parametrize(("old", "new", "field"), [
    ('"cdiv(n, 256)"', '"0 ** -1"', "[launch].grid[0]"),
    ('"cdiv(n, 256)"', '"1e300 ** 2"', "[launch].grid[0]"),
    ('"cdiv(n, 256)"', '"(-1) ** 0.5"', "[launch].grid[0]"),
    ('shape = ["n"]', 'shape = ["n * 2 ** 81"]', "arg (a).shape[0]"),
    ('value = "n"', 'value = "n * 2 ** 40"', "arg (n).value"),
])
def test_bad_launch_and_shape_expressions_exit_2(tmp_path: Path, old: str, new: str,
                                                 field: str) -> None:
    done = kernel_studio("verify", str(spec_copy(tmp_path, old, new)), "--backend", "cpu")
    assert_usage_error(done, field)


def test_a_float_scalar_must_fit_its_dtype(tmp_path: Path) -> None:
    text = (VECTOR_ADD / "vector_add.toml").read_text().replace(
        'dtype = "int32"\nvalue = "n"', 'dtype = "float16"\nvalue = "n * 1e6"')
    spec = parse_spec_text(text, VECTOR_ADD)
    with pytest.raises(cases.CaseError, match=r"arg \(n\).value: .* does not fit in float16"):
        cases.resolve(spec, {"n": 1})


# --- inits: checked against the buffer's dtype when the spec loads, and before drawing -----


@pytest.mark.parametrize(("init", "dtype", "message"), [
    ("randint(5, 1)", "int32", "low bound must be below the high bound"),
    ("randint(3, 3)", "int32", "low bound must be below the high bound"),
    ("randint(1e30, 2e30)", "int64", "no whole number in"),
    ("randint(1e30, 2e30)", "float32", "no whole number in"),
    ("randint(300, 400)", "uint8", "fits uint8"),
    ("randint(0.5, 3)", "int32", "must be whole numbers"),
    ("uniform(nan, 1)", "float32", "is not a finite number"),
    ("uniform(1, inf)", "float32", "is not a finite number"),
    ("uniform(-inf, 0)", "float64", "is not a finite number"),
    ("uniform(1e39, 1e40)", "float32", "no value in the range fits float32"),
    ("uniform(-1.7e308, 1.7e308)", "float64", "wider than float64"),
    ("uniform(a, 2)", "float32", "is not a number"),
    ("gaussian", "float32", "unknown init"),
])
def test_inits_that_cannot_make_values_are_refused(init: str, dtype: str, message: str) -> None:
    with pytest.raises(inits.InitError, match=message.replace("(", r"\(")):
        inits.parse_init(init, lookup(dtype))


@pytest.mark.parametrize("init", ["randint(5, 1)", "randint(1e30, 2e30)", "uniform(nan, 1)",
                                  "uniform(1, inf)"])
def test_bad_inits_exit_2_naming_the_field(tmp_path: Path, init: str) -> None:
    path = spec_copy(tmp_path, 'init = "normal"', f'init = "{init}"')
    assert_usage_error(kernel_studio("verify", str(path), "--backend", "cpu"), "arg[0] (a).init")


def test_randint_draws_from_lo_to_hi_excluded_and_clips_to_the_dtype() -> None:
    rng = np.random.Generator(np.random.SFC64(1))
    low_high = buffers._generate("randint(0, 2)", (10_000,), lookup("int32"), rng)
    assert set(np.unique(low_high).tolist()) == {0, 1}
    clipped = buffers._generate("randint(-5, 1000)", (10_000,), lookup("uint8"), rng)
    assert clipped.min() >= 0 and clipped.max() <= 255
    top = buffers._generate("randint(18446744073709551000, 18446744073709551615)", (100,),
                            lookup("uint64"), rng)
    assert int(top.min()) >= 18446744073709551000


def test_a_spec_built_without_the_parser_is_checked_before_drawing(tmp_path: Path) -> None:
    spec = load_spec(spec_copy(tmp_path, "seeds = 3", "seeds = 1"))
    bad = replace(spec, args=(replace(spec.args[0], init="randint(9, 1)"), *spec.args[1:]))
    resolved = cases.resolve(bad, {"n": 4})
    with pytest.raises(inits.InitError, match="low bound must be below"):
        buffers.generate_inputs(bad, resolved, 0, 0)


# --- tolerances, case values, nesting ---------------------------------------------------------


@pytest.mark.parametrize(("old", "new", "field"), [
    ("seeds = 3", "seeds = 3\nrtol = nan", "[verify].rtol"),
    ("seeds = 3", "seeds = 3\natol = inf", "[verify].atol"),
    ("seeds = 3", "seeds = 3\natol = -1e-3", "[verify].atol"),
    ("{ n = 1 }", "{ n = nan }", "[verify].cases[0].n"),
    ("{ n = 1 }", "{ n = inf }", "[verify].cases[0].n"),
    ("case = { n = 16_777_216 }", "case = { n = -inf }", "[bench].case.n"),
])
def test_non_finite_numbers_in_a_spec_exit_2(tmp_path: Path, old: str, new: str,
                                             field: str) -> None:
    done = kernel_studio("verify", str(spec_copy(tmp_path, old, new)), "--backend", "cpu")
    assert_usage_error(done, field)


@pytest.mark.parametrize("nested", [
    "x = " + "[" * 100_000 + "]" * 100_000,
    "x = " + "{a = " * 100_000 + "1" + "}" * 100_000,
    "[" + ".".join(["a"] * 5_000) + "]\nb = 1",
])
def test_deeply_nested_toml_is_refused_with_a_message(tmp_path: Path, nested: str) -> None:
    path = tmp_path / "deep.toml"
    path.write_text(nested + "\n")
    with pytest.raises(SpecError, match="nested more than 16 levels"):
        load_spec(path)
    assert_usage_error(kernel_studio("verify", str(path)), "toml: ")


def test_deep_nesting_inside_a_known_field_is_refused(tmp_path: Path) -> None:
    path = spec_copy(tmp_path, "seeds = 3", "seeds = " + "[" * 30 + "]" * 30)
    with pytest.raises(SpecError, match="nested more than 16 levels"):
        load_spec(path)


# --- flags --------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["verify", "bench"])
@pytest.mark.parametrize("value", ["nan", "-1", "0", "inf", "1e12", "ten"])
def test_timeouts_must_be_finite_and_positive(command: str, value: str) -> None:
    spec = str(VECTOR_ADD / "vector_add.toml")
    done = kernel_studio(command, spec, "--backend", "cpu", "--timeout", value)
    assert_usage_error(done, "--timeout")


@pytest.mark.parametrize(("flag", "value"), [("--budget-ms", "nan"), ("--noise", "nan"),
                                             ("--sweep", "n=1,inf"), ("--case", "n=nan")])
def test_bench_numbers_must_be_finite(flag: str, value: str) -> None:
    done = kernel_studio("bench", str(VECTOR_ADD / "vector_add.toml"), flag, value)
    assert_usage_error(done, flag)


def test_compile_timeout_must_be_finite() -> None:
    done = kernel_studio("compile", str(VECTOR_ADD / "vector_add.cu"), "--timeout", "nan")
    assert_usage_error(done, "--timeout")


@pytest.mark.parametrize("arch", ["sm_1", "compute_90", "sm_x", "sm_10"])
def test_an_impossible_arch_is_bad_usage_not_a_compile_error(arch: str) -> None:
    done = kernel_studio("verify", str(VECTOR_ADD / "vector_add.toml"), "--backend", "cpu",
                         "--arch", arch)
    assert_usage_error(done, "--arch", arch)


# --- memory: a case is refused before it runs when this machine cannot hold it ---------------


def test_the_estimate_covers_buffers_copies_and_checks() -> None:
    spec = load_spec(VECTOR_ADD / "vector_add.toml")
    resolved = cases.resolve(spec, {"n": 1 << 26})
    need = memory.need(spec, resolved, buffers.GUARD_BYTES)
    data = 3 * 4 << 26
    # Measured on the CPU backend (benchmarks/memory_estimate.py): this case peaked at 4.0 GiB.
    assert 5 * data < need.host < 8 * data
    assert need.device >= data and need.files >= data


def test_a_case_above_the_available_memory_is_unverified_naming_both_figures(
        tmp_path: Path) -> None:
    spec = load_spec(VECTOR_ADD / "vector_add.toml")
    resolved = cases.resolve(spec, {"n": 1 << 26})
    need = memory.need(spec, resolved, buffers.GUARD_BYTES)
    reason = memory.problem(resolved, need, {}, tmp_path, available=need.host)
    assert reason is not None
    assert "case {n=67108864}" in reason and memory.gib(need.host) in reason
    assert "available now" in reason
    assert memory.problem(resolved, need, {}, tmp_path, available=2 * need.host) is None


def test_a_case_larger_than_the_free_space_for_buffer_files_is_refused(tmp_path: Path) -> None:
    spec = load_spec(VECTOR_ADD / "vector_add.toml")
    resolved = cases.resolve(spec, {"n": 1000})
    free = memory.free_space(tmp_path)
    assert free is not None
    need = memory.Need(host=1, files=free + 1, device=1)
    reason = memory.problem(resolved, need, {}, tmp_path, available=None)
    assert reason is not None and str(tmp_path) in reason and "free" in reason


def test_a_case_larger_than_the_gpu_is_refused() -> None:
    spec = load_spec(VECTOR_ADD / "vector_add.toml")
    resolved = cases.resolve(spec, {"n": 1 << 28})
    need = memory.need(spec, resolved, buffers.GUARD_BYTES)
    device = {"name": "a small GPU", "total_memory": 2 << 30}
    reason = memory.problem(resolved, need, device, Path("/"), available=None)
    assert reason is not None and "GPU memory" in reason and "a small GPU" in reason


def test_verify_refuses_a_case_this_machine_cannot_hold_before_running_it() -> None:
    available = memory.available_memory()
    assert available is not None
    per_element = 12 * 7  # vector_add: an estimate of about 7 times its 12 bytes per element
    n = int(available / per_element * 1.5)
    if n * 12 > cases.MAX_TOTAL_BYTES:
        pytest.skip("this machine has more memory than the largest case a spec may ask for")
    started = time.monotonic()
    done = kernel_studio("verify", str(VECTOR_ADD / "vector_add.toml"), "--backend", "cpu",
                         "--case", f"n={n}")
    output = done.stdout + done.stderr
    assert done.returncode == 3, output
    assert f"case {{n={n}}} needs about" in output and "available now" in output
    assert time.monotonic() - started < 60  # refused up front, nothing was allocated


def test_running_out_of_memory_or_space_is_an_unverified_run() -> None:
    def allocate() -> RunResult:
        np.empty(1 << 62, dtype=np.uint8)
        raise AssertionError("allocated 4 EiB")

    def fill() -> RunResult:
        np.zeros(1 << 16, dtype=np.uint8).tofile("/dev/full")
        raise AssertionError("wrote to /dev/full")

    for run in (allocate, fill):
        result = memory.guarded(run, {"n": 1}, 0)
        assert result.status == "unverified" and result.message


def test_a_worker_log_keeps_its_head_and_tail_and_says_what_was_cut(tmp_path: Path) -> None:
    code = ("import sys\nsys.stderr.write('first line\\n')\n"
            "for i in range(200_000): sys.stderr.write(f'line {i:06d} of noise\\n')\n"
            "sys.stderr.write('last line\\n')\n")
    head_file = open(tmp_path / "worker.log", "wb")  # noqa: SIM115 - the capture writes to it
    process = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE)
    capture = stderr_log.capture(process.stderr, head_file)
    assert capture is not None
    process.wait(timeout=60)
    text = capture.text()
    head_file.close()
    assert text.startswith("first line") and text.endswith("last line")
    assert f"[... {capture.log.cut} bytes cut ...]" in text and capture.log.cut > 4_000_000
    assert len(text) < stderr_log.HEAD_BYTES + stderr_log.TAIL_BYTES + 100
    assert (tmp_path / "worker.log").stat().st_size == stderr_log.HEAD_BYTES


def test_a_short_worker_log_is_kept_whole_and_read_without_delay() -> None:
    process = subprocess.Popen([sys.executable, "-c", "import sys, time\n"
                                "sys.stderr.write('hello from the kernel\\n'); sys.stderr.flush()\n"
                                "print(flush=True); time.sleep(30)"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        capture = stderr_log.capture(process.stderr)
        assert capture is not None and process.stdout is not None
        process.stdout.readline()  # the process is alive, and has written its line
        assert capture.text() == "hello from the kernel"
    finally:
        process.kill()
        process.wait()
