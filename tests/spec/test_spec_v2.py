"""Spec version 2: several [[launch]] tables, scratch buffers and template entries; every
version 1 spec means what it meant; every problem names its launch."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from app.base.paths import RESOURCES
from app.spec.cases import CaseError, resolve
from app.spec.edit import update_spec_text
from app.spec.model import SpecError, entry_name, load_spec, parse_spec_text
from app.spec.writing import spec_to_toml

ARGS = '''
[[arg]]
name = "x"
kind = "in"
dtype = "float32"
shape = ["n"]

[[arg]]
name = "partial"
kind = "scratch"
dtype = "float32"
shape = ["cdiv(n, 256)"]

[[arg]]
name = "total"
kind = "out"
dtype = "float32"
shape = ["1"]

[[arg]]
name = "n"
kind = "scalar"
dtype = "int32"
value = "n"
'''
TAIL = '''
[reference]
python = "ref.py"

[verify]
cases = [{ n = 1000 }]
'''
TWO_LAUNCHES = '''
[[launch]]
entry = "partial_sums"
args = ["x", "partial", "n"]
grid = ["cdiv(n, 256)"]
block = ["256"]

[[launch]]
entry = "finish"
args = ["partial", "total", "n"]
grid = ["1"]
block = ["BLOCK"]
shared_bytes = "4 * 32"
'''


def parse(text: str) -> object:
    """A spec parsed without looking for its files."""
    return parse_spec_text(text, Path("."), check_files=False)


def problems(text: str) -> list[str]:
    """The problems a spec text has, as users read them."""
    with pytest.raises(SpecError) as caught:
        parse(text)
    return [str(p) for p in caught.value.problems]


def spec_text(launches: str = TWO_LAUNCHES, args: str = ARGS, kernel: str = "") -> str:
    """A whole spec of the parts given."""
    return f'[kernel]\nsource = "k.cu"\n{kernel}\n{args}\n{launches}\n{TAIL}'


def test_two_launches_parse_in_order_with_their_own_args_and_shapes() -> None:
    spec = parse(spec_text(TWO_LAUNCHES.replace("BLOCK", "256")))
    assert spec.version == 2
    assert [launch.entry for launch in spec.launches] == ["partial_sums", "finish"]
    assert spec.launches[1].args == ("partial", "total", "n")
    assert spec.entries == ("partial_sums", "finish")
    assert spec.entry == "partial_sums" and spec.grid == ("cdiv(n, 256)",)
    resolved = resolve(spec, {"n": 1000})
    assert [r.grid for r in resolved.launches] == [(4, 1, 1), (1, 1, 1)]
    assert resolved.launches[1].shared_bytes == 128
    assert resolved.shapes["partial"] == (4,)


def test_a_version_1_spec_is_one_launch_of_its_entry_with_every_argument() -> None:
    spec = load_spec(RESOURCES / "kernels" / "vector_add" / "vector_add.toml")
    assert spec.version == 1 and spec.launch_tables == ()
    (launch,) = spec.launches
    assert launch.entry == spec.entry and launch.args == tuple(a.name for a in spec.args)
    assert launch.grid == spec.grid and launch.block == spec.block


def test_a_version_2_spec_round_trips_through_its_toml(tmp_path: Path) -> None:
    spec = load_spec(RESOURCES / "kernels" / "two_pass_sum" / "two_pass_sum.toml")
    text = spec_to_toml(spec)
    assert "[[launch]]" in text and 'kind = "scratch"' in text
    again = parse_spec_text(text, spec.base_dir, check_files=False)
    assert again.launches == spec.launches and again.args == spec.args


def test_launches_without_args_take_every_argument_and_the_kernel_entry() -> None:
    launches = ('[[launch]]\ngrid = ["1"]\nblock = ["1"]\n\n'
                '[[launch]]\ngrid = ["2"]\nblock = ["1"]\n')
    spec = parse(spec_text(launches, kernel='entry = "step"'))
    assert [launch.entry for launch in spec.launches] == ["step", "step"]
    assert spec.launches[0].args == ("x", "partial", "total", "n")


@pytest.mark.parametrize(("change", "expected"), [
    (('"partial", "total", "n"]', '"partial", "totl", "n"]'),
     "launch[1] (finish).args: 'totl' is not the name of an [[arg]]"),
    (('"partial", "total", "n"]', '"partial", "partial", "total"]'),
     "launch[1] (finish).args: 'partial' is passed twice"),
    (('entry = "finish"\n', ''), "launch[1].entry: missing"),
    (('entry = "finish"', 'entry = "finish;"'), "launch[1] (finish;).entry: 'finish;' is not a "
                                                "function name"),
    (('grid = ["1"]', 'grid = ["1 +"]'), "launch[1] (finish).grid[0]"),
])
def test_each_launch_problem_names_its_launch(change: tuple[str, str], expected: str) -> None:
    text = spec_text(TWO_LAUNCHES.replace("BLOCK", "256").replace(*change))
    assert any(p.startswith(expected) for p in problems(text)), problems(text)


def test_a_buffer_no_launch_takes_is_a_problem() -> None:
    text = spec_text(TWO_LAUNCHES.replace("BLOCK", "256").replace(
        'args = ["partial", "total", "n"]', 'args = ["partial", "n"]'))
    assert "arg (total): no [[launch]] takes this buffer" in " ".join(problems(text))


def test_a_case_missing_a_variable_of_the_second_launch_names_that_launch() -> None:
    found = problems(spec_text())  # BLOCK is used by launch 1 and defined by no case
    assert any("does not define 'BLOCK', used in launch[1] (finish).block" in p
               for p in found), found


def test_a_resolution_error_names_the_launch() -> None:
    spec = parse(spec_text().replace("cases = [{ n = 1000 }]",
                                     "cases = [{ n = 1000, BLOCK = 2048 }]"))
    with pytest.raises(CaseError, match=r"launch\[1\] \(finish\)\.block\[0\] is 2048"):
        resolve(spec, {"n": 1000, "BLOCK": 2048})


def test_scratch_has_no_init_and_is_neither_input_nor_output() -> None:
    text = spec_text(TWO_LAUNCHES.replace("BLOCK", "256"),
                     ARGS.replace('shape = ["cdiv(n, 256)"]',
                                  'shape = ["cdiv(n, 256)"]\ninit = "zeros"'))
    assert any("partial).init: a scratch buffer is poisoned" in p for p in problems(text))
    spec = parse(spec_text(TWO_LAUNCHES.replace("BLOCK", "256")))
    partial = spec.arg("partial")
    assert partial.is_buffer and partial.is_scratch and not partial.is_output


@pytest.mark.parametrize("entry", ["scale<float, 4>", "ns::scale<__half, 8>", "tile<16, 16, true>",
                                   "sum<(4 > 2)>"])
def test_template_instantiations_are_entries(entry: str) -> None:
    launches = TWO_LAUNCHES.replace("BLOCK", "256").replace('"finish"', f'"{entry}"')
    spec = parse(spec_text(launches))
    assert spec.launches[1].entry == entry and spec.version == 2
    assert entry_name(entry) == entry.split("<")[0].split("::")[-1]


@pytest.mark.parametrize("entry", ["scale<float, 4", "scale<float>>", "scale(float)", "1scale",
                                   "scale<float>; int x"])
def test_malformed_entries_are_refused(entry: str) -> None:
    text = (f'[kernel]\nsource = "k.cu"\nentry = "{entry}"\n{ARGS}\n'
            f'[launch]\ngrid = ["1"]\nblock = ["1"]\n{TAIL}')
    assert any(p.startswith("[kernel].entry:") for p in problems(text))


def test_too_many_launches_are_refused() -> None:
    launch = '[[launch]]\nentry = "k"\ngrid = ["1"]\nblock = ["1"]\n'
    assert any("17 [[launch]] tables; a run has 1 to 16" in p
               for p in problems(spec_text(launch * 17)))


def test_every_template_folder_still_loads(tmp_path: Path) -> None:
    for template in sorted(p for p in (RESOURCES / "kernels").iterdir() if p.is_dir()):
        folder = tmp_path / template.name
        shutil.copytree(template, folder)
        specs = sorted(folder.glob("*.toml"))
        assert specs, template
        for spec_path in specs:
            load_spec(spec_path)


def test_an_edited_second_launch_saves_in_place_keeping_the_comments() -> None:
    path = RESOURCES / "kernels" / "two_pass_sum" / "two_pass_sum.toml"
    spec = load_spec(path)
    first, second = spec.launches
    edited = spec.with_launches((first, replace(second, block=("128",))))
    text = update_spec_text(path.read_text("utf-8"), edited)
    assert text.count("#") == path.read_text("utf-8").count("#")
    again = parse_spec_text(text, spec.base_dir, path)
    assert again.launches[1].block == ("128",) and again.launches[0] == first
    assert again == edited


def test_replacing_the_first_launch_fields_moves_the_first_launch() -> None:
    spec = load_spec(RESOURCES / "kernels" / "two_pass_sum" / "two_pass_sum.toml")
    moved = replace(spec, block=("512",))
    assert moved.launches[0].block == ("512",) and moved.launches[1] == spec.launches[1]


def test_one_launch_of_every_argument_stays_a_version_1_spec() -> None:
    spec = load_spec(RESOURCES / "kernels" / "vector_add" / "vector_add.toml")
    (launch,) = spec.launches
    again = spec.with_launches((replace(launch, grid=("7",)),))
    assert again.version == 1 and again.grid == ("7",)
    assert "[[launch]]" not in spec_to_toml(again)
    two = spec.with_launches((launch, launch))
    assert two.version == 2 and "[[launch]]" in spec_to_toml(two)
