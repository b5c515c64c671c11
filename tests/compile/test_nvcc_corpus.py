"""The default path (NVRTC) accepts what nvcc accepts for device code: every kernel of the
corpus in tests/fixtures/nvcc_corpus/ is built by both with the same outcome, except the named
exceptions; and the compatibility headers give the same values nvcc's host headers give."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from app.base import system
from app.compile import compile_file, compile_source
from app.compile.api import HOST_CODE_HINT

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "nvcc_corpus"
TABLE = tomllib.loads((CORPUS / "corpus.toml").read_text(encoding="utf-8"))
OPTIONS: dict[str, list[str]] = TABLE["options"]
EXCEPTIONS: dict[str, str] = TABLE["nvrtc_exceptions"]
KERNELS = sorted(CORPUS.glob("*.cu"))
needs_nvcc = pytest.mark.skipif(system.find_tool("nvcc") is None, reason="nvcc is not installed")


def test_the_corpus_is_large_and_its_table_names_real_kernels() -> None:
    names = {k.stem for k in KERNELS}
    assert len(KERNELS) - len(EXCEPTIONS) >= 40
    assert set(OPTIONS) <= names and set(EXCEPTIONS) <= names
    assert all(reason.strip() for reason in EXCEPTIONS.values())


@needs_nvcc
@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.stem)
def test_nvcc_and_the_default_path_agree(path: Path) -> None:
    options = OPTIONS.get(path.stem, [])
    nvcc = compile_file(path, arch="sm_90", options=options, backend="nvcc")
    nvrtc = compile_file(path, arch="sm_90", options=options)
    assert nvcc.ok, nvcc.message
    if path.stem in EXCEPTIONS:
        assert not nvrtc.ok and nvrtc.stage == "compile"
        assert any(d.message == HOST_CODE_HINT for d in nvrtc.diagnostics)
        assert "compile with nvcc" in nvrtc.message
        return
    assert nvrtc.ok, nvrtc.message
    # Our headers add no noise: any warning is one nvcc gives too.
    assert not [w for w in nvrtc.warnings if "nvrtc_include" in w.format()]
    # The same kernels (names may differ where int64_t is long long under NVRTC, long in glibc).
    assert len(nvrtc.kernels) == len(nvcc.kernels) >= 1


CONSTANTS = """#include <cfloat>
#include <climits>
#include <cmath>
#include <limits>
extern "C" __global__ void constants(float* f, double* d, int* i, long long* l) {
    f[0] = INFINITY; f[1] = -INFINITY; f[2] = NAN; f[3] = FLT_MAX; f[4] = FLT_MIN;
    f[5] = FLT_EPSILON; f[6] = HUGE_VALF; f[7] = std::numeric_limits<float>::max();
    f[8] = std::numeric_limits<float>::lowest(); f[9] = (float)M_PI;
    d[0] = DBL_MAX; d[1] = DBL_EPSILON; d[2] = HUGE_VAL; d[3] = M_E;
    i[0] = INT_MAX; i[1] = INT_MIN; i[2] = SHRT_MAX; i[3] = CHAR_BIT;
    l[0] = LLONG_MAX; l[1] = LLONG_MIN;
}
"""


def _immediates(ptx: str) -> list[int]:
    """The constants the kernel moves into registers (bit images of floats too), in order."""
    return [int(v) for v in re.findall(r"^\s*mov\.[bsu]\d+\s+%\w+, (-?\d+);", ptx, re.M)]


@needs_nvcc
def test_the_headers_give_the_values_nvcc_gives(tmp_path: Path) -> None:
    results = [compile_source(CONSTANTS, filename="c.cu", folder=tmp_path, arch="sm_90",
                              options=["--expt-relaxed-constexpr"], backend=backend)
               for backend in ("nvcc", "nvrtc")]
    assert all(r.ok for r in results), [r.message for r in results]
    nvcc, nvrtc = (_immediates(r.ptx or "") for r in results)
    assert nvrtc == nvcc
    assert 0x7F800000 in nvrtc and 0x7F7FFFFF in nvrtc and 2147483647 in nvrtc  # inf, FLT_MAX


def test_infinity_needs_no_include_and_is_a_constant_expression(tmp_path: Path) -> None:
    text = ("constexpr float lowest = -INFINITY;\n"
            "static_assert(lowest < 0.0f && INFINITY > 3.4e38f, \"not infinite\");\n"
            "__constant__ float seed = -HUGE_VALF;\n"
            "extern \"C\" __global__ void k(float* o) { o[0] = lowest + seed + NAN; }\n")
    result = compile_source(text, filename="k.cu", folder=tmp_path, arch="sm_90")
    assert result.ok, result.message


def test_errors_keep_the_users_line_numbers(tmp_path: Path) -> None:
    text = ("#include <cmath>\n#include <cfloat>\n\n"
            "extern \"C\" __global__ void k(float* o) {\n"
            "    o[0] = FLT_MAX + not_declared;\n}\n")
    result = compile_source(text, filename="k.cu", folder=tmp_path, arch="sm_90")
    assert not result.ok
    assert [(e.file, e.line) for e in result.errors] == [("k.cu", 5)]


def test_a_header_in_the_kernels_folder_wins_over_ours(tmp_path: Path) -> None:
    (tmp_path / "float.h").write_text("#define FLT_MAX 7.0f\n#define MINE 1\n")
    text = ("#include <float.h>\n#if !MINE\n#error our float.h was used\n#endif\n"
            "extern \"C\" __global__ void k(float* o) { o[0] = FLT_MAX; }\n")
    result = compile_source(text, filename="k.cu", folder=tmp_path, arch="sm_90")
    assert result.ok, result.message
    assert 0x40E00000 in _immediates(result.ptx or "")  # 7.0f, the folder's value


def test_ndebug_turns_assert_off_as_in_c(tmp_path: Path) -> None:
    text = ("#include <cassert>\n"
            "extern \"C\" __global__ void k(int* o) { assert(o[0] == 1); o[1] = 2; }\n")
    on = compile_source(text, filename="k.cu", folder=tmp_path, arch="sm_90")
    off = compile_source(text, filename="k.cu", folder=tmp_path, arch="sm_90",
                         options=["-DNDEBUG"])
    assert on.ok and off.ok
    assert "__assertfail" in (on.ptx or "") and "__assertfail" not in (off.ptx or "")
