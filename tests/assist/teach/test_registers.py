"""The shaped families (issue 27): examples of every register verify and spec-check for real on
the CPU backend (a sample: a tensor of two or three dims and a strided one per register, with
capped grids, 16-bit types and scalars among them); an N-D kernel bounds its flat index by the
product of the dims, and the spec catches the kernel that stops at the first dim; `teach stats`
counts what a set or the generator covers; reductions over any dim of a 2-D or 3-D tensor
verify, and the kernel that reads the wrong stride fails."""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from app.assist.tasks.suite import load_suite
from app.assist.teach.candidate import Candidate
from app.assist.teach.data import DATA_NAME, build
from app.assist.teach.dimreduce import dim_reduce
from app.assist.teach.guard import Guard
from app.assist.teach.registers import REGISTERS
from app.assist.teach.shaped import shaped_map, strided_map
from app.cli.entry import main


@pytest.fixture(scope="module")
def guard() -> Guard:
    """The guard of the shipped suite."""
    return Guard.of(load_suite())


def _drawn(seed: int) -> Iterator[Candidate]:
    """Shaped and strided candidates, endlessly (three shaped to one strided)."""
    rng = random.Random(seed)
    number = 0
    while True:
        number += 1
        yield (strided_map if number % 4 == 0 else shaped_map)(rng, f"r{number}")


def _sample(register: str) -> list[Candidate]:
    """One N-D (2-D or 3-D) and one strided candidate of a register."""
    picked: dict[str, Candidate] = {}
    for candidate in _drawn(len(register)):
        traits = candidate.extra["traits"]
        kind = "strided" if traits["shape"] == "strided" else traits["shape"]
        if traits["register"] == register and kind in ("2d", "3d", "strided"):
            picked.setdefault("strided" if kind == "strided" else "nd", candidate)
        if len(picked) == 2:
            return list(picked.values())
    raise AssertionError("unreachable")


@pytest.mark.parametrize("register", REGISTERS)
def test_examples_of_each_register_verify_on_the_cpu_backend(
        register: str, tmp_path: Path, guard: Guard) -> None:
    sample = _sample(register)
    summary = build(tmp_path, len(sample), iter(sample), guard, lambda _line: None)
    assert summary.written == len(sample), summary.dropped
    lines = [json.loads(line) for line in (tmp_path / DATA_NAME).read_text().splitlines()]
    assert {line["traits"]["register"] for line in lines} == {register}


def test_the_sample_covers_capped_grids_16_bit_types_and_scalars() -> None:
    traits = [c.extra["traits"] for register in REGISTERS for c in _sample(register)]
    assert any(t["capped"] for t in traits) or any(t["launch"] == "rows" for t in traits)
    assert {t["dtype"] for t in traits} & {"float16", "bfloat16"}
    found = [c.extra["traits"] for _n, c in zip(range(200), _drawn(9), strict=False)]
    assert any(t["capped"] for t in found) and any(t["scalar"] for t in found)
    assert {t["shape"] for t in found} == {"1d", "2d", "3d", "strided"}


def _first_dim_only(candidate: Candidate) -> Candidate:
    """The adapter's old mistake: the flat index stops at the first dim (`i < batch_size`)."""
    dims = [a.name for a in candidate.args if a.kind == "scalar" and a.value == a.name]
    product = " * ".join(dims)
    kernel = candidate.kernel.replace(f"int total = {product};", f"int total = {dims[0]};")
    kernel = kernel.replace(f"i < {product}", f"i < {dims[0]}")
    assert kernel != candidate.kernel
    return replace(candidate, kernel=kernel)


def test_a_flat_kernel_counts_the_product_of_the_dims_and_stopping_at_one_fails(
        tmp_path: Path, guard: Guard) -> None:
    flat = next(c for c in _drawn(3) if c.extra["traits"]["shape"] == "2d"
                and c.extra["traits"]["launch"] == "flat")
    dims = [a.name for a in flat.args if a.kind == "scalar" and a.value == a.name]
    assert " * ".join(dims) in flat.kernel
    summary = build(tmp_path, 1, iter([_first_dim_only(flat)]), guard, lambda _line: None)
    assert (summary.written, summary.failed_verify) == (0, 1)


def test_teach_stats_counts_the_generators_mix_and_a_built_set(
        tmp_path: Path, guard: Guard, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["teach", "stats", "--generated", "300", "--family", "shaped_map",
                 "--family", "strided_map", "--json"]) == 0
    tables = json.loads(capsys.readouterr().out)
    assert set(tables["register"]) == set(REGISTERS)
    assert set(tables["shape"]) == {"1d", "2d", "3d", "strided"}
    assert sum(tables["dtype"].values()) == 300
    build(tmp_path, 2, _drawn(5), guard, lambda _line: None)
    assert main(["teach", "stats", "--data", str(tmp_path / DATA_NAME)]) == 0
    said = capsys.readouterr().out
    assert said.startswith(f"2 examples in {tmp_path / DATA_NAME}") and "register:" in said


def test_teach_stats_says_what_to_do_without_data(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["teach", "stats", "--data", str(tmp_path / "none.jsonl")]) == 2
    assert "make it with kernel-studio teach data" in capsys.readouterr().err


def _reductions(seed: int) -> Iterator[Candidate]:
    """dim_reduce candidates, endlessly."""
    rng = random.Random(seed)
    for number in itertools.count():
        yield dim_reduce(rng, f"d{number}")


def test_reductions_over_a_dim_verify_and_reading_the_wrong_stride_fails(
        tmp_path: Path, guard: Guard) -> None:
    middle = next(c for c in _reductions(2) if "int lead = i / " in c.kernel)
    pytorch = next(c for c in _reductions(3) if c.extra["traits"]["register"] == "pytorch")
    size, x = middle.args[0].shape, middle.args[0].name
    axis = next(k for k, d in enumerate(size) if f"j < {d};" in middle.kernel)
    # The mistake of a kernel that reduces the last dim whatever it was asked: x[i * R + j].
    start = middle.kernel.index(f"{x}[(lead")
    wrong = middle.kernel[:start] + f"{x}[i * {size[axis]} + j]" + middle.kernel[
        middle.kernel.index("]", start) + 1:]
    summary = build(tmp_path, 2, iter([middle, pytorch]), guard, lambda _line: None)
    assert summary.written == 2, summary.dropped
    summary = build(tmp_path / "wrong", 1, iter([replace(middle, kernel=wrong)]), guard,
                    lambda _line: None)
    assert (summary.written, summary.failed_verify) == (0, 1)
