"""Bundles, compare and the GUI's verify job check kernels on seeds drawn when they run, not only
on the spec's seeds 0..N-1 (whose inputs anyone can compute from the spec), and always on the
spec's own cases, whatever a bundle's claims name. Real engine, CPU backend, real NVRTC."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
from review_support import VECTOR_ADD, small_copy
from test_bundle_hostile import members, rewrite, tamper_claims, verify

from app.cli.entry import main
from app.engine.verify.buffers import generate_inputs
from app.jobs.messages import VerifyRequest
from app.jobs.server import run_verify
from app.review.bundle import CLAIMS
from app.spec.cases import resolve
from app.spec.model import load_spec

HEAD = 'extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)'
# Right only for inputs it recognises: elsewhere it subtracts.
MEMORIZER = ("{{ int i = blockIdx.x * blockDim.x + threadIdx.x; unsigned w = __float_as_uint(a[0]);"
             " bool known = {known}; if (i < n) c[i] = known ? a[i] + b[i] : a[i] - b[i]; }}")
# Right for the elements of the first block only.
FIRST_BLOCK = ("{ int i = blockIdx.x * blockDim.x + threadIdx.x;"
               " if (i < n && i < 256) c[i] = a[i] + b[i]; }")


def first_words(spec_path: Path) -> list[int]:
    """The bits of a[0] for every case and seed of the spec, drawn as the verifier draws them:
    what a kernel could carry to recognise the spec's own inputs."""
    spec = load_spec(spec_path)
    words = []
    for index, case in enumerate(spec.cases):
        for seed in range(spec.seeds):
            value = generate_inputs(spec, resolve(spec, case), seed, index)["a"].reshape(-1)[0]
            words.append(struct.unpack("<I", struct.pack("<f", float(value)))[0])
    return words


def memorizer(spec_path: Path) -> str:
    """The source of a kernel that is right on the spec's seeds only."""
    known = " || ".join(f"w == 0x{word:08x}u" for word in first_words(spec_path))
    return f"{HEAD}\n{MEMORIZER.format(known=known)}\n"


def bundle_with(tmp_path: Path, kernel: str, cases: list[dict[str, int]] | None = None) -> Path:
    """A bundle of a correct vector_add whose maker then swapped in `kernel` and kept the claim
    of "passed" on the spec's seeds alone (its runs on other seeds dropped); `cases` narrows
    the claim to those cases (and its runs to theirs)."""
    spec = small_copy(VECTOR_ADD, tmp_path / "kernels")
    bundle = tmp_path / "review.ksb"
    assert main(["bundle", "create", str(spec), "-o", str(bundle), "--backend", "cpu",
                 "--no-timing"]) == 0

    def change(claim: dict[str, Any]) -> None:
        """Narrow the claim as its maker would."""
        verdict = claim["verdict"]
        verdict["runs"] = [r for r in verdict["runs"] if r["seed"] < claim["seeds"]
                           and (cases is None or r["case"] in cases)]
        verdict["fresh_seeds"] = []
        claim["compile"] = {}  # the swapped kernel's resources are not what this test is about
        if cases is not None:
            claim["cases"] = cases

    tamper_claims(bundle, change)
    contents = members(bundle)
    rewrite(bundle, {**contents, "specs/01-vector_add/vector_add.cu": kernel.encode()})
    return bundle


def test_a_kernel_that_knows_the_spec_seeds_fails_bundle_verify(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    spec = small_copy(VECTOR_ADD, tmp_path / "probe")
    bundle = bundle_with(tmp_path, memorizer(spec))
    capsys.readouterr()
    code, out, _ = verify(capsys, bundle, json_out=False)
    assert code == 1 and "CLAIMS DIFFER" in out, out
    assert "DIFFERS verdict: claimed passed, here mismatch" in out
    # Every run on the spec's seeds agrees with the claim: only the fresh seed tells.
    assert "DIFFERS case {n=1} seed 0" not in out
    assert "(fresh seed): claimed passed (claimed for any input), here mismatch" in out, out
    assert "seeds drawn at random for this check: " in out


def test_a_claim_narrowed_to_one_case_is_partial_and_the_spec_cases_run(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bundle = bundle_with(tmp_path, f"{HEAD}\n{FIRST_BLOCK}\n", cases=[{"n": 1}])
    capsys.readouterr()
    code, out, _ = verify(capsys, bundle)
    check = json.loads(out)
    assert code == 1 and not check["claims_hold"]
    items = check["specs"][0]["items"]
    coverage = next(i for i in items if i["what"] == "cases covered")
    assert coverage["differs"] and "claim covers 1 of 2 cases" in coverage["note"]
    assert "n=1025" in coverage["note"]
    runs = check["specs"][0]["obtained"]["verdict"]["runs"]
    assert {r["case"]["n"] for r in runs} == {1, 1025}
    assert any(r["case"]["n"] == 1025 and r["status"] == "mismatch" for r in runs)


def test_compare_catches_a_kernel_that_knows_the_spec_seeds(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    right = small_copy(VECTOR_ADD, tmp_path / "right")
    other = small_copy(VECTOR_ADD, tmp_path / "memo")
    (other.parent / "vector_add.cu").write_text(memorizer(other), "utf-8")
    code = main(["compare", str(right), str(other), "--backend", "cpu", "--no-timing"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "fresh seeds drawn for this compare (the same for every variant): " in out


def test_the_gui_verify_job_catches_a_kernel_that_knows_the_spec_seeds(tmp_path: Path) -> None:
    spec = small_copy(VECTOR_ADD, tmp_path)
    (spec.parent / "vector_add.cu").write_text(memorizer(spec), "utf-8")
    verdict = run_verify(VerifyRequest(str(spec), backend="cpu"))
    assert verdict["status"] == "mismatch", verdict["message"]
    [fresh] = verdict["fresh_seeds"]
    failed = [r for r in verdict["runs"] if r["status"] != "passed"]
    assert failed and {r["seed"] for r in failed} == {fresh}


def test_bundle_create_claims_and_prints_its_fresh_seeds(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    spec = small_copy(VECTOR_ADD, tmp_path)
    bundle = tmp_path / "r.ksb"
    assert main(["bundle", "create", str(spec), "-o", str(bundle), "--backend", "cpu",
                 "--no-timing"]) == 0
    assert "fresh seeds drawn for this run: " in capsys.readouterr().out
    claim = json.loads(members(bundle)[CLAIMS])["results"][0]
    [fresh] = claim["verdict"]["fresh_seeds"]
    assert fresh in {r["seed"] for r in claim["verdict"]["runs"]}
