"""spec-check's warnings in words a person can act on: an atol larger than most expected values
says so with the median and the atol to use, never an absurd percentage; a bench case far past
every verified size of a variable the outputs are reduced over says which, by how much, and
what to add."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from app.base.paths import RESOURCES
from app.engine.verify.speccheck import check_spec_file
from app.engine.verify.specwarnings import WarningKind, bench_beyond_verified
from app.spec.model import load_spec


def copy_with(tmp_path: Path, name: str, old: str, new: str) -> Path:
    """A template copied to tmp_path with `old` replaced by `new` once in its spec."""
    folder = tmp_path / name
    shutil.copytree(RESOURCES / "kernels" / name, folder)
    spec = folder / f"{name}.toml"
    text = spec.read_text()
    assert text.count(old) >= 1, old
    spec.write_text(text.replace(old, new, 1))
    return spec


def percentages(text: str) -> list[float]:
    """Every percentage a message prints."""
    return [float(p) for p in re.findall(r"([0-9.e+]+)%", text)]


def test_an_atol_above_tiny_outputs_is_told_in_plain_words(tmp_path: Path) -> None:
    """softmax over inputs spread from -60 to 60: most outputs are far below 1e-6."""
    spec = copy_with(tmp_path, "softmax", 'init = "normal"', 'init = "uniform(-60, 60)"')
    spec.write_text(spec.read_text().replace("seeds = 3", "seeds = 3\natol = 1e-6"))
    loose = [w for w in check_spec_file(spec).warnings if w.kind == WarningKind.LOOSE_ATOL]
    assert loose, "no loose-atol warning"
    message = loose[0].message
    assert "atol 1e-06 is larger than most expected |y| values (median" in message
    assert "lower atol to about" in message and "barely checked" in message
    assert all(p <= 100 for p in percentages(message)), message
    suggested = float(re.search(r"lower atol to about ([0-9.e+-]+)", message).group(1))  # type: ignore[union-attr]
    assert 0 < suggested < 1e-6


def test_a_bench_case_far_past_the_verified_reduction_is_warned(tmp_path: Path) -> None:
    """The issue's matmul: verified at K <= 65, benched at K = 2048."""
    cases = ("cases = [{ M = 1, N = 1, K = 1 }, { M = 17, N = 33, K = 7 }, "
             "{ M = 31, N = 1, K = 65 }]\n")
    spec = copy_with(tmp_path, "matmul", "cases = [", cases + "old_cases = [")
    text = spec.read_text()
    start = text.index("old_cases = [")
    spec.write_text(text[:start] + text[text.index("]\n", text.index("K = 1031")) + 2:])
    spec.write_text(re.sub(r"case = \{[^}]*\}", "case = { M = 2048, N = 2048, K = 2048 }",
                           spec.read_text(), count=1))
    found = bench_beyond_verified(load_spec(spec))
    assert [w.kind for w in found] == [WarningKind.BENCH_BEYOND_VERIFIED]  # K only, not M or N
    message = found[0].message
    assert "bench case K=2048 is 32x the largest verified K (65)" in message
    assert "add a verify case near K=2048" in message
    result = check_spec_file(spec)
    assert any(w.kind == WarningKind.BENCH_BEYOND_VERIFIED for w in result.warnings)


def test_sizes_the_outputs_grow_with_are_not_warned(tmp_path: Path) -> None:
    """vector_add benched at 16x its largest case: n sizes the output, nothing is reduced."""
    assert bench_beyond_verified(load_spec(RESOURCES / "kernels" / "vector_add" /
                                           "vector_add.toml")) == []
