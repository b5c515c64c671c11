"""`kernel-studio teach data`: a small run through the real verifier (CPU backend) and spec-check,
with a planted near copy of a held-out task refused, a broken kernel dropped and a cancelled run
keeping whole lines."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.assist.tasks.suite import load_suite
from app.assist.teach.candidate import Candidate
from app.assist.teach.data import DATA_NAME, SUMMARY_NAME, build, sha256_text
from app.assist.teach.generate import candidates
from app.assist.teach.guard import TASK_KERNELS, Guard
from app.assist.teach.maps import elementwise
from app.cli.entry import main


@pytest.fixture(scope="module")
def guard() -> Guard:
    """The guard of the shipped suite's held-out tasks."""
    return Guard.of(load_suite())


def _lines(folder: Path) -> list[dict[str, object]]:
    """The training set's examples."""
    return [json.loads(line) for line in (folder / DATA_NAME).read_text("utf-8").splitlines()]


def test_a_small_run_writes_verified_examples_with_the_hashes_of_their_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["teach", "data", "--out", str(tmp_path), "--count", "3", "--seed", "2",
                 "--no-templates", "--backend", "cpu", "--json"])
    assert code == 0
    examples = _lines(tmp_path)
    assert len(examples) == 3 and len({e["entry"] for e in examples}) == 3
    for example in examples:
        hashes = example["sha256"]
        assert isinstance(hashes, dict)
        assert {name: sha256_text(str(example[name])) for name in hashes} == hashes
        assert f'entry = "{example["entry"]}"' in str(example["spec"])
    summary = json.loads(capsys.readouterr().out)
    assert summary["written"] == 3 and not summary["cancelled"]
    assert json.loads((tmp_path / SUMMARY_NAME).read_text("utf-8"))["written"] == 3


def _planted_copy() -> Candidate:
    """The held-out task tanh_f32's kernel under other names: a near copy."""
    source = (TASK_KERNELS / "tanh_f32.cu").read_text("utf-8")
    for old, new in (("tanh_f32", "smooth_act"), ("__restrict__ x", "__restrict__ inp"),
                     ("tanhf(x[i])", "tanhf(inp[i])"), ("__restrict__ y", "__restrict__ o"),
                     ("y[i] =", "o[i] =")):
        source = source.replace(old, new)
    good = elementwise(random.Random(0), "plant")
    return Candidate("activation", 1, "smooth_act", "o[i] = a smooth squashing of inp[i]",
                     source, good.reference, good.args, good.grid, good.block, good.cases)


def test_a_near_copy_of_a_held_out_task_is_refused_and_counted(guard: Guard) -> None:
    planted = _planted_copy()
    assert "tanh_f32" in guard.refuse(planted.entry, planted.description, planted.kernel)
    assert "held-out task" in guard.refuse("k", "y[i] = tanh(x[i]) for every i < n (float32).", "")
    said = guard.refuse("k", "y[i] = tanh(x[i]) for each i < n (float32).", "")
    assert said == "describes the held-out task tanh_f32"
    generated = next(candidates(3))
    assert guard.refuse(generated.entry, generated.description, generated.kernel) == ""


def _with_broken_and_copy() -> Iterator[Candidate]:
    """A kernel that skips the last element, the planted copy, then good candidates."""
    broken = elementwise(random.Random(1), "broken")
    broken.kernel = broken.kernel.replace("if (i < n)", "if (i < n - 1)")
    yield broken
    yield _planted_copy()
    yield from candidates(4, ["elementwise"])


def test_a_broken_example_is_dropped_and_a_copy_refused_both_counted(
        tmp_path: Path, guard: Guard) -> None:
    summary = build(tmp_path, 1, _with_broken_and_copy(), guard, lambda _line: None)
    assert (summary.written, summary.failed_verify, summary.refused_heldout) == (1, 1, 1)
    [kept] = _lines(tmp_path)
    assert kept["entry"] not in ("smooth_act",) and "broken" not in str(kept["entry"])
    assert "smooth_act" in summary.refusals[0]


def _cancelled_after(count: int) -> Iterator[Candidate]:
    """Good candidates, then a Ctrl+C."""
    for number, candidate in enumerate(candidates(5, ["transpose"])):
        if number == count:
            raise KeyboardInterrupt
        yield candidate


def test_a_cancelled_run_keeps_every_whole_example_written(tmp_path: Path, guard: Guard) -> None:
    summary = build(tmp_path, 10, _cancelled_after(2), guard, lambda _line: None)
    assert summary.cancelled
    written = _lines(tmp_path)
    assert len(written) == summary.written >= 1
    assert json.loads((tmp_path / SUMMARY_NAME).read_text("utf-8"))["cancelled"] is True
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("teach-")]


# In a private mount namespace: a tiny file system as the output folder, the run, then what it
# left there copied out before the mount goes away with the namespace.
FULL_DISK_RUN = """set -e
mount -t tmpfs -o size=8k none "$1"
out=$1; keep=$2; shift 2
set +e
"$@"; code=$?
cp "$out/train.jsonl" "$keep" 2>/dev/null
ls -A "$out" > "$keep.list"
exit $code
"""


def test_a_full_disk_ends_with_a_message_and_whole_lines(tmp_path: Path) -> None:
    """The output folder is an 8 KiB file system (a private mount namespace): whatever was
    written stays whole lines, nothing is left half-written, and the run says what to do
    (exit 3) instead of a traceback."""
    import shutil
    import subprocess
    import sys

    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "-m", "true"], capture_output=True, check=False).returncode != 0:
        pytest.skip("no private mount namespace here (needs unshare -m)")
    out = tmp_path / "small"
    out.mkdir()
    command = [sys.executable, "-m", "app", "teach", "data", "--out", str(out), "--count", "8",
               "--seed", "5", "--no-templates", "--family", "elementwise", "--backend", "cpu"]
    keep = tmp_path / "kept.jsonl"
    done = subprocess.run(["unshare", "-m", "sh", "-c", FULL_DISK_RUN, "sh", str(out),
                           str(keep), *command], capture_output=True, text=True, timeout=300,
                          check=False, cwd=Path(__file__).resolve().parents[3])
    assert done.returncode == 3, done.stderr[-2000:]
    assert "free some space" in done.stderr and "Traceback" not in done.stderr
    left = Path(f"{keep}.list").read_text().split()
    assert not [name for name in left if name.startswith("teach-")], "a work folder was left"
    if keep.exists():  # what was written is whole lines
        assert all(json.loads(line) for line in keep.read_text().splitlines())


def test_op_keeps_to_the_named_operations_and_an_unknown_one_is_refused_with_the_list(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    drawn = [c for _n, c in zip(range(12), candidates(3, None, ["gelu", "selu"]), strict=False)]
    assert {c.extra["traits"]["op"] for c in drawn} == {"gelu", "selu"}
    assert {c.family for c in drawn} == {"shaped_map", "strided_map"}
    assert all("erff(" in c.kernel for c in drawn if c.extra["traits"]["op"] == "gelu")
    assert main(["teach", "data", "--op", "gelux", "--out", str(tmp_path)]) == 2
    said = capsys.readouterr().err
    assert "no operation gelux" in said and "gelu_tanh" in said
    assert main(["teach", "data", "--op", "gelu", "--family", "formula",
                 "--out", str(tmp_path)]) == 2
    assert "--family names neither" in capsys.readouterr().err
    assert not (tmp_path / DATA_NAME).exists()
