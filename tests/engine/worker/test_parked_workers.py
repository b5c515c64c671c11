"""Switching kernels keeps their sandboxed workers (issue 25, point 8): a worker whose kernel
folder is not the one in use is parked frozen (every process of its sandbox stopped, so nothing
a kernel left running there can touch the session folder the next worker uses) and woken when
its folder comes back, instead of a new worker starting on every switch."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.base.paths import RESOURCES
from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.verifier import verify_file
from app.engine.worker import freeze
from app.isolation import sandbox


@pytest.mark.skipif(not sandbox.available()[0], reason="needs the sandbox (bubblewrap)")
def test_switching_kernels_wakes_their_frozen_workers(tmp_path: Path) -> None:
    specs = []
    for name in ("vector_add", "saxpy"):
        shutil.copytree(RESOURCES / "kernels" / name, tmp_path / name)
        specs.append(tmp_path / name / f"{name}.toml")
    options = VerifyOptions(backend="cpu")
    with Engine() as engine:
        for spec in [*specs, *specs]:
            assert verify_file(spec, options, engine).passed
            handle = engine.handle("cpu")
            parked = list(handle.parked.values())
            assert all(w.process is not None and {freeze.state(pid) for pid in
                       freeze.process_tree(w.process.pid)} <= {"T", "t"} for w in parked)
        assert handle.starts == 2  # one worker per folder, none started again
        assert [w.readable for w in handle.parked.values()] == [specs[0].parent.resolve()]
        frozen = parked[0].process
    assert frozen is not None and frozen.poll() is not None  # closing the engine ended it too
