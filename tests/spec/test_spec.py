"""Spec parsing: the docs/spec.md example, every validation message, round trips, resolution."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.spec.cases import CaseError, resolve
from app.spec.edit import save_spec
from app.spec.model import SpecError, load_spec, parse_spec_text
from app.spec.writing import spec_to_toml

DESIGN_EXAMPLE = '''
[kernel]
source = "vector_add.cu"
entry = "vector_add"
options = []

[[arg]]
name = "a"
kind = "in"
dtype = "float32"
shape = ["n"]
init = "normal"

[[arg]]
name = "b"
kind = "in"
dtype = "float32"
shape = ["n"]
init = "uniform(-2, 2.5)"

[[arg]]
name = "c"
kind = "out"
dtype = "float32"
shape = ["n"]

[[arg]]
name = "n"
kind = "scalar"
dtype = "int32"
value = "n"

[launch]
grid = ["cdiv(n, 256)"]
block = ["256"]
shared_bytes = "0"

[reference]
python = "vector_add_ref.py"

[verify]
cases = [{ n = 1 }, { n = 1000 }, { n = 1_000_003 }]
seeds = 3

[bench]
case = { n = 16_777_216 }
bytes = "12 * n"
flops = "n"
'''


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder holding the files the example spec names."""
    (tmp_path / "vector_add.cu").write_text("// kernel\n")
    (tmp_path / "vector_add_ref.py").write_text("def reference(**k):\n    return {}\n")
    return tmp_path


def problems_of(text: str, folder: Path) -> list[str]:
    """The problem strings a spec text gets."""
    with pytest.raises(SpecError) as caught:
        parse_spec_text(text, folder)
    return [str(p) for p in caught.value.problems]


def test_design_example_parses(folder: Path) -> None:
    spec = parse_spec_text(DESIGN_EXAMPLE, folder)
    assert spec.entry == "vector_add"
    assert [a.name for a in spec.args] == ["a", "b", "c", "n"]
    assert spec.args[1].init == "uniform(-2, 2.5)"
    assert spec.cases == ({"n": 1}, {"n": 1000}, {"n": 1_000_003})
    assert spec.bench_case == {"n": 16_777_216}
    assert spec.source_path == folder / "vector_add.cu"


def test_round_trip_gives_the_same_spec(folder: Path) -> None:
    spec = parse_spec_text(DESIGN_EXAMPLE.replace("seeds = 3", "seeds = 2\nrtol = 1e-4"), folder)
    again = parse_spec_text(spec_to_toml(spec), folder)
    assert again == spec
    save_spec(spec, folder / "saved.toml")
    assert load_spec(folder / "saved.toml").args == spec.args


@pytest.mark.parametrize(("change", "expected"), [
    (('kind = "out"', 'kind = "output"'), "arg[2] (c).kind: 'output' is not one of"),
    (('dtype = "float32"\nshape = ["n"]\ninit = "normal"', 'dtype = "float33"\nshape = ["n"]'),
     "arg[0] (a).dtype: 'float33' is not one of"),
    (('init = "normal"', 'init = "gaussian"'), "arg[0] (a).init: unknown init 'gaussian'"),
    (('init = "normal"', 'init = "randint(a, 3)"'), "bound 'a' of 'randint(a, 3)' is not"),
    (('grid = ["cdiv(n, 256)"]', 'grid = ["cdiv(n, 256)", "1", "1", "1"]'),
     "[launch].grid: must be a list of 1 to 3 expressions"),
    (('block = ["256"]', 'block = ["os.system(1)"]'),
     "[launch].block[0]: only min, max and cdiv can be called"),
    (('seeds = 3', 'seeds = 0'), "[verify].seeds: must be a whole number from 1 to 1000"),
    (('seeds = 3', 'seeds = 3\nrtol = -1'), "[verify].rtol: must be a non-negative number"),
    (('cases = [{ n = 1 }, { n = 1000 }, { n = 1_000_003 }]', 'cases = []'),
     "[verify].cases: must be a non-empty list"),
    (('{ n = 1000 }', '{ m = 1000 }'), "[verify].cases[1]: does not define 'n'"),
    (('source = "vector_add.cu"', 'source = "missing.cu"'),
     "[kernel].source: file 'missing.cu' not found"),
    (('source = "vector_add.cu"', 'source = "../etc/passwd"'),
     "[kernel].source: '../etc/passwd' must be a path relative"),
    (('entry = "vector_add"', 'entry = "vector add"'), "[kernel].entry: 'vector add' is not"),
    (('options = []', 'options = "-O3"'), "[kernel].options: must be a list of strings"),
    (('[bench]', '[benchmark]'), "spec.benchmark: unknown key"),
    (('value = "n"', 'value = "n"\nshape = ["n"]'), "arg[3] (n).shape: a scalar has no shape"),
    (('name = "c"\nkind = "out"\ndtype = "float32"\nshape = ["n"]',
      'name = "c"\nkind = "out"\ndtype = "float32"\nshape = ["n"]\ninit = "ones"'),
     "arg[2] (c).init: an out buffer is filled by the kernel"),
    (('name = "b"', 'name = "a"'), "arg (a): duplicate argument name"),
    (('shape = ["n"]\ninit = "normal"', 'shapes = ["n"]'), "arg[0] (a).shapes: unknown key"),
])
def test_each_problem_names_its_field(folder: Path, change: tuple[str, str],
                                      expected: str) -> None:
    text = DESIGN_EXAMPLE.replace(*change, 1)
    assert text != DESIGN_EXAMPLE
    found = problems_of(text, folder)
    assert any(expected in p for p in found), found


def test_all_problems_are_reported_at_once(folder: Path) -> None:
    text = DESIGN_EXAMPLE.replace('kind = "out"', 'kind = "x"').replace("seeds = 3", "seeds = -1")
    found = problems_of(text, folder)
    assert any(p.startswith("arg[2] (c).kind") for p in found), found
    assert any(p.startswith("[verify].seeds") for p in found), found


def test_missing_sections_and_bad_toml(folder: Path) -> None:
    assert problems_of("", folder) == ["file: the spec is empty; start from a template such as "
                                       "resources/kernels/vector_add/vector_add.toml"]
    only_kernel = problems_of('[kernel]\nsource = "vector_add.cu"\nentry = "k"\n', folder)
    assert "[launch]: missing section" in only_kernel
    assert "[launch].grid: missing" not in only_kernel  # said once, for the section
    assert problems_of("[kernel\n", folder)[0].startswith("toml: not valid TOML")


def test_bad_files_get_clear_messages(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="cannot read"):
        load_spec(tmp_path / "absent.toml")
    (tmp_path / "binary.toml").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(SpecError, match="not UTF-8"):
        load_spec(tmp_path / "binary.toml")


def test_resolve_evaluates_a_case(folder: Path) -> None:
    spec = parse_spec_text(DESIGN_EXAMPLE, folder)
    resolved = resolve(spec, {"n": 1025})
    assert resolved.grid == (5, 1, 1) and resolved.block == (256, 1, 1)
    assert resolved.shapes["a"] == (1025,) and resolved.scalars == {"n": 1025}
    assert resolved.nbytes(spec) == 3 * 4 * 1025


@pytest.mark.parametrize(("case", "message"), [
    ({"n": 0}, r"\[launch\].grid\[0\] is 0; it must be from 1"),
    ({"n": 2**40}, "does not fit in int32"),
])
def test_resolve_refuses_impossible_launches(folder: Path, case: dict[str, int],
                                             message: str) -> None:
    spec = parse_spec_text(DESIGN_EXAMPLE, folder)
    with pytest.raises(CaseError, match=message):
        resolve(spec, case)


def test_resolve_refuses_oversized_blocks_and_memory(folder: Path) -> None:
    spec = parse_spec_text(DESIGN_EXAMPLE.replace('block = ["256"]', 'block = ["64", "32"]'),
                           folder)
    with pytest.raises(CaseError, match="2048 threads; at most 1024"):
        resolve(spec, {"n": 10})
    spec = parse_spec_text(DESIGN_EXAMPLE.replace('value = "n"', 'value = "1"'), folder)
    with pytest.raises(CaseError, match="GiB limit"):
        resolve(spec, {"n": 2**31})
