"""The verifier end to end with real worker processes (selftest backend): every verdict kind
the parent decides, with its details, and the CLI's exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from selftest_spec import write_selftest_spec

from app.base import system
from app.base.paths import ROOT
from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.verifier import verify_file


def make_spec(folder: Path, entry: str = "copy", out_size: str = "n",
              reference: str = "return {'c': a}") -> Path:
    """A vector_add-shaped spec whose kernel is a selftest behaviour."""
    return write_selftest_spec(folder, entry, reference=reference, out_size=out_size)


@pytest.fixture(scope="module")
def engine():
    """One engine (warm worker) for the module."""
    with Engine() as shared:
        yield shared


def verify(path: Path, engine: Engine, **options: object):
    """verify_file on the selftest backend."""
    return verify_file(path, VerifyOptions(backend="selftest", **options), engine)  # type: ignore[arg-type]


def test_a_correct_kernel_passes_every_case_and_seed(tmp_path: Path, engine: Engine) -> None:
    verdict = verify(make_spec(tmp_path), engine)
    assert verdict.status == "passed", verdict.describe()
    # The spec's seeds, then one drawn for this verification (the verdict names it).
    [fresh] = verdict.fresh_seeds
    assert fresh >= 1000 and verdict.seeds == [0, 1, fresh]
    assert [(r.case["n"], r.seed) for r in verdict.runs] == [
        (1, 0), (1, 1), (1, fresh), (1025, 0), (1025, 1), (1025, fresh)]
    assert verdict.exit_code == 0


def test_a_wrong_result_is_a_mismatch_with_indices_values_and_errors(tmp_path: Path,
                                                                      engine: Engine) -> None:
    verdict = verify(make_spec(tmp_path, reference="return {'c': a + (a > 0.5) * 1.0}"), engine)
    assert verdict.status == "mismatch"
    finding = verdict.runs[-1].findings[0]
    assert finding.kind == "mismatch" and finding.buffer == "c"
    assert 0 < finding.count < 1025 and finding.total == 1025
    index = finding.first_indices[0][0]
    assert finding.expected[0] == pytest.approx(finding.actual[0] + 1.0)
    assert finding.max_abs_error == pytest.approx(1.0)
    text = verdict.describe()
    assert f"at ({index},): expected" in text and "largest errors: absolute 1" in text
    assert verdict.exit_code == 1


def test_untouched_output_elements_are_reported_unwritten(tmp_path: Path, engine: Engine) -> None:
    path = make_spec(tmp_path, out_size="n + 3", reference="return {'c': list(a) + [0, 0, 0]}")
    verdict = verify(path, engine)
    assert verdict.status == "unwritten", verdict.describe()
    finding = verdict.runs[0].findings[0]
    assert finding.count == 3 and finding.first_indices == [[1], [2], [3]]


def test_a_write_past_the_end_hits_the_guard_zone(tmp_path: Path, engine: Engine) -> None:
    verdict = verify(make_spec(tmp_path, entry="overrun"), engine)
    assert verdict.status == "guard_zone"
    assert "first at byte 0 past the end" in verdict.runs[0].findings[0].message


def test_a_changed_input_is_reported(tmp_path: Path, engine: Engine) -> None:
    verdict = verify(make_spec(tmp_path, entry="mutate_input"), engine)
    assert verdict.status == "input_changed"
    assert verdict.runs[0].findings[0].first_indices == [[0]]


def test_a_hang_is_a_timeout_and_the_next_verify_gets_a_fresh_worker(tmp_path: Path,
                                                                      engine: Engine) -> None:
    verdict = verify(make_spec(tmp_path, entry="hang"), engine, timeout=0.5)
    assert verdict.status == "timeout" and "0.5 s" in verdict.runs[0].message
    assert len(verdict.runs) == 1  # stops at the first timeout
    again = verify(make_spec(tmp_path / "..", entry="copy"), engine)
    assert again.status == "passed"


def test_a_crash_names_the_cause(tmp_path: Path, engine: Engine) -> None:
    verdict = verify(make_spec(tmp_path, entry="device_error"), engine)
    assert verdict.status == "crash"
    assert "illegal memory access" in verdict.message


def test_reference_problems_are_reference_errors(tmp_path: Path, engine: Engine) -> None:
    verdict = verify(make_spec(tmp_path, reference="return {'d': a}"), engine)
    assert verdict.status == "reference_error" and "no value for output 'c'" in verdict.message
    verdict = verify(make_spec(tmp_path, reference="return {'c': a[:-1]}"), engine)
    assert verdict.status == "reference_error"
    assert verdict.exit_code == 2


def test_an_untrusted_reference_is_not_run(tmp_path: Path, engine: Engine,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # Where a sandbox exists, the reference runs inside it (tests/security); without one it is
    # not run at all.
    monkeypatch.setenv("KERNEL_STUDIO_SANDBOX", "none")
    (tmp_path / "ran").unlink(missing_ok=True)
    path = make_spec(tmp_path, reference="open(__file__ + '.ran', 'w'); return {'c': a}")
    verdict = verify(path, engine, trusted=False)
    assert verdict.status == "unverified"
    assert not (tmp_path / "ref.py.ran").exists()


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """kernel-studio in a child process."""
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True,
                          timeout=120, check=False)


def test_cli_exit_codes_for_bad_specs_and_missing_backends(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[kernel]\nsource = 1\n")
    done = cli("verify", str(bad))
    assert done.returncode == 2 and "[[arg]]: at least one [[arg]] table" in done.stdout
    good = make_spec(tmp_path)
    if not system.list_gpus():
        done = cli("verify", str(good), "--backend", "pycuda", "--json")
        report = json.loads(done.stdout)
        assert done.returncode == 3 and report["status"] == "unverified"
        assert "no NVIDIA GPU" in report["message"]


def test_cli_refuses_bad_flags(tmp_path: Path) -> None:
    assert cli("verify", str(tmp_path / "x.toml"), "--case", "n").returncode == 2
    assert cli("verify", str(tmp_path / "x.toml"), "--seeds", "0").returncode == 2
    assert cli("verify", str(tmp_path / "x.toml"), "--sanitize", "bogus").returncode == 2


def test_extra_seeds_follow_the_spec_and_a_replay_runs_only_its_own(tmp_path: Path,
                                                                    engine: Engine) -> None:
    path = make_spec(tmp_path)
    verdict = verify(path, engine, extra_seeds=(90_001,), random_seeds=0)
    # Seeds 0, 1 and 90 001 start outputs as poison, values, values: the last runs once more
    # from zeros, so that every case sees zero-filled outputs.
    assert [r.seed for r in verdict.runs] == [0, 1, 90_001, 90_001] * 2
    assert [r.start for r in verdict.runs[:4]] == ["poison", "values", "values", "zeros"]
    replay = verify(path, engine, only_seeds=(90_001,))
    assert [r.seed for r in replay.runs] == [90_001, 90_001]
    assert replay.status == "passed"


def test_cli_prints_random_seeds_so_a_failure_can_be_replayed() -> None:
    path = str(ROOT / "resources" / "kernels" / "vector_add" / "vector_add.toml")
    base = ["verify", path, "--backend", "cpu", "--case", "n=1000", "--json"]
    result = cli(*base, "--random-seeds", "2")
    assert result.returncode == 0, result.stderr
    drawn = [int(s) for s in result.stderr.split("random seeds: ")[1].split(" (")[0].split(", ")]
    assert len(drawn) == 2 and f"--seed {drawn[0]}" in result.stderr
    assert [r["seed"] for r in json.loads(result.stdout)["runs"]] == [0, 1, 2, *drawn]
    again = cli(*base, "--seed", str(drawn[1]))
    assert [r["seed"] for r in json.loads(again.stdout)["runs"]] == [drawn[1]]
    for flags in (["--random-seeds", "-1"], ["--seed", "-5"], ["--seed", "3", "--seeds", "2"]):
        bad = cli(*base, *flags)
        assert bad.returncode == 2 and "seed" in bad.stderr, flags
