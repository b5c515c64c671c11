"""On a GPU: a timed compare (interleaved, ratios to the baseline with 95% intervals) and a
bundle made and re-checked on the GPU backend, timings included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from review_support import STRIDED_ADD, VECTOR_ADD, small_copy

from app.cli.entry import main
from app.review.model import CompareReport

pytestmark = pytest.mark.gpu


def test_a_timed_compare_finds_the_strided_variant_slower(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """vector_add against strided_add at the bench case: both pass, both are timed, the
    strided one's time ratio and its whole interval lie above 1; the baseline's is 1."""
    fast, slow = small_copy(VECTOR_ADD, tmp_path), small_copy(STRIDED_ADD, tmp_path)
    report_path = tmp_path / "compare.html"
    code = main(["compare", str(fast), str(slow), "--backend", "pycuda", "--json",
                 "--report", str(report_path)])
    report = CompareReport.from_json(json.loads(capsys.readouterr().out))
    assert code == 0, report.timing.note
    assert report.timing.status == "timed" and len(report.timing.rows) == 2
    rows = {r.variant: r for r in report.timing.rows}
    base, strided = rows["vector_add"], rows["strided_add"]
    assert base.ratio == pytest.approx(1.0)
    assert strided.ratio is not None and strided.ratio_low is not None and strided.ratio_low > 1
    assert base.median_ms is not None and base.low_ms <= base.median_ms <= base.high_ms
    assert "Timing on" in report_path.read_text()


def test_a_bundle_round_trip_on_the_gpu_backend(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Made on the GPU with its timing; verified again on the GPU: the claims hold, the
    timing items included."""
    spec = small_copy(VECTOR_ADD, tmp_path)
    bundle = tmp_path / "gpu.ksb"
    assert main(["bundle", "create", str(spec), "-o", str(bundle), "--backend", "pycuda"]) == 0
    capsys.readouterr()
    code = main(["bundle", "verify", str(bundle), "--backend", "pycuda", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["claims_hold"], json.dumps(result["specs"][0]["items"])
    items = [i["what"] for i in result["specs"][0]["items"]]
    assert any(i.startswith("median time at") for i in items)
    assert result["specs"][0]["obtained"]["verdict"]["backend"] == "pycuda"


def test_a_swept_compare_has_a_ratio_at_every_size(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--sweep times every variant at each size, each with its ratio to the baseline."""
    fast, slow = small_copy(VECTOR_ADD, tmp_path), small_copy(STRIDED_ADD, tmp_path)
    code = main(["compare", str(fast), str(slow), "--backend", "pycuda", "--json",
                 "--sweep", "n=100000,4000000", "--baseline", "strided_add"])
    report = CompareReport.from_json(json.loads(capsys.readouterr().out))
    assert code == 0, report.timing.note
    sizes = [(r.variant, r.case["n"]) for r in report.timing.rows]
    assert sorted(sizes) == [("strided_add", 100000), ("strided_add", 4000000),
                             ("vector_add", 100000), ("vector_add", 4000000)]
    big = next(r for r in report.timing.rows if r.variant == "vector_add" and
               r.case["n"] == 4000000)
    assert big.ratio_high is not None and big.ratio_high < 1
