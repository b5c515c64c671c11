"""Inputs, poison, guard zones and comparison rules, on arrays (no worker needed)."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from app.engine.verify import buffers, checks
from app.spec.cases import resolve
from app.spec.dtypes import lookup
from app.spec.model import parse_spec_text

SPEC = '''
[kernel]
source = "k.cu"
entry = "k"
[[arg]]
name = "x"
kind = "in"
dtype = "{dtype}"
shape = ["rows", "cols"]
init = "{init}"
[[arg]]
name = "y"
kind = "out"
dtype = "{dtype}"
shape = ["rows", "cols"]
[launch]
grid = ["1"]
block = ["1"]
[reference]
python = "r.py"
[verify]
cases = [{{ rows = 3, cols = 5 }}]
'''


def spec_for(tmp_path: Path, dtype: str = "float32", init: str = "normal"):
    """A two-buffer spec with the given input dtype and init."""
    (tmp_path / "k.cu").write_text("")
    (tmp_path / "r.py").write_text("")
    spec = parse_spec_text(SPEC.format(dtype=dtype, init=init), tmp_path)
    return spec, resolve(spec, spec.cases[0])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_float_poison_is_nan(dtype: str) -> None:
    values = buffers.poison(lookup(dtype), 4).astype(np.float64)
    assert np.isnan(values).all()


def test_integer_poison_is_the_a5_byte_pattern() -> None:
    assert buffers.poison(lookup("int32"), 2).view(np.uint8).tolist() == [0xA5] * 8


def test_inputs_are_deterministic_per_seed_and_differ_between_seeds(tmp_path: Path) -> None:
    spec, resolved = spec_for(tmp_path)
    first = buffers.generate_inputs(spec, resolved, seed=0, case_index=0)["x"]
    again = buffers.generate_inputs(spec, resolved, seed=0, case_index=0)["x"]
    other = buffers.generate_inputs(spec, resolved, seed=1, case_index=0)["x"]
    assert first.shape == (3, 5) and first.dtype == np.float32
    assert np.array_equal(first, again) and not np.array_equal(first, other)


@pytest.mark.parametrize(("dtype", "init", "low", "high"), [
    ("float32", "uniform(-2, 3)", -2, 3), ("int32", "randint(-3, 3)", -3, 3),
    ("uint8", "randint(-5, 300)", 0, 255), ("float32", "uniform", 0, 1),
    ("int8", "normal", -8, 7), ("bfloat16", "randint(1, 4)", 1, 4)])
def test_init_ranges(tmp_path: Path, dtype: str, init: str, low: float, high: float) -> None:
    spec, resolved = spec_for(tmp_path, dtype, init)
    values = buffers.generate_inputs(spec, resolved, 0, 0)["x"].astype(np.float64)
    assert values.min() >= low and values.max() <= high


def test_arange_ones_zeros(tmp_path: Path) -> None:
    for init, expected in [("arange", np.arange(15).reshape(3, 5)), ("ones", np.ones((3, 5))),
                           ("zeros", np.zeros((3, 5)))]:
        spec, resolved = spec_for(tmp_path, "float32", init)
        assert np.array_equal(buffers.generate_inputs(spec, resolved, 0, 0)["x"], expected)


def test_image_layout_and_data_view(tmp_path: Path) -> None:
    spec, resolved = spec_for(tmp_path)
    inputs = buffers.generate_inputs(spec, resolved, 0, 0)
    image = buffers.image_for(spec.args[0], resolved, inputs, 4096, b"salt")
    assert image.size == 4096 * 2 + 15 * 4
    before, after = buffers.expected_guards(spec.args[0], 4096, b"salt")
    assert np.array_equal(image[:4096], before) and np.array_equal(image[-4096:], after)
    assert np.array_equal(buffers.data_of(image, spec.args[0], resolved, 4096), inputs["x"])
    out = buffers.image_for(spec.args[1], resolved, inputs, 4096, b"salt")
    assert np.isnan(buffers.data_of(out, spec.args[1], resolved, 4096)).all()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_float_guards_are_nans_that_no_arithmetic_reproduces(dtype: str) -> None:
    numpy_type = lookup(dtype).numpy
    guard = buffers.guard_fill(dtype, 4096, b"run-1", "a", "after").view(numpy_type)
    assert np.isnan(guard.astype(np.float64)).all()  # a read past the end poisons the output
    other = buffers.guard_fill(dtype, 4096, b"run-1", "c", "after").view(numpy_type)
    later = buffers.guard_fill(dtype, 4096, b"run-2", "a", "after").view(numpy_type)
    assert not np.array_equal(guard.view(np.uint8), other.view(np.uint8))
    assert not np.array_equal(guard.view(np.uint8), later.view(np.uint8))
    bits = guard.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[guard.itemsize])
    assert ((bits & 1) == 1).all() and ((bits & 2) == 0).all()  # never a canonical NaN


def test_a_store_of_guard_derived_nans_past_the_end_is_caught() -> None:
    """The CPU backend's off-by-one: c[n] = a[n] + b[n], all three past the end."""
    salt = buffers.new_salt()
    a = buffers.guard_fill("float32", 64, salt, "a", "after").view(np.float32)
    b = buffers.guard_fill("float32", 64, salt, "b", "after").view(np.float32)
    image = np.concatenate([buffers.guard_fill("float32", 64, salt, "c", "before"),
                            np.zeros(16, dtype=np.uint8),
                            buffers.guard_fill("float32", 64, salt, "c", "after")])
    expected = (image[:64].copy(), image[80:].copy())
    assert checks.check_guards("c", image, 64, 16, expected) is None
    with np.errstate(invalid="ignore"):
        image[80:84] = (a[:1] + b[:1]).view(np.uint8)
    finding = checks.check_guards("c", image, 64, 16, expected)
    assert finding is not None and finding.kind == "guard_zone"


def test_guard_check_reports_bytes_before_and_after() -> None:
    image = np.full(100, 0xFF, dtype=np.uint8)
    expected = (image[:40].copy(), image[60:].copy())
    assert checks.check_guards("y", image, 40, 20, expected) is None
    image[60] = 0  # first byte after the data
    image[39] = 0  # last byte before it
    finding = checks.check_guards("y", image, 40, 20, expected)
    assert finding is not None and finding.count == 2
    assert "first at byte 0 past the end" in finding.message
    assert "first at byte 1 before it" in finding.message


def test_small_outputs_get_a_proportionally_small_default_atol() -> None:
    """A softmax over 4099 columns that drops one term: outputs ~2e-4, errors ~6e-8."""
    rng = np.random.default_rng(0)
    expected = (rng.random(4099) * 4e-4).astype(np.float32)
    actual = (expected * (1 + 3e-4)).astype(np.float32)
    findings = checks.check_output("y", actual, expected, "float32", None, None)
    assert [f.kind for f in findings] == ["mismatch"]
    assert checks.check_output("y", actual, expected, "float32", None, 1e-5) == []  # spec's own
    big = rng.standard_normal(4099).astype(np.float32)
    assert checks.check_output("y", big + 1e-6, big, "float32", None, None) == []


def test_an_infinite_answer_reports_an_infinite_error() -> None:
    expected = np.ones(8, dtype=np.float32)
    actual = expected.copy()
    actual[3] = np.inf
    finding = checks.check_output("y", actual, expected, "float32", None, None)[0]
    assert finding.max_abs_error == np.inf and finding.max_rel_error == np.inf
    assert "largest errors: absolute inf, relative inf" in finding.describe()


def test_unchanged_inputs_compare_bytes_so_nan_inputs_count_as_unchanged() -> None:
    original = np.array([1.0, np.nan, 3.0], dtype=np.float32)
    assert checks.check_unchanged("x", original, original.copy()) is None
    changed = original.copy()
    changed[2] = 4.0
    finding = checks.check_unchanged("x", original, changed)
    assert finding is not None and finding.first_indices == [[2]]
    assert finding.expected == [3.0] and finding.actual == [4.0]


def test_tolerance_uses_atol_plus_rtol_times_reference() -> None:
    expected = np.array([100.0, 1.0, 0.0], dtype=np.float32)
    inside = np.array([100.0009, 1.0 + 1.5e-5, 9e-6], dtype=np.float32)
    assert checks.check_output("y", inside, expected, "float32", None, None) == []
    outside = np.array([100.0, 1.0 + 3e-5, 0.0], dtype=np.float32)
    findings = checks.check_output("y", outside, expected, "float32", None, None)
    assert [f.kind for f in findings] == ["mismatch"] and findings[0].first_indices == [[1]]
    assert checks.check_output("y", outside, expected, "float32", 1e-4, None) == []


def test_nan_and_inf_must_sit_exactly_where_the_reference_has_them() -> None:
    expected = np.array([np.nan, np.inf, 1.0, -np.inf], dtype=np.float32)
    assert checks.check_output("y", expected.copy(), expected, "float32", None, None) == []
    for position, value in [(0, 0.0), (1, -np.inf), (2, np.nan), (3, 5.0)]:
        actual = expected.copy()
        actual[position] = value
        findings = checks.check_output("y", actual, expected, "float32", None, None)
        assert findings and findings[0].first_indices == [[position]], (position, value)


def test_unwritten_elements_are_told_apart_from_wrong_ones() -> None:
    dtype = lookup("float32")
    actual = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    actual[1:2] = buffers.poison(dtype, 1)
    expected = np.array([1.0, 2.0, 4.0], dtype=np.float32)
    kinds = {f.kind: f for f in checks.check_output("y", actual, expected, "float32", 0, 0)}
    assert kinds["unwritten"].first_indices == [[1]]
    assert kinds["mismatch"].first_indices == [[2]]  # the unwritten one is not counted twice


def test_integers_compare_exactly_and_bfloat16_uses_its_tolerance() -> None:
    expected = np.array([5, -3], dtype=np.int32)
    assert checks.check_output("y", expected.copy(), expected, "int32", None, None) == []
    findings = checks.check_output("y", expected + 1, expected, "int32", None, None)
    assert findings[0].count == 2 and "exact" in findings[0].message
    reference = np.array([1.0, 2.0], dtype=ml_dtypes.bfloat16)
    close = np.array([1.0078125, 2.0], dtype=ml_dtypes.bfloat16)
    assert checks.check_output("y", close, reference, "bfloat16", None, None) == []


def test_an_off_by_one_is_told_as_the_element_it_hit_whatever_its_bytes() -> None:
    """Issue 25, point 5: c[16] written in a 16-element float32 buffer is "index 16", one
    element, whether 3 or 4 of its bytes differ from the guard's."""
    guard = 64
    for value in (np.float32(1.5), np.float32(0.0)):
        image = np.full(2 * guard + 64, 0xA5, dtype=np.uint8)
        image[guard + 64 + 4: guard + 64 + 8] = 0  # c[17]: a second element past the end
        expected = (image[:guard].copy(), image[guard + 64:].copy())
        image[guard + 64 + 4: guard + 64 + 8] = 0xA5
        image[guard + 64: guard + 68] = np.array([value]).view(np.uint8)
        image[guard + 64 + 1] = 0xA5  # one byte that happens to match
        finding = checks.check_guards("c", image, guard, 64, expected, itemsize=4)
        assert finding is not None and finding.count == 2
        assert finding.first_indices == [[16], [17]]
        assert "2 elements past the end changed: index 16, 17 of c, which holds 16 elements" \
            in finding.message
    image = np.full(2 * guard + 64, 0xA5, dtype=np.uint8)
    expected = (image[:guard].copy(), image[guard + 64:].copy())
    image[guard - 8] = 0  # c[-2]
    finding = checks.check_guards("c", image, guard, 64, expected, itemsize=4)
    assert finding is not None and "the nearest 2 elements before index 0" in finding.message


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")  # a bfloat16 NaN
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32", "uint8"])
def test_an_output_equal_bit_for_bit_has_no_finding_and_one_bit_off_is_still_caught(
        dtype: str) -> None:
    numpy_type = lookup(dtype).numpy
    expected = np.arange(-8, 8).astype(np.float64).astype(numpy_type)
    assert checks.check_output("c", expected.copy(), expected, dtype, None, None) == []
    poisoned = expected.copy()
    poisoned[3] = buffers.poison(lookup(dtype), 1)[0]  # one element the kernel never wrote
    kinds = [f.kind for f in checks.check_output("c", poisoned, expected, dtype, None, None)]
    assert kinds == ["unwritten"]
    off = expected.copy()
    off.view(np.dtype(f"u{off.itemsize}"))[5] ^= 1 << (8 * off.itemsize - 2)  # a high bit
    assert [f.kind for f in checks.check_output("c", off, expected, dtype, None, None)] == \
        ["mismatch"]
