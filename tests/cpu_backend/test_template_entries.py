"""Template instantiations as entries on the CPU backend, for real (NVRTC's name expressions
for the diagnostics and the lowered names, g++ and the emulation for the runs): the shipped
scale<float, 4> passes, two instances of one template run as two launches, and a wrong
instantiation, a template wrong for one type and an entry naming no single instance fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.base.paths import RESOURCES
from app.engine.verify.runs import Engine, Prepared, VerifyOptions, compile_for
from app.engine.verify.verifier import verify_file
from app.spec.model import load_spec

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "template_entries"
EXPECTED = {"two_instances": "passed", "wrong_width": "unwritten",
            "wrong_for_float": "mismatch", "missing_instance": "compile_error"}


@pytest.fixture(scope="module")
def engine(warm_engine: Engine) -> Engine:
    """The module's warm engine (tests/conftest.py)."""
    return warm_engine


def test_the_template_example_passes_with_its_lowered_name(engine: Engine,
                                                           tmp_path: Path) -> None:
    path = RESOURCES / "kernels" / "scale" / "scale.toml"
    spec = load_spec(path)
    assert spec.entry == "scale<float, 4>"
    prepared = compile_for(spec, "sm_90", tmp_path)
    assert isinstance(prepared, Prepared), prepared
    assert prepared.symbols == {"scale<float, 4>": "_Z5scaleIfLi4EEvPKT_PS0_S0_i"}
    verdict = verify_file(path, VerifyOptions(backend="cpu"), engine)
    assert verdict.status == "passed", verdict.describe()


@pytest.mark.parametrize(("name", "status"), sorted(EXPECTED.items()))
def test_template_entry_fixture_gets_its_verdict(engine: Engine, name: str,
                                                 status: str) -> None:
    verdict = verify_file(FIXTURES / name / "scale.toml", VerifyOptions(backend="cpu"),
                          engine)
    assert verdict.status == status, verdict.describe()
    if name == "missing_instance":
        assert "the entry 'scale<float>' cannot be instantiated" in verdict.message
        assert verdict.diagnostics[0]["file"] == "scale.cu"
