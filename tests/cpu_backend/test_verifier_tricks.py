"""Kernels that would pass a verifier with fixed habits, on the CPU backend. An access just
outside a buffer that leaves its guard zone as it was (a read, or a read and a store of the same
bytes) is caught by the edge runs: the buffer placed against inaccessible memory at its end
(rounded to 16 bytes, then exact) and at its start. A kernel that computes only where it finds
the poison (or any NaN) fails the runs whose outputs start from ordinary values."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.base.paths import RESOURCES
from app.engine.verify.results import Verdict
from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.verifier import verify_file

HEAD = "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n)"
KERNELS = {
    # The probe's kernel: every thread loads c[i], past the end too, and stores it back.
    "load_then_store": "{ int i = blockIdx.x * blockDim.x + threadIdx.x; float v = c[i];"
                       " if (i < n) v = a[i] + b[i]; c[i] = v; }",
    # One element past the end, read and written back (volatile: the compiler keeps it).
    "one_past_the_end": "{ int i = blockIdx.x * blockDim.x + threadIdx.x; volatile float* v = c;"
                        " if (i == 0) v[n] = v[n]; if (i < n) c[i] = a[i] + b[i]; }",
    # One element before the start, read and written back.
    "one_before_the_start": "{ int i = blockIdx.x * blockDim.x + threadIdx.x;"
                            " volatile float* v = c; if (i == 0) v[-1] = v[-1];"
                            " if (i < n) c[i] = a[i] + b[i]; }",
}
SIDES = {"load_then_store": "past the end", "one_past_the_end": "past the end",
         "one_before_the_start": "before the start"}
# A correct kernel that reads 16-byte vectors where it can: it must still pass.
VECTORS = ("{ int i = 4 * (blockIdx.x * blockDim.x + threadIdx.x);"
           " if (i + 3 < n) { float4 x = *(const float4*)(a + i), y = *(const float4*)(b + i);"
           " *(float4*)(c + i) = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w); }"
           " else for (; i < n; ++i) c[i] = a[i] + b[i]; }")


@pytest.fixture(scope="module")
def engine(warm_engine: Engine) -> Engine:
    """The module's warm engine (tests/conftest.py)."""
    return warm_engine


def verdict_with(folder: Path, body: str, engine: Engine, per_block: int = 256) -> Verdict:
    """The vector_add template with another kernel body, verified on the CPU backend; the grid
    gives each block of 256 threads `per_block` elements (4 each for a kernel of vectors)."""
    shutil.copytree(RESOURCES / "kernels" / "vector_add", folder)
    (folder / "vector_add.cu").write_text(f"{HEAD}\n{body}\n", "utf-8")
    spec = folder / "vector_add.toml"
    text = spec.read_text("utf-8")
    spec.write_text(text.replace('grid = ["cdiv(n, 256)"]', f'grid = ["cdiv(n, {per_block})"]'),
                    "utf-8")
    return verify_file(spec, VerifyOptions(backend="cpu"), engine)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_an_access_that_leaves_the_guard_as_it_was_fails(name: str, tmp_path: Path,
                                                         engine: Engine) -> None:
    verdict = verdict_with(tmp_path / name, KERNELS[name], engine)
    assert verdict.status == "guard_zone", verdict.message
    assert SIDES[name] in verdict.message


def test_a_correct_vector_kernel_passes_the_edge_runs(tmp_path: Path, engine: Engine) -> None:
    verdict = verdict_with(tmp_path / "vectors", VECTORS, engine, per_block=1024)
    assert verdict.status == "passed", verdict.message


# Both compute only where the output still holds what the verifier put there, nothing in use.
POISON_SEEKERS = {
    "exact_poison": "{ int i = blockIdx.x * blockDim.x + threadIdx.x;"
                    " if (i < n && __float_as_uint(c[i]) == 0x7FC0A5A5u) c[i] = a[i] + b[i]; }",
    "any_nan": "{ int i = blockIdx.x * blockDim.x + threadIdx.x;"
               " if (i < n && c[i] != c[i]) c[i] = a[i] + b[i]; }",
}


@pytest.mark.parametrize("name", sorted(POISON_SEEKERS))
def test_a_kernel_that_computes_only_over_the_poison_fails(name: str, tmp_path: Path,
                                                           engine: Engine) -> None:
    verdict = verdict_with(tmp_path / name, POISON_SEEKERS[name], engine)
    assert verdict.status == "mismatch", verdict.message
    failed = [r for r in verdict.runs if not r.passed]
    # The runs whose outputs started as ordinary values or zeros, not the poison.
    assert failed and all(r.start in ("values", "zeros") for r in failed)


# Thread 0 fills a shared value the others read with no barrier between: in ascending order
# (the emulation's usual one) the writer always runs first.
RACE = ("{ __shared__ int base; if (threadIdx.x == 0) base = blockIdx.x * blockDim.x;"
        " int i = base + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }")
# Right only where the code can tell it runs on the emulation.
EMULATION_ONLY = ("{ int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                  "#ifdef KERNEL_STUDIO_CPU_EMULATION\n if (i < n) c[i] = a[i] + b[i];\n"
                  "#else\n if (i < n) c[i] = a[i] - b[i];\n#endif\n}")


def test_a_race_the_usual_thread_order_hides_fails(tmp_path: Path, engine: Engine) -> None:
    verdict = verdict_with(tmp_path / "race", RACE, engine)
    assert verdict.status != "passed" and "descending order" in verdict.message


def test_the_emulation_does_not_announce_itself(tmp_path: Path, engine: Engine) -> None:
    assert verdict_with(tmp_path / "emulation_only", EMULATION_ONLY, engine).status == "mismatch"


def test_a_passing_kernel_gets_two_edge_runs_per_case(tmp_path: Path, engine: Engine,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # Exactly at the end, then at the start with the threads in descending order: the rounded
    # end runs only after the exact one failed some other way (the vector kernel above).
    from app.engine.verify import runs

    seen: list[tuple[str, bool]] = []
    real = runs.run_one

    def counted(*args: object, **kwargs: object) -> object:
        edge = args[5] if len(args) > 5 else kwargs.get("edge", "")
        descending = args[6] if len(args) > 6 else kwargs.get("descending", False)
        seen.append((str(edge), bool(descending)))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(runs, "run_one", counted)
    correct = "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }"
    verdict = verdict_with(tmp_path / "correct", correct, engine)
    assert verdict.status == "passed", verdict.message
    cases = 5
    assert seen.count(("", False)) == len(verdict.runs)
    assert seen.count(("exact", False)) == cases and seen.count(("start", True)) == cases
    assert len(seen) == len(verdict.runs) + 2 * cases
