"""Writes the parity corpus's specs and its index (corpus.toml) from the table below.

Each group folder holds one .cu (an entry with an `op` scalar picks the computation), one
ref.py, and a spec per corpus kernel. Kernels of a group share a folder (one warm CPU worker)
and a library (one build). Run `python3 tests/cpu_backend/parity/generate.py` after editing.

Tolerances follow the CUDA Math API's documented bounds: fast intrinsics in ulps or absolute
error over their stated ranges, IEEE-rounded intrinsics exact.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).parent
ULP = 2.0**-23  # float32's relative spacing at 1


@dataclass
class Kernel:
    """One corpus kernel: a spec and what verify on an H200 must say of it."""

    name: str
    group: str
    op: int | None
    tests: str
    gpu: str = "passed"
    init: dict[str, str] = field(default_factory=dict)
    rtol: float = 0.0
    atol: float = 0.0
    cpu_refuses: str = ""  # the construct the CPU names when it refuses (unverified)
    options: list[str] = field(default_factory=list)
    source: str = ""
    entry: str = ""
    scalars: dict[str, int] = field(default_factory=dict)


# The arguments of each group's entry: (name, kind, dtype, shape); scalars have shape None.
F32_XY = [("op", "scalar", "int32", None), ("x", "in", "float32", "n"),
          ("y", "in", "float32", "n"), ("out", "out", "float32", "n"),
          ("n", "scalar", "int32", None)]
GROUPS: dict[str, dict[str, object]] = {
    "fast": {"source": "fast.cu", "entry": "fast", "args": F32_XY, "n": 1000},
    "denormal": {"source": "denormal.cu", "entry": "denormal", "args": F32_XY, "n": 1000},
    "options": {"source": "options.cu", "entry": "options", "args": F32_XY, "n": 1000},
    "double": {"source": "double.cu", "entry": "dbl", "n": 300, "args": [
        ("op", "scalar", "int32", None), ("x", "in", "float64", "n"), ("y", "in", "float64", "n"),
        ("out", "out", "float64", "n"), ("n", "scalar", "int32", None)]},
    "convert": {"source": "convert.cu", "entry": "convert", "n": 1024, "args": [
        ("op", "scalar", "int32", None), ("x", "in", "float32", "n"), ("k", "in", "int64", "n"),
        ("out", "out", "int64", "n"), ("n", "scalar", "int32", None)]},
    "intops": {"source": "intops.cu", "entry": "intops", "n": 1024,
               "init": {"x": "randint(-2147483648, 2147483648)",
                        "y": "randint(-2147483648, 2147483648)"}, "args": [
        ("op", "scalar", "int32", None), ("x", "in", "int32", "n"), ("y", "in", "int32", "n"),
        ("out", "out", "int64", "n"), ("n", "scalar", "int32", None)]},
    "atomics": {"source": "atomics.cu", "entry": "atomics", "n": 256,
                "init": {"x": "randint(0, 8)"}, "args": [
        ("op", "scalar", "int32", None), ("x", "in", "int32", "n"),
        ("ai", "inout", "int32", "16"), ("au", "inout", "uint32", "16"),
        ("al", "inout", "int64", "16"), ("aul", "inout", "uint64", "16"),
        ("af", "inout", "float32", "16"), ("ad", "inout", "float64", "16"),
        ("ah", "inout", "float16", "32"), ("ab", "inout", "bfloat16", "32"),
        ("n", "scalar", "int32", None)]},
    "warp": {"source": "warp.cu", "entry": "warp", "n": 128,
             "init": {"x": "randint(-1000, 1000)"}, "args": [
        ("op", "scalar", "int32", None), ("x", "in", "int32", "n"), ("out", "out", "int32", "n"),
        ("n", "scalar", "int32", None)]},
    "half": {"source": "half.cu", "entry": "halves", "n": 1000, "args": [
        ("op", "scalar", "int32", None), ("x", "in", "float16", "n"), ("y", "in", "float16", "n"),
        ("out", "out", "float16", "n"), ("n", "scalar", "int32", None)]},
    "bf16": {"folder": "half", "source": "half.cu", "entry": "bhalves", "n": 1000, "args": [
        ("op", "scalar", "int32", None), ("x", "in", "bfloat16", "n"),
        ("y", "in", "bfloat16", "n"), ("out", "out", "bfloat16", "n"),
        ("n", "scalar", "int32", None)]},
    "align": {"source": "align.cu", "entry": "align", "n": 256, "args": [
        ("op", "scalar", "int32", None), ("x", "in", "float32", "4 * n + 8"),
        ("out", "out", "float32", "n"), ("shift", "scalar", "int32", None),
        ("n", "scalar", "int32", None)]},
    "macros": {"n": 1000, "args": [
        ("a", "in", "float32", "n"), ("b", "in", "float32", "n"), ("c", "out", "float32", "n"),
        ("n", "scalar", "int32", None)]},
    "printf": {"source": "printf.cu", "entry": "printer", "n": 1000, "args": [
        ("a", "in", "float32", "n"), ("c", "out", "float32", "n"), ("n", "scalar", "int32", None)]},
}

CAST = "out-of-range float->int conversion"


def k(name: str, group: str, op: int | None, tests: str, **extra: object) -> Kernel:
    """A Kernel (shorter lines in the table)."""
    return Kernel(name, group, op, tests, **extra)  # type: ignore[arg-type]


U = "uniform"
KERNELS = [
    # fast intrinsics (bounds: CUDA Math API, single precision intrinsics)
    k("fdividef", "fast", 0, "__fdividef in its range: 2 ulp", init={"x": f"{U}(-100, 100)",
      "y": f"{U}(1, 1000)"}, rtol=3 * ULP),
    k("fdividef_huge", "fast", 1, "__fdividef by a divisor above 2^126 is 0 (the GPU's answer)",
      init={"y": f"{U}(1e8, 3e8)"}),
    k("fdividef_huge_wrong", "fast", 101, "__fdividef above 2^126 against the exact quotient",
      gpu="mismatch", init={"y": f"{U}(1e8, 3e8)"}, rtol=1e-5),
    k("div_huge_ieee", "fast", 2, "IEEE division by a divisor above 2^126 is exact",
      init={"y": f"{U}(1e8, 3e8)"}, rtol=ULP),
    k("expf", "fast", 3, "__expf on [-10, 10]: 2 + floor(1.173 |x|) ulp",
      init={"x": f"{U}(-10, 10)"}, rtol=14 * ULP),
    k("expf_tight", "fast", 103, "__expf on [15, 30] held to 1 ulp: the GPU misses it",
      gpu="mismatch", init={"x": f"{U}(15, 30)"}, rtol=ULP),
    k("exp10f", "fast", 4, "__exp10f on [-5, 5]: 2 + floor(2.95 |x|) ulp",
      init={"x": f"{U}(-5, 5)"}, rtol=17 * ULP),
    k("logf", "fast", 5, "__logf on [0.5, 2]: abs error 2^-21.41", init={"x": f"{U}(0.5, 2)"},
      atol=4e-7),
    k("log2f", "fast", 6, "__log2f on [1e-3, 1e3]: 2 ulp (abs 2^-22 on [0.5, 2])",
      init={"x": f"{U}(0.001, 1000)"}, rtol=3 * ULP, atol=3e-7),
    k("log10f", "fast", 7, "__log10f on [1e-3, 1e3]: 3 ulp (abs 2^-24 on [0.5, 2])",
      init={"x": f"{U}(0.001, 1000)"}, rtol=4 * ULP, atol=1e-7),
    k("sinf", "fast", 8, "__sinf on [-pi, pi]: abs error 2^-21.41",
      init={"x": f"{U}(-3.14159, 3.14159)"}, atol=4e-7),
    k("cosf", "fast", 9, "__cosf on [-pi, pi]: abs error 2^-21.19",
      init={"x": f"{U}(-3.14159, 3.14159)"}, atol=5e-7),
    k("tanf", "fast", 10, "__tanf on [-1, 1]: from __sinf / __cosf",
      init={"x": f"{U}(-1, 1)"}, rtol=4e-6, atol=1e-6),
    k("sincosf", "fast", 11, "__sincosf on [-pi, pi]: both results",
      init={"x": f"{U}(-3.14159, 3.14159)"}, atol=1.6e-6),
    k("powf", "fast", 12, "__powf on x in [0.5, 2], y in [-2, 2]: exp2(y * log2(x))",
      init={"x": f"{U}(0.5, 2)", "y": f"{U}(-2, 2)"}, rtol=2e-6, atol=1e-7),
    k("frcp_rn", "fast", 13, "__frcp_rn: correctly rounded 1/x", init={"x": f"{U}(0.1, 100)"}),
    k("fsqrt_rn", "fast", 14, "__fsqrt_rn: correctly rounded sqrt", init={"x": f"{U}(0, 100)"}),
    k("frsqrt_rn", "fast", 15, "__frsqrt_rn: 1/sqrt(x) rounded to nearest",
      init={"x": f"{U}(0.01, 100)"}, rtol=ULP),
    k("saturatef", "fast", 16, "__saturatef clamps to [0, 1]", init={"x": f"{U}(-2, 2)"}),
    k("fmaf_rn", "fast", 17, "__fmaf_rn: one rounding", init={"x": f"{U}(1, 2)",
      "y": f"{U}(1, 2)"}),
    k("fmaf_rz", "fast", 18, "__fmaf_rz rounds toward zero", init={"x": f"{U}(1, 2)",
      "y": f"{U}(1, 2)"}),
    k("fadd_ru", "fast", 19, "__fadd_ru rounds up", init={"x": f"{U}(1, 2)"}),
    k("fmul_rd", "fast", 20, "__fmul_rd rounds down", init={"x": f"{U}(1, 2)",
      "y": f"{U}(-2, 2)"}),
    k("fdiv_rn", "fast", 21, "__fdiv_rn: correctly rounded division",
      init={"y": f"{U}(0.5, 4)"}, rtol=ULP),
    k("fsub_rz", "fast", 22, "__fsub_rz rounds toward zero", init={"x": f"{U}(1, 2)"}),
    k("fdiv_ru", "fast", 23, "__fdiv_ru rounds up", init={"y": f"{U}(0.5, 4)"}),
    # double precision rounding modes
    k("ddiv_rn", "double", 0, "__ddiv_rn: IEEE double division", init={"y": f"{U}(0.5, 4)"}),
    k("dsqrt_rn", "double", 1, "__dsqrt_rn: IEEE double sqrt", init={"x": f"{U}(0, 100)"}),
    k("dadd_rz", "double", 2, "__dadd_rz rounds toward zero", init={"x": f"{U}(1, 2)"}),
    k("dmul_ru", "double", 3, "__dmul_ru rounds up"),
    k("fma_rd", "double", 4, "__fma_rd rounds down", init={"x": f"{U}(1, 2)",
      "y": f"{U}(1, 2)"}),
    # conversions
    k("float2int_rz", "convert", 0, "__float2int_rz saturates, NaN -> 0",
      init={"x": f"{U}(-1000, 1000)"}),
    k("float2int_rn", "convert", 1, "__float2int_rn: ties to even, saturates",
      init={"x": f"{U}(-1000, 1000)"}),
    k("float2int_rd", "convert", 2, "__float2int_rd rounds down, saturates",
      init={"x": f"{U}(-1000, 1000)"}),
    k("float2uint_rz", "convert", 3, "__float2uint_rz: negatives -> 0, saturates",
      init={"x": f"{U}(-1000, 1000)"}),
    k("float2ll_rz", "convert", 4, "__float2ll_rz saturates to 64 bits",
      init={"x": f"{U}(-1e12, 1e12)"}),
    k("float2ull_ru", "convert", 5, "__float2ull_ru rounds up, saturates",
      init={"x": f"{U}(-1000, 1000)"}),
    k("implicit_cast_out_of_range", "convert", 6, "(int)x of NaN, inf, 3e9: the GPU saturates",
      init={"x": f"{U}(-1000, 1000)"}, cpu_refuses=CAST),
    k("implicit_cast", "convert", 7, "(int)x of values in range truncates",
      init={"x": f"{U}(-1e5, 1e5)"}),
    k("int2float_rz", "convert", 8, "__int2float_rz rounds toward zero",
      init={"k": "randint(-2147483648, 2147483648)"}),
    k("ll2float_rn", "convert", 9, "__ll2float_rn rounds to nearest",
      init={"k": "randint(-4611686018427387904, 4611686018427387904)"}),
    k("uint2float_rz", "convert", 10, "__uint2float_rz rounds toward zero",
      init={"k": "randint(0, 4294967296)"}),
    k("float2half_rn", "convert", 11, "__float2half_rn: overflow to inf, ties to even",
      init={"x": f"{U}(-1e5, 1e5)"}),
    k("float2half_rz", "convert", 12, "__float2half_rz: overflow to 65504",
      init={"x": f"{U}(-1e5, 1e5)"}),
    k("float2half_rd", "convert", 13, "__float2half_rd rounds down",
      init={"x": f"{U}(-1e5, 1e5)"}),
    k("float2half_ru", "convert", 14, "__float2half_ru rounds up", init={"x": f"{U}(-1e5, 1e5)"}),
    k("float2bfloat16", "convert", 15, "__float2bfloat16 rounds to nearest even",
      init={"x": f"{U}(-1e5, 1e5)"}),
    k("float2bfloat16_rz", "convert", 16, "__float2bfloat16_rz truncates",
      init={"x": f"{U}(-1e5, 1e5)"}),
    k("half2int_rz", "convert", 17, "__half2int_rz, inf saturates", init={"x": f"{U}(-1e5, 1e5)"}),
    k("half2short_rn", "convert", 18, "__half2short_rn saturates to 16 bits",
      init={"x": f"{U}(-1e5, 1e5)"}),
    k("half2ushort_rz", "convert", 19, "__half2ushort_rz: negatives -> 0",
      init={"x": f"{U}(-1e5, 1e5)"}),
    k("half2ll_rz", "convert", 20, "__half2ll_rz, inf saturates", init={"x": f"{U}(-1e5, 1e5)"}),
    k("bfloat162int_rz", "convert", 21, "__bfloat162int_rz saturates",
      init={"x": f"{U}(-1e5, 1e5)"}),
    k("double2int_rz", "convert", 22, "__double2int_rz saturates",
      init={"x": f"{U}(-1e5, 1e5)"}),
    # integers
    k("add_wrap", "intops", 0, "signed int addition wraps"),
    k("mul_wrap", "intops", 1, "signed int multiplication wraps"),
    k("umul_wrap", "intops", 2, "unsigned multiplication wraps"),
    k("mulhi", "intops", 3, "__mulhi: high 32 bits of the signed product"),
    k("umulhi", "intops", 4, "__umulhi"),
    k("mul64hi", "intops", 5, "__mul64hi: high 64 bits of the signed 128-bit product"),
    k("umul64hi", "intops", 6, "__umul64hi"),
    k("popc", "intops", 7, "__popc and __popcll"),
    k("clz", "intops", 8, "__clz and __clzll, 32 for zero"),
    k("ffs", "intops", 9, "__ffs and __ffsll, 0 for zero"),
    k("brev", "intops", 10, "__brev"),
    k("brevll", "intops", 11, "__brevll"),
    k("byte_perm", "intops", 12, "__byte_perm"),
    k("funnelshift", "intops", 13, "__funnelshift_l (wraps) and __funnelshift_rc (clamps)"),
    k("sad", "intops", 14, "__sad and __usad"),
    k("shift_wide", "intops", 15, "x << s for s in [0, 64): the GPU gives 0 from 32 on",
      cpu_refuses="shift"),
    k("int_hadd", "intops", 16, "__hadd and __rhadd on int: averages without overflow"),
    # atomics
    k("atomic_add_int", "atomics", 0, "atomicAdd int", ),
    k("atomic_add_uint_wrap", "atomics", 1, "atomicAdd unsigned wraps",
      init={"au": "randint(0, 4294967296)"}),
    k("atomic_add_ull", "atomics", 2, "atomicAdd unsigned long long wraps",
      ),
    k("atomic_add_float", "atomics", 3, "atomicAdd float (any order: rtol)",
      rtol=1e-5, atol=1e-5),
    k("atomic_add_double", "atomics", 4, "atomicAdd double",
      rtol=1e-12, atol=1e-12),
    k("atomic_add_half2", "atomics", 5, "atomicAdd __half2 (whole values: exact)",
      init={"ah": "zeros"}),
    k("atomic_add_bfloat162", "atomics", 6, "atomicAdd __nv_bfloat162 (whole values: exact)",
      init={"ab": "zeros"}),
    k("atomic_add_half", "atomics", 7, "atomicAdd __half", init={
      "ah": "zeros"}),
    k("atomic_sub", "atomics", 8, "atomicSub int and unsigned", ),
    k("atomic_exch", "atomics", 9, "atomicExch returns the old value",
      ),
    k("atomic_minmax", "atomics", 10, "atomicMin int, atomicMax unsigned",
      init={"ai": "randint(-20, 20)", "au": "randint(0, 4294967296)"}),
    k("atomic_minmax_64", "atomics", 11, "atomicMin long long, atomicMax unsigned long long",
      ),
    k("atomic_bitwise", "atomics", 12, "atomicAnd, atomicOr, atomicXor",
      init={"au": "randint(0, 4294967296)"}),
    k("atomic_inc_wrap", "atomics", 13, "atomicInc wraps to 0 past its limit",
      init={"au": "randint(0, 10)"}),
    k("atomic_dec_wrap", "atomics", 14, "atomicDec wraps to its limit at 0 and above it",
      init={"au": "randint(0, 10)"}),
    k("atomic_cas", "atomics", 15, "atomicCAS loops, 32 and 64 bits", ),
    # warps
    k("shfl_broadcast", "warp", 0, "__shfl_sync from lane 5"),
    k("shfl_width", "warp", 1, "__shfl_sync with width 8"),
    k("shfl_up", "warp", 2, "__shfl_up_sync delta 3 width 16"),
    k("shfl_down", "warp", 3, "__shfl_down_sync delta 5"),
    k("shfl_xor_reduce", "warp", 4, "__shfl_xor_sync butterfly sum"),
    k("shfl_xor_width", "warp", 5, "__shfl_xor_sync mask 9 width 16"),
    k("ballot", "warp", 6, "__ballot_sync"),
    k("any_all", "warp", 7, "__any_sync and __all_sync"),
    k("activemask", "warp", 8, "__activemask of full warps"),
    k("reduce_add", "warp", 9, "__reduce_add_sync"),
    k("reduce_minmax", "warp", 10, "__reduce_min_sync and __reduce_max_sync"),
    k("match_any", "warp", 11, "__match_any_sync"),
    k("reduce_or", "warp", 12, "__reduce_or_sync"),
    # half and bfloat16
    k("hadd", "half", 0, "__hadd: one rounding"),
    k("hmul", "half", 1, "__hmul: one rounding"),
    k("hfma", "half", 2, "__hfma: one rounding"),
    k("hdiv", "half", 3, "__hdiv within 1 ulp", init={"y": f"{U}(0.5, 4)"}, rtol=1e-3),
    k("hsqrt", "half", 4, "hsqrt within 1 ulp", rtol=1e-3),
    k("hmax_hmin", "half", 5, "__hmax, __hmin, __hsub"),
    k("hfma2", "half", 6, "__hfma2 on pairs"),
    k("bf16_add", "bf16", 0, "__hadd on bfloat16", rtol=2.0**-8),
    k("bf16_mul", "bf16", 1, "__hmul on bfloat16", rtol=2.0**-8),
    k("bf16_fma", "bf16", 2, "__hfma on bfloat16", rtol=2.0**-7),
    k("bf16_mul2", "bf16", 3, "__hmul2 on bfloat162", rtol=2.0**-8),
    # denormals
    k("denormal_mul", "denormal", 0, "a denormal product is kept (no --ftz)",
      init={"x": f"{U}(1, 2)", "y": f"{U}(0.5, 2)"}),
    k("denormal_add", "denormal", 1, "denormal sums are kept", init={"x": f"{U}(1, 2)",
      "y": f"{U}(0.5, 2)"}),
    k("denormal_logf", "denormal", 2, "__logf of a denormal is its logarithm (no flush: H200)",
      init={"x": f"{U}(1, 2)"}, rtol=1e-5),
    k("denormal_logf_wrong", "denormal", 102, "__logf of a denormal against -inf (a flush)",
      gpu="mismatch", init={"x": f"{U}(1, 2)"}),
    k("denormal_expf", "denormal", 3, "__expf keeps denormal results (no flush: H200)",
      init={"y": f"{U}(0.1, 1)"}, atol=1.2e-38, cpu_refuses="denormal result"),
    k("denormal_expf_wrong", "denormal", 103, "__expf's denormal results against exp(x)",
      gpu="mismatch", init={"y": f"{U}(0.1, 1)"}, rtol=1e-3, cpu_refuses="denormal result"),
    k("denormal_sinf", "denormal", 4, "__sinf of a denormal: 0", init={"x": f"{U}(1, 2)"}),
    k("denormal_sinf_wrong", "denormal", 104, "__sinf of a denormal against sin(x) = x",
      gpu="mismatch", init={"x": f"{U}(1, 2)"}, rtol=1e-3),
    k("denormal_sqrt", "denormal", 5, "sqrtf of a denormal (IEEE, kept)",
      init={"x": f"{U}(1, 2)"}),
    # alignment
    k("float2_aligned", "align", 0, "float2 loads at an aligned offset", scalars={"shift": 2}),
    k("float2_misaligned", "align", 0, "float2 loads one float off: misaligned address",
      gpu="crash", scalars={"shift": 1}),
    k("float4_aligned", "align", 1, "float4 loads at an aligned offset", scalars={"shift": 4}),
    k("float4_misaligned", "align", 1, "float4 loads two floats off: misaligned address",
      gpu="crash", scalars={"shift": 2}),
    k("double_misaligned", "align", 2, "double loads one float off: misaligned address",
      gpu="crash", scalars={"shift": 1}),
    k("int_misaligned", "align", 3, "an int load 2 bytes off: misaligned address", gpu="crash",
      scalars={"shift": 0}),
    # predefined macros
    k("cudacc_ver_major", "macros", None, "#if __CUDACC_VER_MAJOR__ >= 13 (NVRTC 13)",
      source="ver13.cu", entry="ver13", rtol=1e-6, atol=1e-6),
    k("cuda_arch", "macros", None, "#if __CUDA_ARCH__ >= 900 in device code",
      source="arch.cu", entry="arch", rtol=1e-6, atol=1e-6),
    k("gnuc", "macros", None, "#ifdef __GNUC__: NVRTC does not define it",
      source="gnuc.cu", entry="gnuc", rtol=1e-6, atol=1e-6, cpu_refuses="__GNUC__"),
    k("cuda_ftz_macro", "macros", None, "#if __CUDA_FTZ: 0 by default",
      source="ftz_macro.cu", entry="ftz_macro", rtol=1e-6, atol=1e-6),
    # compiler options that change results
    k("use_fast_math_div", "options", 0, "--use_fast_math: x / y above 2^126 is 0",
      gpu="mismatch", init={"y": f"{U}(1e8, 3e8)"}, rtol=1e-5, options=["--use_fast_math"],
      cpu_refuses="--use_fast_math"),
    k("ftz_true", "options", 1, "--ftz=true flushes denormal results", gpu="mismatch",
      init={"x": f"{U}(1, 2)", "y": f"{U}(0.5, 2)"}, options=["--ftz=true"],
      cpu_refuses="--ftz=true"),
    k("prec_div_false", "options", 0, "--prec-div=false: x / y above 2^126 (exact on an H200)",
      init={"y": f"{U}(1e8, 3e8)"}, rtol=1e-5, options=["--prec-div=false"],
      cpu_refuses="--prec-div=false"),
    k("prec_sqrt_false", "options", 2, "--prec-sqrt=false: sqrtf within its 3 ulp bound",
      init={"x": f"{U}(0, 100)"}, rtol=4 * ULP, options=["--prec-sqrt=false"],
      cpu_refuses="--prec-sqrt=false"),
    k("default_options_expf", "options", 3, "expf without fast math: 2 ulp",
      init={"x": f"{U}(-10, 10)"}, rtol=3 * ULP),
    # printf
    k("printf", "printf", None, "a kernel that printfs and computes", rtol=1e-6, atol=1e-6),
]


def _toml_value(value: object) -> str:
    """A TOML literal for a str, number or list of strings."""
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return repr(value)


def spec_text(kernel: Kernel) -> str:
    """The spec file of one kernel."""
    group = GROUPS[kernel.group]
    source = kernel.source or str(group["source"])
    entry = kernel.entry or str(group["entry"])
    lines = [f"# Parity corpus: {kernel.tests}. Expected on an H200: {kernel.gpu}.",
             "# Written by generate.py.", "", "[kernel]", f'source = "{source}"',
             f'entry = "{entry}"', f"options = {_toml_value(kernel.options)}", ""]
    for name, kind, dtype, shape in group["args"]:  # type: ignore[attr-defined]
        lines += ["[[arg]]", f'name = "{name}"', f'kind = "{kind}"', f'dtype = "{dtype}"']
        if shape is None:
            value = {"op": kernel.op, "n": "n"}.get(name, kernel.scalars.get(name))
            lines.append(f"value = {_toml_value(str(value))}")
        else:
            lines.append(f'shape = ["{shape}"]')
            if kind != "out":
                defaults: dict[str, str] = group.get("init", {})  # type: ignore[assignment]
                init = kernel.init.get(name, defaults.get(name, "normal"))
                lines.append(f'init = "{init}"')
        lines.append("")
    lines += ["[launch]", 'grid = ["cdiv(n, 64)"]', 'block = ["64"]', "", "[reference]",
              'python = "ref.py"', "", "[verify]", f"cases = [{{ n = {group['n']} }}]",
              "seeds = 1", f"rtol = {kernel.rtol!r}", f"atol = {kernel.atol!r}", ""]
    return "\n".join(lines)


def index_text() -> str:
    """corpus.toml: every kernel, what it tests, what the GPU must say, what the CPU names."""
    lines = ["# The parity corpus (written by generate.py): for each kernel, its spec, what it",
             "# tests, the verdict verify must give on an H200 (gpu), and, where the CPU",
             "# emulation refuses it (verdict unverified), the construct its message names.", ""]
    for kernel in KERNELS:
        folder = str(GROUPS[kernel.group].get("folder", kernel.group))
        lines += ["[[kernel]]", f'name = "{kernel.name}"',
                  f'spec = "{folder}/{kernel.name}.toml"', f'tests = "{kernel.tests}"',
                  f'gpu = "{kernel.gpu}"']
        if kernel.cpu_refuses:
            lines.append(f'cpu_refuses = "{kernel.cpu_refuses}"')
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    """Write every spec and the index."""
    names = [kernel.name for kernel in KERNELS]
    assert len(names) == len(set(names)), "kernel names must be unique"
    for kernel in KERNELS:
        folder = HERE / str(GROUPS[kernel.group].get("folder", kernel.group))
        (folder / f"{kernel.name}.toml").write_text(spec_text(kernel))
    (HERE / "corpus.toml").write_text(index_text())
    print(f"{len(KERNELS)} kernels written")


if __name__ == "__main__":
    main()
