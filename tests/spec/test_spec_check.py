"""spec-check: weak specs are named weak with the impostor that fools them and the case that
lets it, every template is strong and quiet, bad input is exit 2 with one message, and the
command line speaks JSON. The impostors go through the verifier's real checks; nothing is
mocked."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.engine.verify.runs import VerifyOptions
from app.engine.verify.speccheck import (
    ImpostorStatus,
    SpecCheck,
    Strength,
    brief_warnings,
    check_spec_file,
)
from app.engine.verify.specwarnings import WarningKind
from app.engine.verify.verifier import verify_file
from app.engine.worker.backends.cpu.toolchain import find_toolchain
from app.spec.model import load_spec

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = sorted((ROOT / "resources" / "kernels").glob("*/*.toml"))


def kernel_studio(*args: str, env: dict[str, str] | None = None
                  ) -> subprocess.CompletedProcess[str]:
    """Run `python -m app ARGS` in a child process, as a user would."""
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True,
                          timeout=120, check=False, cwd=ROOT, env={**os.environ, **(env or {})})


def template_copy(tmp_path: Path, name: str, edit: dict[str, str]) -> Path:
    """A template's folder copied to tmp_path, its spec edited by whole-line replacements
    (a line starting with the key is replaced by the value)."""
    folder = tmp_path / name
    shutil.copytree(ROOT / "resources" / "kernels" / name, folder)
    spec = folder / f"{name}.toml"
    lines = spec.read_text().splitlines()
    for start, replacement in edit.items():
        hits = [i for i, line in enumerate(lines) if line.startswith(start)]
        assert hits, f"no line starts with {start!r} in {spec.name}"
        lines[hits[0]] = replacement
    spec.write_text("\n".join(lines) + "\n")
    return spec


def impostor(result: SpecCheck, name: str) -> ImpostorStatus:
    """The status of one impostor."""
    return next(i.status for i in result.impostors if i.name == name)


def test_a_spec_whose_only_case_is_one_element_is_weak(tmp_path: Path) -> None:
    spec = template_copy(tmp_path, "vector_add", {"cases =": "cases = [{ n = 1 }]"})
    result = check_spec_file(spec)
    assert result.status == Strength.WEAK and result.exit_code == 1
    first = next(i for i in result.impostors if i.name == "first_element")
    assert first.status == ImpostorStatus.PASSES
    assert first.cases == [{"n": 1}]
    # With a single case, a kernel hard-coding n = 1 cannot be told apart either.
    assert impostor(result, "hard_coded_size") == ImpostorStatus.PASSES
    # Wrong values are still caught by that one element.
    assert impostor(result, "zeros") == ImpostorStatus.CAUGHT
    assert impostor(result, "stale") == ImpostorStatus.CAUGHT


def test_the_command_names_the_impostor_and_the_case(tmp_path: Path) -> None:
    spec = template_copy(tmp_path, "vector_add", {"cases =": "cases = [{ n = 1 }]"})
    done = kernel_studio("spec-check", str(spec))
    assert done.returncode == 1, done.stderr
    line = next(x for x in done.stdout.splitlines() if "first_element" in x and "PASSES" in x)
    assert "{n=1}" in line


def test_a_loose_atol_is_weak_and_warned(tmp_path: Path) -> None:
    spec = template_copy(tmp_path, "vector_add", {"seeds =": "seeds = 3\natol = 0.1"})
    result = check_spec_file(spec)
    assert result.status == Strength.WEAK
    # Arithmetic on float16-rounded inputs is off by about 1e-3: inside atol 0.1.
    assert [i.name for i in result.passing] == ["precision_downgrade"]
    loose = [w for w in result.warnings if w.kind == WarningKind.LOOSE_ATOL]
    assert loose and "atol 0.1" in loose[0].message


def test_a_loose_rtol_is_warned(tmp_path: Path) -> None:
    # saxpy's float32 output with rtol 0.3: a kernel off by 25% (a wrong constant) would pass.
    spec = template_copy(tmp_path, "saxpy", {"seeds =": "seeds = 3\nrtol = 0.3"})
    loose = [w for w in check_spec_file(spec).warnings if w.kind == WarningKind.LOOSE_RTOL]
    assert loose and "rtol 0.3" in loose[0].message and "30%" in loose[0].message
    tight = template_copy(tmp_path / "tight", "saxpy", {"seeds =": "seeds = 3\nrtol = 0.01"})
    assert not [w for w in check_spec_file(tight).warnings if w.kind == WarningKind.LOOSE_RTOL]


def test_a_scalar_that_hides_its_term_is_warned(tmp_path: Path) -> None:
    # saxpy with alpha 1.0: a kernel computing x + y, ignoring alpha, would pass.
    spec = template_copy(tmp_path, "saxpy", {"value = \"2.5\"": "value = \"1.0\""})
    found = [w for w in check_spec_file(spec).warnings if w.kind == WarningKind.IDENTITY_SCALAR]
    assert found and "alpha is 1 in every case" in found[0].message
    plain = template_copy(tmp_path / "plain", "saxpy", {})
    assert not [w for w in check_spec_file(plain).warnings
                if w.kind == WarningKind.IDENTITY_SCALAR]


@pytest.mark.skipif(find_toolchain() is None, reason="no host C++ compiler for the CPU backend")
def test_the_impostor_predicts_a_real_wrong_kernel(tmp_path: Path) -> None:
    # The hostile fixture whose blocks other than the first do nothing, on cases that fit in
    # one block: the real kernel passes verify (CPU backend), and spec-check says in advance
    # that the spec would let such a kernel through.
    folder = tmp_path / "first_block_only"
    shutil.copytree(ROOT / "tests" / "fixtures" / "hostile" / "first_block_only", folder)
    spec = folder / "first_block_only.toml"
    spec.write_text(re.sub(r"^cases = .*$", "cases = [{ n = 200 }, { n = 256 }]",
                           spec.read_text(), flags=re.M))
    assert verify_file(spec, VerifyOptions(backend="cpu")).status == "passed"
    result = check_spec_file(spec)
    assert result.status == Strength.WEAK
    assert impostor(result, "first_block") == ImpostorStatus.PASSES


def test_the_template_tolerance_catches_the_precision_downgrade() -> None:
    result = check_spec_file(ROOT / "resources" / "kernels" / "vector_add" / "vector_add.toml")
    assert impostor(result, "precision_downgrade") == ImpostorStatus.CAUGHT


@pytest.mark.parametrize("path", TEMPLATES, ids=[p.stem for p in TEMPLATES])
def test_every_template_is_strong_without_warnings(path: Path) -> None:
    result = check_spec_file(path)
    assert result.status == Strength.STRONG, result.describe()
    assert result.exit_code == 0
    assert result.warnings == [], result.describe()
    assert any(i.status == ImpostorStatus.CAUGHT for i in result.impostors)


def test_a_single_element_total_is_not_blamed_on_partial_writes() -> None:
    # reduce_sum's output has one element whatever n is: writing "only the first element" of
    # it is the right kernel, so those impostors are skipped, not reported as passing.
    result = check_spec_file(ROOT / "resources" / "kernels" / "reduce_sum" / "reduce_sum.toml")
    for name in ("first_element", "first_block", "first_half"):
        assert impostor(result, name) == ImpostorStatus.SKIPPED
    assert impostor(result, "mean") == ImpostorStatus.CAUGHT


def test_constant_inputs_let_a_stale_kernel_pass(tmp_path: Path) -> None:
    spec = template_copy(tmp_path, "vector_add", {})
    spec.write_text(spec.read_text().replace('init = "normal"', 'init = "ones"'))
    result = check_spec_file(spec)
    assert impostor(result, "stale") == ImpostorStatus.PASSES
    kinds = {w.kind for w in result.warnings}
    assert {WarningKind.SEED_INDEPENDENT, WarningKind.CONSTANT_OUTPUT,
            WarningKind.FEW_DISTINCT_VALUES} <= kinds


def test_block_multiples_only_warn_of_no_partial_block(tmp_path: Path) -> None:
    spec = template_copy(tmp_path, "matmul", {})
    text = re.sub(r"cases = \[.*?\n\]", "cases = [{ M = 16, N = 32, K = 16 }, "
                  "{ M = 64, N = 32, K = 48 }]", spec.read_text(), flags=re.S)
    spec.write_text(text)
    result = check_spec_file(spec)
    assert result.status == Strength.STRONG
    # And the bench case's K (4096) is far past the largest verified K (48): warned too.
    assert [w.kind for w in result.warnings] == [WarningKind.NO_PARTIAL_BLOCK,
                                                 WarningKind.BENCH_BEYOND_VERIFIED]


def test_a_capped_grid_that_never_loops_is_warned(tmp_path: Path) -> None:
    # saxpy's grid stops at 1024 blocks of 256: only n > 262144 makes its loop go round twice.
    spec = template_copy(tmp_path, "saxpy", {"cases =": "cases = [{ n = 1023 }, { n = 1025 }]"})
    result = check_spec_file(spec)
    assert [w.kind for w in result.warnings] == [WarningKind.NO_STRIDE_LOOP]
    assert "min(cdiv(n, 256), 1024)" in result.warnings[0].message


def test_brief_warnings_for_verify(tmp_path: Path) -> None:
    template = ROOT / "resources" / "kernels" / "softmax" / "softmax.toml"
    assert brief_warnings(load_spec(template)) == []
    spec = template_copy(tmp_path, "vector_add", {"cases =": "cases = [{ n = 1 }]"})
    lines = brief_warnings(load_spec(spec))
    assert any("writes only the first element" in line for line in lines)
    assert all("\n" not in line for line in lines)


@pytest.mark.parametrize("content, field", [
    (None, "cannot read"),
    ("[kernel\nsource = 'x.cu'\n", "not valid TOML"),
    ("BOGUS", "[verify].bogus: unknown key"),
], ids=["missing file", "malformed toml", "unknown field"])
def test_bad_input_is_exit_2_with_one_message(tmp_path: Path, content: str | None,
                                              field: str) -> None:
    path = tmp_path / "spec.toml"
    if content == "BOGUS":
        path = template_copy(tmp_path, "vector_add", {"seeds =": "seeds = 3\nbogus = 1"})
    elif content is not None:
        path.write_text(content)
    done = kernel_studio("spec-check", str(path))
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert field in lines[0] and "Traceback" not in done.stderr


def test_without_a_sandbox_only_trusted_specs_are_checked(tmp_path: Path) -> None:
    # The reference is code: where no sandbox can be had it runs only once trusted, as for
    # verify. Until then the answer is "could not decide" (exit 3), saying what to do.
    spec = template_copy(tmp_path, "vector_add", {})
    env = {"KERNEL_STUDIO_SANDBOX": "none", "KERNEL_STUDIO_DATA": str(tmp_path / "data")}
    refused = kernel_studio("spec-check", str(spec), env=env)
    assert refused.returncode == 3 and refused.stdout == ""
    assert f"kernel-studio trust {spec}" in refused.stderr
    assert kernel_studio("trust", str(spec), env=env).returncode == 0
    assert kernel_studio("spec-check", str(spec), env=env).returncode == 0


def test_a_reference_that_fails_is_a_bad_spec(tmp_path: Path) -> None:
    spec = template_copy(tmp_path, "vector_add", {})
    (spec.parent / "vector_add_ref.py").write_text("def reference(a, b, n):\n    return {}\n")
    result = check_spec_file(spec)
    assert result.status == Strength.BAD_SPEC and result.exit_code == 2
    assert "returned no value for output 'c'" in result.message


def test_json_shape(tmp_path: Path) -> None:
    spec = template_copy(tmp_path, "vector_add", {"cases =": "cases = [{ n = 1 }]"})
    done = kernel_studio("spec-check", str(spec), "--json")
    assert done.returncode == 1
    data = json.loads(done.stdout)
    assert data["status"] == "weak" and data["exit_code"] == 1
    assert data["spec_path"] == str(spec)
    assert isinstance(data["runs"], int) and data["seconds"] > 0
    names = [i["name"] for i in data["impostors"]]
    assert names[:2] == ["zeros", "ones"] and "precision_downgrade" in names
    for item in data["impostors"]:
        assert set(item) == {"name", "description", "status", "message", "case", "seed",
                             "finding", "cases"}
        assert item["status"] in {"caught", "passes", "skipped"}
    caught = next(i for i in data["impostors"] if i["name"] == "zeros")
    assert caught["case"] == {"n": 1} and caught["seed"] == 0 and caught["finding"] == "mismatch"
    passing = next(i for i in data["impostors"] if i["name"] == "first_element")
    assert passing["cases"] == [{"n": 1}]
    for warning in data["warnings"]:
        assert set(warning) == {"kind", "message", "cases"}
