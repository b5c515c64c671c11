"""`teach data` from the user's own sources: folders allowed one by one (`teach allow`) and the
proposals the assistant kept. Every candidate goes through the real verifier (CPU backend),
spec-check and the held-out guard like the generator's; nothing is taken on trust."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from app.assist.prompting.examples import record_verified
from app.assist.tasks.suite import load_suite
from app.assist.teach.data import DATA_NAME, Skipped, build
from app.assist.teach.guard import TASK_KERNELS, Guard
from app.assist.teach.sources import (
    allowed_candidates,
    allowed_folders,
    proposal_candidates,
    sources_path,
)
from app.base.paths import RESOURCES
from app.cli.entry import main

KERNELS = RESOURCES / "kernels"


@pytest.fixture(autouse=True)
def data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data folder of this test's own (the allowed list and kept proposals live there)."""
    folder = tmp_path / "data"
    monkeypatch.setenv("KERNEL_STUDIO_DATA", str(folder))
    return folder


def _copy_template(name: str, into: Path) -> Path:
    """A copy of a shipped template's folder; its spec's path."""
    shutil.copytree(KERNELS / name, into / name)
    return into / name / f"{name}.toml"


def _data(out: Path, *extra: str) -> list[str]:
    """`teach data` arguments for the user's sources alone, verified on the CPU."""
    return ["teach", "data", "--out", str(out), "--count", "4", "--no-templates",
            "--no-generated", "--backend", "cpu", "--json", *extra]


def _summary(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """The --json summary printed by the last `teach data`."""
    summary: dict[str, Any] = json.loads(capsys.readouterr().out)
    return summary


def _entries(out: Path) -> list[tuple[str, str]]:
    """(family, entry) of each example written."""
    lines = (out / DATA_NAME).read_text("utf-8").splitlines()
    return [(json.loads(line)["family"], json.loads(line)["entry"]) for line in lines]


def test_a_folder_not_allowed_gives_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _copy_template("vector_add", tmp_path / "mine")
    code = main(_data(tmp_path / "out"))
    assert code == 3, "nothing written: the folder was never allowed"
    summary = _summary(capsys)
    assert summary["written"] == 0 and summary["sources"] == {}
    assert allowed_folders() == []


def test_an_allowed_folder_gives_its_passing_kernel_and_names_what_it_dropped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "mine"
    _copy_template("vector_add", mine)
    broken = _copy_template("saxpy", mine).with_suffix(".cu")
    broken.write_text(broken.read_text("utf-8").replace("i < n;", "i < n - 1;"), "utf-8")
    (mine / "odd").mkdir()
    (mine / "odd" / "odd.cu").write_text("", "utf-8")
    (mine / "odd" / "odd.toml").write_text('[kernel]\nsource = "odd.cu"\nentry = 3\n', "utf-8")
    (mine / "pyproject.toml").write_text("[tool.x]\ny = 1\n", "utf-8")  # not a spec: unnamed
    _copy_template("vector_add", tmp_path / "other")  # never allowed
    assert main(["teach", "allow", str(mine)]) == 0
    assert "3 spec(s)" in capsys.readouterr().out
    before = (mine / "vector_add" / "vector_add.cu").read_bytes()
    assert main(_data(tmp_path / "out")) == 0
    summary = _summary(capsys)
    assert _entries(tmp_path / "out") == [("user", "vector_add")]
    assert summary["sources"] == {"user": {"tried": 2, "written": 1, "dropped": 1,
                                           "unreadable": 1}}
    [dropped] = summary["dropped"]
    assert dropped.startswith("user saxpy: verification: mismatch")
    [unreadable] = summary["unreadable"]
    assert "odd.toml" in unreadable and "[launch]" in unreadable
    assert (mine / "vector_add" / "vector_add.cu").read_bytes() == before, "left untouched"


def test_a_held_out_task_copied_into_an_allowed_folder_is_refused(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    shutil.copytree(RESOURCES / "tasks" / "tanh_f32", mine / "tanh_f32")
    shutil.copy(TASK_KERNELS / "tanh_f32.cu", mine / "tanh_f32")
    renamed = mine / "smooth"  # under another name and with its description gone
    renamed.mkdir()
    spec = (mine / "tanh_f32" / "tanh_f32.toml").read_text("utf-8")
    spec = spec.split("[kernel]", 1)[1].replace("tanh_f32", "smooth")
    (renamed / "smooth.toml").write_text("[kernel]" + spec, "utf-8")
    kernel = (TASK_KERNELS / "tanh_f32.cu").read_text("utf-8").replace("tanh_f32", "smooth")
    (renamed / "smooth.cu").write_text(kernel, "utf-8")
    shutil.copy(mine / "tanh_f32" / "tanh_f32_ref.py", renamed / "smooth_ref.py")
    summary = build(tmp_path / "out", 2, allowed_candidates([mine]), Guard.of(load_suite()),
                    lambda _line: None)
    assert summary.written == 0 and summary.failed_verify == 0, "refused before any run"
    assert summary.sources["user"]["refused"] == 2
    assert "smooth: its kernel is a near copy of the held-out task tanh_f32" in summary.refusals
    assert "tanh_f32: shows the held-out task tanh_f32" in summary.refusals


def test_a_kept_proposal_enters_and_one_changed_since_is_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    heldout = load_suite().heldout()
    passed = _copy_template("vector_add", tmp_path / "attempt")
    kept = record_verified(passed, "c[i] = a[i] + b[i] over n floats", heldout)
    assert kept is not None
    edited = record_verified(_copy_template("saxpy", tmp_path / "attempt2"), "saxpy", heldout)
    assert edited is not None
    (edited / "saxpy.cu").write_text("// changed after it passed\n", "utf-8")
    assert main(_data(tmp_path / "out")) == 0
    summary = _summary(capsys)
    assert _entries(tmp_path / "out") == [("proposal", "vector_add")]
    assert summary["sources"]["proposal"] == {"tried": 1, "written": 1, "unreadable": 1}
    assert summary["unreadable"][0].startswith(f"proposal {edited.name}: ")
    line = json.loads((tmp_path / "out" / DATA_NAME).read_text("utf-8"))
    assert line["description"] == "c[i] = a[i] + b[i] over n floats"
    assert main(_data(tmp_path / "out2", "--no-proposals")) == 3


def test_without_a_sandbox_an_allowed_spec_runs_only_when_trusted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNEL_STUDIO_SANDBOX", "none")
    mine = tmp_path / "mine"
    _copy_template("vector_add", mine)
    summary = build(tmp_path / "out", 1, allowed_candidates([mine]), Guard.of(load_suite()),
                    lambda _line: None)
    assert summary.written == 0 and summary.failed_verify == 1
    assert "not trusted" in summary.dropped[0] and "kernel-studio trust" in summary.dropped[0]


def test_allow_disallow_and_sources_keep_a_list_in_the_data_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "mine"
    _copy_template("vector_add", mine)
    assert main(["teach", "allow", str(mine)]) == 0
    assert main(["teach", "allow", str(mine)]) == 0
    assert "already allowed" in capsys.readouterr().out
    assert main(["teach", "allow", str(tmp_path / "nowhere")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    assert main(["teach", "sources", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["allowed"] == [{"folder": str(mine.resolve()), "exists": True, "specs": 1}]
    shutil.rmtree(mine)
    assert main(["teach", "sources"]) == 0 and "GONE" in capsys.readouterr().out
    gone = list(allowed_candidates())
    assert isinstance(gone[0], Skipped) and "is gone" in gone[0].why
    assert main(["teach", "disallow", str(mine)]) == 0 and allowed_folders() == []
    assert main(["teach", "disallow", str(mine)]) == 2
    sources_path().write_text("{not json", "utf-8")
    assert main(["teach", "data", "--out", str(tmp_path / "out")]) == 2
    assert str(sources_path()) in capsys.readouterr().err
    assert list(proposal_candidates(tmp_path / "no-proposals")) == []


# Host code hidden from both verification paths (NVRTC and the CPU emulation define
# __CUDA_ARCH__): the kernel passes, and what rides along was never compiled.
HIDDEN_HOST_CODE = """    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
#ifndef __CUDA_ARCH__
}
#include <cstdlib>
__attribute__((constructor)) static void run_me() { system("echo hello");
#endif
}
"""


def test_a_kernel_that_tests_its_compiler_is_never_kept_or_taught(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = _copy_template("vector_add", tmp_path / "attempt")
    source = spec.with_suffix(".cu")
    head = source.read_text("utf-8").split("{", 1)[0]
    source.write_text(head + "{\n" + HIDDEN_HOST_CODE, "utf-8")
    assert record_verified(spec, "c[i] = a[i] + b[i] over n floats",
                           load_suite().heldout()) is None
    mine = tmp_path / "mine"
    shutil.copytree(spec.parent, mine / "vector_add")
    assert main(["teach", "allow", str(mine)]) == 0
    capsys.readouterr()
    assert main(_data(tmp_path / "out")) == 3  # nothing written
    summary = _summary(capsys)
    assert summary["dropped_compiler_dependent"] == 1
    assert "tests which compiler reads it (#ifndef __CUDA_ARCH__)" in summary["dropped"][0]
