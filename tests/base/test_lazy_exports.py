"""Package exports loaded on first use (app/base/lazy.py): importing one light module of the
assistant's packages loads none of their heavy neighbours, and every exported name still
resolves, as `from app.assist import X` has always given it."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("app.assist", "app.assist.evaluation")


def loaded_after(statement: str) -> set[str]:
    """The app's modules a fresh interpreter has loaded after running `statement`."""
    code = (f"import sys; {statement}; "
            "print(' '.join(m for m in sys.modules if m.startswith('app')))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    return set(done.stdout.split())


def test_the_eval_store_comes_without_the_session_prompts_or_engine() -> None:
    loaded = loaded_after("import app.assist.evaluation.store")
    assert "app.assist.evaluation.store" in loaded
    assert not loaded & {"app.assist.model.session", "app.assist.prompting.prompts",
                         "app.assist.evaluation.grade", "app.engine.verify.runs"}


def test_a_name_loads_its_module_when_first_used() -> None:
    loaded = loaded_after("from app.assist import ModelSession")
    assert "app.assist.model.session" in loaded
    assert "app.assist.evaluation.grade" not in loaded


@pytest.mark.parametrize("name", PACKAGES)
def test_every_exported_name_resolves(name: str) -> None:
    package = importlib.import_module(name)
    for export in package.__all__:
        assert getattr(package, export) is not None, export
    with pytest.raises(AttributeError, match="has no attribute 'nothing_here'"):
        package.nothing_here  # noqa: B018 - the lookup itself is what is tested
