"""ml_dtypes (0.6-0.9 s to import on the 2-core machine) loads only for bfloat16: a float32
spec with a float scalar resolves its cases without it, in a fresh process as each of the
window, the job and the worker is; a bfloat16 one loads it, with the right largest value."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESOLVE = ("import sys; from app.spec.model import load_spec; from app.spec.cases import "
           "resolve_each; spec = load_spec({path!r}); resolve_each(spec, list(spec.cases)); "
           "print('ml_dtypes' in sys.modules)")


def printed(code: str) -> list[str]:
    """The words a fresh interpreter running `code` printed."""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    return done.stdout.split()


def test_a_float32_spec_with_a_float_scalar_resolves_without_ml_dtypes() -> None:
    saxpy = ROOT / "resources/kernels/saxpy/saxpy.toml"
    assert 'dtype = "float32"' in saxpy.read_text() and 'kind = "scalar"' in saxpy.read_text()
    assert printed(RESOLVE.format(path=str(saxpy))) == ["False"]


def test_bfloat16_loads_it_and_knows_its_largest_value() -> None:
    code = ("import sys; from app.spec.inits import largest_finite; from app.spec.dtypes "
            "import lookup; print(largest_finite(lookup('bfloat16')) == 3.3895313892515355e38,"
            " largest_finite(lookup('float16')) == 65504.0, 'ml_dtypes' in sys.modules)")
    assert printed(code) == ["True", "True", "True"]
