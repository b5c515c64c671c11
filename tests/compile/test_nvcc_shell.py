"""nvcc never sees a shell-active string. nvcc runs its tools through `sh -c` with each argument
in double quotes, so `$(...)` in a -D value or a file name used to run: these payloads, given to
a real nvcc, must not create their marker file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.base import system
from app.compile import backends, compile_file, includes
from app.compile.service import SERVICE

pytestmark = pytest.mark.skipif(system.find_tool("nvcc") is None, reason="needs nvcc")
KERNEL = '#include "helper.h"\n__global__ void k(float* a) { a[0] = SCALE * HELP; }\n'


@pytest.fixture
def marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A path that a payload `$(touch $KS_MARK)` would create: the compile child is restarted
    so that it (and any shell nvcc starts) sees KS_MARK. The sandbox is off: it would contain
    the payload too, and these tests are about the layer below it."""
    path = tmp_path / "pwned"
    monkeypatch.setenv("KS_MARK", str(path))
    monkeypatch.setenv("KERNEL_STUDIO_SANDBOX", "none")
    SERVICE.close()
    yield path
    SERVICE.close()


def _folder(base: Path, name: str) -> Path:
    """A kernel folder called `name` with helper.h in inc/."""
    folder = base / name
    (folder / "inc").mkdir(parents=True)
    (folder / "inc" / "helper.h").write_text("#define HELP 2.0f\n")
    return folder


def test_a_file_name_with_a_command_compiles_and_runs_nothing(tmp_path: Path,
                                                                marker: Path) -> None:
    folder = _folder(tmp_path, "f$(touch $KS_MARK)`touch $KS_MARK`")
    path = folder / "n$(touch $KS_MARK).cu"
    path.write_text(KERNEL)
    result = compile_file(path, backend="nvcc", options=["-DSCALE=3", "-Iinc"], use_cache=False)
    assert result.ok, result.message
    assert not marker.exists()
    path.write_text(KERNEL.replace("SCALE", "UNDEFINED_NAME"))
    failed = compile_file(path, backend="nvcc", options=["-DSCALE=3", "-Iinc"], use_cache=False)
    assert [(e.file, e.line) for e in failed.errors] == [("n$(touch $KS_MARK).cu", 2)]
    assert not marker.exists()


def test_a_define_with_a_command_is_refused_by_name(tmp_path: Path, marker: Path) -> None:
    folder = _folder(tmp_path, "k")
    (folder / "k.cu").write_text(KERNEL)
    for payload in ("-DSCALE=$(touch $KS_MARK)", "-DSCALE=1`touch $KS_MARK`",
                    '-DSCALE="$(touch $KS_MARK)"', "-DSCALE=1;touch", "-DSCALE=(2)"):
        result = compile_file(folder / "k.cu", backend="nvcc", options=[payload, "-Iinc"],
                              use_cache=False)
        assert result.stage == "options"
        assert result.message.startswith(f"{payload!r} is refused: a macro's value must be one "
                                         "identifier or number")
    assert not marker.exists()


def test_nvcc_itself_refuses_what_slips_past_the_option_check(tmp_path: Path,
                                                              marker: Path) -> None:
    """The last guard, below the allowlist: the command nvcc would get is checked whole."""
    request = {"source": "__global__ void k(float* a) { a[0] = X; }\n", "program_name": "k.cu",
               "folder": "", "arch": "sm_90", "timeout": 60,
               "cuda_include_dirs": [str(d) for d in includes.cuda_include_dirs()],
               "options": ["-DX=1$(touch $KS_MARK)"]}
    reply = backends.nvcc_compile(request)
    assert reply["status"] == "options"
    assert "would hand to a shell" in reply["message"]
    assert not marker.exists()
    request["options"] = ["-DX=1"]
    assert backends.nvcc_compile(request)["status"] == "ok"
