"""bench and compare of specs of several launches, through real worker processes on the selftest
backend (host-clock "kernels"): a sample is the whole sequence on buffers the launches share,
--per-launch reports each launch by entry in the text and the JSON, a one-launch spec's report
keeps its keys, the CPU backend is still refused with its reason (two_pass_sum too), and the
compare report's rows carry the sequence and its launches."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from selftest_spec import BENCH, write_selftest_spec

from app.base.paths import RESOURCES
from app.engine.bench.reports import BenchReport
from app.engine.bench.runner import NO_GPU_HELP, BenchOptions, bench_file
from app.engine.verify.runs import Engine
from app.review.evaluate import timing_from
from app.review.model import CompareReport, Timing, TimingRow
from app.review.text import describe_compare
from app.spec.model import load_spec

QUICK = dict(backend="selftest", budget_ms=60.0, warmup_ms=1.0)
TWO_PASS = RESOURCES / "kernels" / "two_pass_sum" / "two_pass_sum.toml"
# The keys of a one-launch variant's JSON, as bench wrote them before sequences.
V1_VARIANT_KEYS = {"name", "spec_path", "case", "status", "message", "samples_ms", "stats",
                   "stop_reason", "warmup_launches", "bytes", "flops", "gbps", "gflops",
                   "intensity", "bandwidth_share", "fp32_share", "checks", "flags"}
V1_REPORT_KEYS = {"status", "message", "mode", "backend", "device", "environment", "peaks",
                  "sweep_variable", "points", "verification", "flags", "seconds", "exit_code",
                  "flags_all", "charts"}

SEQUENCE = '''[kernel]
source = "k.cu"

[[arg]]
name = "a"
kind = "in"
dtype = "float32"
shape = ["n"]

[[arg]]
name = "tmp"
kind = "scratch"
dtype = "float32"
shape = ["n"]

[[arg]]
name = "c"
kind = "out"
dtype = "float32"
shape = ["n"]

[[arg]]
name = "n"
kind = "scalar"
dtype = "int32"
value = "n"

[[launch]]
entry = "{first}"
args = [{first_args}]
grid = ["cdiv(n, 256)"]
block = ["256"]

[[launch]]
entry = "{second}"
args = [{second_args}]
grid = ["cdiv(n, 256)"]
block = ["256"]

[reference]
python = "ref.py"

[verify]
cases = [{{ n = 1 }}, {{ n = 1025 }}]
seeds = 1

[bench]
case = {{ n = 4096 }}
bytes = "16 * n"
flops = "n"
'''


def sequence_spec(folder: Path, first: str = "copy", second: str = "chatty_copy",
                  in_order: bool = True) -> Path:
    """a -> tmp (scratch) -> c in two selftest launches; `in_order=False` runs the second
    launch's copy first, so c gets the scratch buffer's poison."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "k.cu").write_text("// run by the selftest backend\n")
    (folder / "ref.py").write_text("def reference(a, n):\n    return {'c': a}\n")
    first_args, second_args = '"a", "tmp", "n"', '"tmp", "c", "n"'
    if not in_order:
        first_args, second_args = second_args, first_args
    path = folder / "seq.toml"
    path.write_text(SEQUENCE.format(first=first, second=second, first_args=first_args,
                                    second_args=second_args))
    return path


@pytest.fixture(scope="module")
def engine():
    """One engine (warm workers) for the module."""
    with Engine() as shared:
        yield shared


def test_a_sequence_is_timed_as_one_sample_on_shared_buffers(tmp_path: Path,
                                                             engine: Engine) -> None:
    report = bench_file(sequence_spec(tmp_path), BenchOptions(**QUICK), engine=engine)
    assert report.status == "timed", report.describe()
    [variant] = report.points[0].variants
    assert variant.sequence == ["copy", "chatty_copy"]
    assert variant.launches == []  # not asked for
    # c holds a only if the second launch read what the first wrote into the shared scratch.
    assert [c.status for c in variant.checks] == ["passed"] * 4
    assert variant.checks[0].message == ("first timed run of the sequence on the inputs of seed "
                                         "0: matches the reference")
    assert variant.bytes == 16 * 4096  # [bench] bytes: the whole sequence's
    text = report.describe()
    assert "a sample is the whole sequence of 2 launches (copy, chatty_copy); its time, bytes " \
        "and flops ([bench]) are the sequence's" in text
    assert "per launch" not in text
    assert "samples of the whole sequence of 2 launches" in report.message
    data = report.to_json()
    assert data["points"][0]["variants"][0]["sequence"] == ["copy", "chatty_copy"]
    assert "launches" not in data["points"][0]["variants"][0]


def test_per_launch_reports_each_launch_by_entry(tmp_path: Path, engine: Engine) -> None:
    options = BenchOptions(per_launch=True, **QUICK)
    report = bench_file(sequence_spec(tmp_path), options, engine=engine)
    assert report.status == "timed", report.describe()
    [variant] = report.points[0].variants
    assert [launch.entry for launch in variant.launches] == ["copy", "chatty_copy"]
    for number, sample in enumerate(variant.samples_ms):
        parts = [launch.samples_ms[number] for launch in variant.launches]
        assert sample > 0 and all(part > 0 for part in parts)
        assert sample >= max(parts)
    assert all(launch.stats is not None and launch.stats.count == len(variant.samples_ms)
               for launch in variant.launches)
    text = report.describe()
    assert "seq per launch (an event between launches):" in text
    assert "1 copy" in text and "2 chatty_copy" in text and "of sequence" in text
    data = json.loads(json.dumps(report.to_json()))
    launches = data["points"][0]["variants"][0]["launches"]
    assert [launch["entry"] for launch in launches] == ["copy", "chatty_copy"]
    assert launches[0]["samples_ms"] == variant.launches[0].samples_ms
    again = BenchReport.from_json(data)
    assert again.points[0].variants[0].launches == variant.launches


def test_a_sweep_of_a_sequence_lists_each_launch_per_size(tmp_path: Path,
                                                          engine: Engine) -> None:
    options = BenchOptions(per_launch=True, sweep=("n", [256, 1024]), **QUICK)
    report = bench_file(sequence_spec(tmp_path), options, engine=engine)
    assert report.status == "timed", report.describe()
    text = report.describe()
    assert "seq: each time is the whole sequence of 2 launches (copy, chatty_copy)" in text
    assert "per launch (medians):" in text and "seq 2 chatty_copy" in text


def test_a_sequence_against_a_one_launch_baseline(tmp_path: Path, engine: Engine) -> None:
    baseline = write_selftest_spec(tmp_path / "one", "copy", seeds=1, bench=BENCH, name="one")
    options = BenchOptions(vs=baseline, per_launch=True, **QUICK)
    report = bench_file(sequence_spec(tmp_path / "seq"), options, engine=engine)
    assert report.status == "timed", report.describe()
    [point] = report.points
    sequence, single = point.variants
    assert point.comparison is not None and point.comparison.candidate == "seq"
    assert [launch.entry for launch in sequence.launches] == ["copy", "chatty_copy"]
    assert single.sequence == [] and [launch.entry for launch in single.launches] == ["copy"]
    # compare's rows, from this recorded report: the time is the sequence's, launches beside it.
    named = [("seq", load_spec(sequence_spec(tmp_path / "seq"))), ("one", load_spec(baseline))]
    timing = timing_from(report, named, "one", seed=0)
    row = next(r for r in timing.rows if r.variant == "seq")
    assert row.sequence == ["copy", "chatty_copy"] and row.ratio is not None
    assert [launch.entry for launch in row.launches] == ["copy", "chatty_copy"]
    assert all(launch.share is not None and 0 < launch.share for launch in row.launches)
    lines = describe_compare(CompareReport("one", [], timing)).splitlines()
    assert "seq: each time is the whole sequence of 2 launches (copy, chatty_copy), as are its " \
        "bytes and flops" in lines
    assert any(line.startswith("per launch (medians with 95% intervals") for line in lines)


def test_a_sequence_in_the_wrong_order_fails_its_checks(tmp_path: Path) -> None:
    spec = sequence_spec(tmp_path, in_order=False)
    report = bench_file(spec, BenchOptions(verify_first=False, **QUICK))
    assert report.status not in ("timed", "spec_error"), report.describe()
    assert report.exit_code == 1
    assert "first timed run of the sequence" in report.message


def test_a_one_launch_report_keeps_its_keys(tmp_path: Path, engine: Engine) -> None:
    spec = write_selftest_spec(tmp_path, "copy", seeds=1, bench=BENCH, name="copy")
    data = bench_file(spec, BenchOptions(**QUICK), engine=engine).to_json()
    assert set(data) == V1_REPORT_KEYS
    assert set(data["points"][0]["variants"][0]) == V1_VARIANT_KEYS
    assert data["environment"]["timer"] == "host clock (not a device time)"
    assert data["message"].endswith("samples; first and last timed launches match the "
                                    "reference")
    # Asked for per-launch times, a one-launch spec lists its one launch, and nothing else new.
    asked = bench_file(spec, BenchOptions(per_launch=True, **QUICK), engine=engine).to_json()
    assert set(asked["points"][0]["variants"][0]) == V1_VARIANT_KEYS | {"launches"}


def test_a_one_launch_compare_row_keeps_its_keys() -> None:
    timing = Timing("timed", "", [TimingRow("a", {"n": 1}, "timed")])
    data = json.loads(json.dumps(CompareReport("a", [], timing).to_json()))
    assert "sequence" not in data["timing"]["rows"][0]
    assert "launches" not in data["timing"]["rows"][0]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """kernel-studio with these arguments."""
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True,
                          check=False, timeout=300)


@pytest.mark.parametrize("extra", [[], ["--per-launch"], ["--per-launch", "--json"]])
def test_the_cpu_backend_refuses_to_time_a_sequence(extra: list[str]) -> None:
    result = _cli("bench", "--backend", "cpu", *extra, str(TWO_PASS))
    assert result.returncode == 3, result.stderr
    if "--json" in extra:
        data = json.loads(result.stdout)
        assert data["status"] == "unverified" and NO_GPU_HELP in data["message"]
    else:
        assert result.stdout.startswith(f"UNVERIFIED: not timed: {NO_GPU_HELP}")


def test_per_launch_is_a_flag_of_bench_and_compare() -> None:
    for command in ("bench", "compare"):
        result = _cli(command, "--help")
        assert "--per-launch" in result.stdout, result.stdout
    bad = _cli("bench", "--per-launch=yes", str(TWO_PASS))
    assert bad.returncode == 2 and "--per-launch" in bad.stderr


def test_compare_names_why_two_pass_sum_and_reduce_sum_are_not_one_task() -> None:
    # compare asks for the same argument list; two_pass_sum has a scratch buffer and a second
    # scalar, and its total is `out` where reduce_sum's is an `inout` accumulator: refused,
    # saying so (bench --vs times them against each other).
    reduce_sum = RESOURCES / "kernels" / "reduce_sum" / "reduce_sum.toml"
    result = _cli("compare", "--per-launch", str(TWO_PASS), str(reduce_sum))
    assert result.returncode == 2
    assert "reduce_sum does not take the arguments of two_pass_sum" in result.stderr
