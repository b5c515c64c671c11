"""Saving a spec into its file keeps the file's comments and layout; only changed values are
rewritten, and the result always reads back as the spec that was saved."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from app.base.paths import RESOURCES
from app.spec.edit import update_spec_text
from app.spec.model import Arg, Spec, load_spec, parse_spec_text
from app.spec.writing import spec_to_toml

TEMPLATES = sorted((RESOURCES / "kernels").glob("*/*.toml"))


def comments(text: str) -> list[str]:
    """Every comment of a TOML text, from '#' to the end of its line."""
    return [line[line.index("#"):] for line in text.splitlines() if "#" in line]


def read_back(text: str, spec: Spec) -> Spec:
    """The text parsed as the spec file it replaces."""
    assert spec.path is not None
    return parse_spec_text(text, spec.base_dir, spec.path)


@pytest.mark.parametrize("path", TEMPLATES, ids=[p.parent.name for p in TEMPLATES])
def test_an_unchanged_spec_leaves_every_template_byte_for_byte(path: Path) -> None:
    text = path.read_text()
    assert update_spec_text(text, load_spec(path)) == text


@pytest.mark.parametrize("path", TEMPLATES, ids=[p.parent.name for p in TEMPLATES])
def test_changed_values_round_trip_and_comments_survive(path: Path) -> None:
    text = path.read_text()
    spec = load_spec(path)
    changed = dataclasses.replace(spec, block=("128",), seeds=spec.seeds + 1, rtol=0.25,
                                  cases=(*spec.cases, dict(spec.cases[0])))
    updated = update_spec_text(text, changed)
    assert read_back(updated, changed) == changed
    assert comments(updated) == comments(text)
    assert 'block = ["128"]' in updated and "rtol = 0.25" in updated


def test_a_changed_value_keeps_its_own_comment_and_untouched_numbers_keep_their_spelling() -> None:
    path = RESOURCES / "kernels" / "vector_add" / "vector_add.toml"
    spec = load_spec(path)
    changed = dataclasses.replace(spec, bench_bytes="16 * n")
    updated = update_spec_text(path.read_text(), changed)
    assert 'bytes = "16 * n"        # read a and b, write c: 4 bytes each' in updated
    assert "{ n = 1_000_003 }" in updated and "{ n = 16_777_216 }" in updated
    assert spec_to_toml(spec) != path.read_text()  # the canonical writer would lose all that


def test_arguments_added_removed_and_reordered_keep_their_comments() -> None:
    path = RESOURCES / "kernels" / "vector_add" / "vector_add.toml"
    text = path.read_text().replace('name = "b"\n', 'name = "b"    # the second input\n')
    spec = parse_spec_text(text, path.parent, path)
    a, b, c, n = spec.args
    extra = Arg("alpha", "scalar", "float32", value="2")
    changed = dataclasses.replace(spec, args=(b, a, c, extra, n))
    updated = update_spec_text(text, changed)
    assert read_back(updated, changed) == changed
    assert 'name = "b"    # the second input' in updated
    assert updated.index('name = "b"') < updated.index('name = "a"')
    removed = dataclasses.replace(spec, args=(a, c, n))
    assert read_back(update_spec_text(text, removed), removed) == removed


def test_a_removed_section_and_defaults_left_out_by_the_file() -> None:
    path = RESOURCES / "kernels" / "vector_add" / "vector_add.toml"
    text = path.read_text().replace('shared_bytes = "0"\n', "")
    spec = parse_spec_text(text, path.parent, path)
    no_bench = dataclasses.replace(spec, bench_case={}, bench_bytes=None, bench_flops=None)
    updated = update_spec_text(text, no_bench)
    assert "[bench]" not in updated and "shared_bytes" not in updated  # the default stays implicit
    assert read_back(updated, no_bench) == no_bench
    assert comments(updated) == comments(text)[:-2]  # the bench lines' comments went with them


def test_text_that_is_not_toml_gets_the_canonical_layout() -> None:
    path = RESOURCES / "kernels" / "vector_add" / "vector_add.toml"
    spec = load_spec(path)
    assert update_spec_text("[kernel\nbroken", spec) == spec_to_toml(spec)
