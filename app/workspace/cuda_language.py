"""Words the CUDA editor knows: keyword sets for highlighting, completion lists and call tips.

Plain data, no Qt: the editor reads it, tests can check it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

CPP_KEYWORDS = (
    "alignas alignof auto bool break case catch char char16_t char32_t class const constexpr "
    "const_cast continue decltype default delete do double dynamic_cast else enum explicit "
    "extern false float for friend goto if inline int long mutable namespace new noexcept "
    "nullptr operator private protected public register reinterpret_cast return short signed "
    "sizeof static static_assert static_cast struct switch template this throw true try "
    "typedef typeid typename union unsigned using virtual void volatile while size_t"
).split()

# Function and variable qualifiers that only CUDA has.
CUDA_KEYWORDS = (
    "__global__ __device__ __host__ __shared__ __constant__ __managed__ __restrict__ "
    "__noinline__ __forceinline__ __launch_bounds__ __grid_constant__ __align__ "
    "__cluster_dims__ __nv_pure__"
).split()

# Vector and half types, highlighted like classes.
CUDA_TYPES = (
    "char1 char2 char3 char4 uchar1 uchar2 uchar3 uchar4 short1 short2 short3 short4 "
    "ushort1 ushort2 ushort3 ushort4 int1 int2 int3 int4 uint1 uint2 uint3 uint4 "
    "long1 long2 long3 long4 ulong1 ulong2 ulong3 ulong4 longlong1 longlong2 "
    "ulonglong1 ulonglong2 float1 float2 float3 float4 double1 double2 dim3 "
    "half half2 __half __half2 __nv_bfloat16 __nv_bfloat162 cudaError_t cudaStream_t "
    "int8_t uint8_t int16_t uint16_t int32_t uint32_t int64_t uint64_t"
).split()

# Built-in variables every kernel reads.
CUDA_BUILTINS = "threadIdx blockIdx blockDim gridDim warpSize".split()

# Intrinsics and device functions with their call tips (the signature shown on '(').
INTRINSICS: dict[str, str] = {
    "__syncthreads": "void __syncthreads()  -- barrier for every thread of the block",
    "__syncwarp": "void __syncwarp(unsigned mask = 0xffffffff)",
    "__threadfence": "void __threadfence()  -- order memory writes device-wide",
    "__threadfence_block": "void __threadfence_block()",
    "__activemask": "unsigned __activemask()",
    "__shfl_sync": "T __shfl_sync(unsigned mask, T var, int srcLane, int width = warpSize)",
    "__shfl_up_sync": "T __shfl_up_sync(unsigned mask, T var, unsigned delta, "
                      "int width = warpSize)",
    "__shfl_down_sync": "T __shfl_down_sync(unsigned mask, T var, unsigned delta, "
                        "int width = warpSize)",
    "__shfl_xor_sync": "T __shfl_xor_sync(unsigned mask, T var, int laneMask, "
                       "int width = warpSize)",
    "__ballot_sync": "unsigned __ballot_sync(unsigned mask, int predicate)",
    "__any_sync": "int __any_sync(unsigned mask, int predicate)",
    "__all_sync": "int __all_sync(unsigned mask, int predicate)",
    "__reduce_add_sync": "unsigned __reduce_add_sync(unsigned mask, unsigned value)",
    "atomicAdd": "T atomicAdd(T* address, T val)  -- returns the old value",
    "atomicSub": "int atomicSub(int* address, int val)",
    "atomicExch": "T atomicExch(T* address, T val)",
    "atomicMin": "T atomicMin(T* address, T val)",
    "atomicMax": "T atomicMax(T* address, T val)",
    "atomicCAS": "T atomicCAS(T* address, T compare, T val)",
    "atomicAnd": "T atomicAnd(T* address, T val)",
    "atomicOr": "T atomicOr(T* address, T val)",
    "__ldg": "T __ldg(const T* address)  -- load through the read-only cache",
    "__fmaf_rn": "float __fmaf_rn(float x, float y, float z)",
    "fmaf": "float fmaf(float x, float y, float z)",
    "__fdividef": "float __fdividef(float x, float y)",
    "__expf": "float __expf(float x)  -- fast, lower precision",
    "__logf": "float __logf(float x)",
    "__sinf": "float __sinf(float x)",
    "__cosf": "float __cosf(float x)",
    "__powf": "float __powf(float x, float y)",
    "expf": "float expf(float x)",
    "logf": "float logf(float x)",
    "sqrtf": "float sqrtf(float x)",
    "rsqrtf": "float rsqrtf(float x)",
    "fmaxf": "float fmaxf(float x, float y)",
    "fminf": "float fminf(float x, float y)",
    "fabsf": "float fabsf(float x)",
    "tanhf": "float tanhf(float x)",
    "__float2half": "__half __float2half(float a)",
    "__half2float": "float __half2float(__half a)",
    "__float2bfloat16": "__nv_bfloat16 __float2bfloat16(float a)",
    "__bfloat162float": "float __bfloat162float(__nv_bfloat16 a)",
    "__hadd": "__half __hadd(__half a, __half b)",
    "__hmul": "__half __hmul(__half a, __half b)",
    "__hfma": "__half __hfma(__half a, __half b, __half c)",
    "__popc": "int __popc(unsigned x)",
    "__clz": "int __clz(int x)",
    "__ffs": "int __ffs(int x)",
    "__brev": "unsigned __brev(unsigned x)",
    "__mul24": "int __mul24(int x, int y)",
    "__umulhi": "unsigned __umulhi(unsigned x, unsigned y)",
    "make_float2": "float2 make_float2(float x, float y)",
    "make_float4": "float4 make_float4(float x, float y, float z, float w)",
    "make_int2": "int2 make_int2(int x, int y)",
    "min": "T min(T a, T b)",
    "max": "T max(T a, T b)",
    "printf": "int printf(const char* format, ...)",
}

# Members offered after `threadIdx.` and friends.
DIM_MEMBERS = ("x", "y", "z")

_IDENTIFIER = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")


def completion_words() -> list[str]:
    """Every word the editor offers without looking at the file."""
    return sorted({*CPP_KEYWORDS, *CUDA_KEYWORDS, *CUDA_TYPES, *CUDA_BUILTINS, *INTRINSICS})


def file_identifiers(text: str, minimum: int = 3) -> set[str]:
    """Identifiers in a source text, long enough to be worth completing."""
    return {word for word in _IDENTIFIER.findall(text) if len(word) >= minimum}


def count_word(text: str, word: str) -> int:
    """How many times `word` appears in `text` as a whole identifier."""
    if not word:
        return 0
    return len(re.findall(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])", text))


def completions(prefix: str, file_words: Iterable[str] = (), limit: int = 200) -> list[str]:
    """Candidates starting with `prefix`: CUDA words plus the file's own identifiers.

    Matching ignores case (people type `syncth` for `__syncthreads` rarely, but `atomicadd`
    often); the typed prefix itself is dropped when it is the only match.
    """
    lowered = prefix.lower()
    stripped = lowered.lstrip("_")
    pool = set(completion_words()) | set(file_words)
    found = [w for w in pool if w.lower().startswith(lowered)
             or (stripped and w.lower().lstrip("_").startswith(stripped))]
    found = [w for w in found if w != prefix]
    found.sort(key=lambda w: (not w.lower().startswith(lowered), w.lower()))
    return found[:limit]


def call_tip(word: str) -> str | None:
    """The signature to show when `word(` is typed, if we know one."""
    return INTRINSICS.get(word)
