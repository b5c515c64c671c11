"""Helpers shared by the review tests: small private copies of a template and of its variants
(fewer cases, so the real compiler and CPU workers finish quickly)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from app.base.paths import RESOURCES, ROOT

VECTOR_ADD = RESOURCES / "kernels" / "vector_add"
STRIDED_ADD = ROOT / "tests" / "fixtures" / "bench" / "strided_add"
OFF_BY_ONE = ROOT / "tests" / "fixtures" / "hostile" / "off_by_one"
SAXPY = RESOURCES / "kernels" / "saxpy"
SMALL_CASES = "cases = [{ n = 1 }, { n = 1025 }]\nseeds = 2"


def small_copy(folder: Path, into: Path) -> Path:
    """A copy of a kernel folder whose spec verifies two small cases with two seeds; returns
    the spec's path."""
    target = into / folder.name
    shutil.copytree(folder, target)
    spec = next(target.glob("*.toml"))
    text = spec.read_text(encoding="utf-8")
    text = re.sub(r"^cases = .*$", "", text, flags=re.MULTILINE)
    text = re.sub(r"^seeds = .*$", SMALL_CASES, text, flags=re.MULTILINE)
    spec.write_text(text, encoding="utf-8")
    return spec


