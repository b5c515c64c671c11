"""kernel-studio compare through the real CLI: the real compiler (NVRTC), real worker
processes on the CPU backend, a template against a slower and a broken variant."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from review_support import SAXPY, small_copy

from app.base.paths import RESOURCES
from app.cli.entry import main
from app.review.audit import check_log
from app.review.model import CompareReport


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    """Run `kernel-studio compare --json ...`; its exit code and report."""
    code = main(["compare", *argv, "--backend", "cpu", "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_a_template_against_a_slower_and_a_broken_variant(
        variants: dict[str, Path], capsys: pytest.CaptureFixture[str], audit_log: Path) -> None:
    """Every variant is compiled and verified on the same cases and seeds; the broken one
    fails (exit 1); without a GPU nothing is timed, and the report says so."""
    code, data = run_json(capsys, *map(str, variants.values()))
    assert code == 1
    report = CompareReport.from_json(data)
    status = {v.name: v.verdict.status for v in report.variants}
    assert status == {"vector_add": "passed", "strided_add": "passed",
                      "off_by_one": "guard_zone"}
    runs = {v.name: [(r.case, r.seed) for r in v.verdict.runs] for v in report.variants}
    # The baseline's seeds and one drawn for this compare, the same for every variant.
    [fresh] = report.variant("vector_add").verdict.fresh_seeds
    assert runs["vector_add"] == runs["strided_add"] == [
        ({"n": 1}, 0), ({"n": 1}, 1), ({"n": 1}, fresh),
        ({"n": 1025}, 0), ({"n": 1025}, 1), ({"n": 1025}, fresh)]
    fast, slow = report.variant("vector_add").compile, report.variant("strided_add").compile
    assert fast.ok and slow.ok and fast.arch == "sm_90"
    assert slow.instructions > fast.instructions and slow.mix["memory"] > fast.mix["memory"]
    assert fast.occupancy == 1.0 and fast.block_size == 256
    assert report.timing.status == "not_timed" and "GPU" in report.timing.note
    assert report.baseline == "vector_add" and "__global__" in report.variant("off_by_one").source
    entries = check_log(audit_log)
    assert entries.intact and entries.actions == {"compare": 1}


def test_the_terminal_table_names_the_baseline_and_the_missing_timing(
        variants: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """The readable table: verdicts per case, resources, and that timing needs a GPU."""
    paths = [str(variants["vector_add"]), str(variants["strided_add"])]
    code = main(["compare", *paths, "--backend", "cpu", "--baseline", "strided_add"])
    out = capsys.readouterr().out
    assert code == 0
    assert "strided_add *" in out and "3/3 passed" in out and "n=1025" in out
    assert "regs" in out and "not timed" in out


def test_different_argument_lists_are_refused_naming_the_difference(
        variants: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """saxpy is another task: exit 2, and the message says how its arguments differ."""
    saxpy = small_copy(SAXPY, tmp_path)
    code = main(["compare", str(variants["vector_add"]), str(saxpy)])
    err = capsys.readouterr().err
    assert code == 2
    # Named as the variants are (two files may share a name: their folders tell them apart).
    assert "saxpy does not take the arguments of vector_add" in err
    assert "argument 1 (a): name is x instead of a" in err


@pytest.mark.parametrize("argv, message", [
    (["ONE"], "at least two specs"),
    (["ONE", "TWO", "--baseline", "nothing"], "--baseline 'nothing' is none of the variants"),
    (["ONE", "missing.toml"], "missing.toml"),
    (["ONE", "TWO", "--report", "out.txt"], "name an .html file"),
    (["ONE", "TWO", "--sweep", "m=1,2"], "--sweep m=1: 'm' is not a variable of this spec"),
    (["ONE", "TWO", "--sweep", "n=4096,-5"], "--sweep n=-5: "),
])
def test_bad_usage_is_exit_2_with_one_message(
        argv: list[str], message: str, variants: dict[str, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Too few specs, an unknown baseline, a missing spec, a report that is not HTML."""
    names = {"ONE": str(variants["vector_add"]), "TWO": str(variants["strided_add"])}
    code = main(["compare", *(names.get(a, a) for a in argv)])
    err = capsys.readouterr().err
    assert code == 2 and message in err
    assert err.count("\n") <= 2


ONE_BLOCK_SUM = '''extern "C" __global__ void one_block_sum(const float* x, float* total, int n) {
    __shared__ float sums[256];
    float value = 0.0f;
    for (int i = threadIdx.x; i < n; i += 256) value += x[i];
    sums[threadIdx.x] = value;
    __syncthreads();
    for (int step = 128; step > 0; step /= 2) {
        if (threadIdx.x < step) sums[threadIdx.x] += sums[threadIdx.x + step];
        __syncthreads();
    }
    if (threadIdx.x == 0) total[0] = sums[0];
}
'''


def one_launch_variant(folder: Path) -> Path:
    """A one-launch variant of two_pass_sum: the same buffers, no scratch, no block count."""
    source = RESOURCES / "kernels" / "two_pass_sum"
    folder.mkdir()
    (folder / "one_block_sum.cu").write_text(ONE_BLOCK_SUM, "utf-8")
    (folder / "two_pass_sum_ref.py").write_text(
        (source / "two_pass_sum_ref.py").read_text("utf-8").replace("(x, n, blocks)", "(x, n)"),
        "utf-8")
    text = (source / "two_pass_sum.toml").read_text("utf-8")
    head, rest = text.split("[[arg]]", 1)
    args = [a for a in rest.split("[reference]")[0].split("[[arg]]")
            if '"partial"' not in a and '"blocks"' not in a]
    spec = (head.replace("[kernel]", '[kernel]\nentry = "one_block_sum"')
            .replace("two_pass_sum.cu", "one_block_sum.cu")
            + "".join("[[arg]]" + a for a in args).split("[[launch]]")[0]
            + '[launch]\ngrid = ["1"]\nblock = ["256"]\n\n[reference]'
            + text.split("[reference]")[1].replace("1_000_003", "100_003"))
    (folder / "one_block_sum.toml").write_text(spec, "utf-8")
    return folder / "one_block_sum.toml"


def test_a_two_launch_variant_compares_with_a_one_launch_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], audit_log: Path) -> None:
    """Variants of one task may differ in launches, scratch buffers and scalars of their own:
    they get the same inputs, on the same cases and seeds."""
    two = tmp_path / "two"
    shutil.copytree(RESOURCES / "kernels" / "two_pass_sum", two)
    spec = two / "two_pass_sum.toml"
    spec.write_text(spec.read_text("utf-8").replace("1_000_003", "100_003"), "utf-8")
    one = one_launch_variant(tmp_path / "one")
    code, data = run_json(capsys, str(spec), str(one))
    report = CompareReport.from_json(data)
    assert code == 0, data
    assert {v.name: v.verdict.status for v in report.variants} == {
        "two_pass_sum": "passed", "one_block_sum": "passed"}
    runs = [[(r.case, r.seed) for r in v.verdict.runs] for v in report.variants]
    assert runs[0] == runs[1]
