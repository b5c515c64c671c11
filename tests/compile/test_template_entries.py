"""Template instantiations as entries (`scale<float, 4>`), compiled for real: NVRTC's name
expressions and nvcc's appended instantiations give each entry's lowered name, the cubin holds
that kernel, and an entry that cannot be instantiated is a compile error on the user's file
that names it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from app.base import system
from app.compile import compile_file
from app.compile.elf import read_cubin
from app.compile.entries import demangle, function_name, match_entries, normalized

SOURCE = """#include <cstdint>
template <typename T, int W>
__global__ void scale(const T* x, T* y, T alpha, int n) {
    int first = (blockIdx.x * blockDim.x + threadIdx.x) * W;
    for (int k = 0; k < W; ++k)
        if (first + k < n) y[first + k] = alpha * x[first + k];
}
namespace ns {
template <typename T> __global__ void fill(T* out, T value) { out[threadIdx.x] = value; }
}
template <unsigned N, bool B> __global__ void flags(int* out) { out[0] = N + B; }
extern "C" __global__ void plain(float* out) { out[0] = 1.0f; }
__global__ void twice(float* out) { out[0] = 2.0f; }
__global__ void twice(int* out) { out[0] = 2; }
"""
ENTRIES = ["scale<float, 4>", "ns::fill<double>", "flags<3, true>", "scale<uint32_t,1>"]
LOWERED = {"scale<float, 4>": "_Z5scaleIfLi4EEvPKT_PS0_S0_i",
           "ns::fill<double>": "_ZN2ns4fillIdEEvPT_S1_",
           "flags<3, true>": "_Z5flagsILj3ELb1EEvPi",
           "scale<uint32_t,1>": "_Z5scaleIjLi1EEvPKT_PS0_S0_i"}
needs_nvcc = pytest.mark.skipif(system.find_tool("nvcc") is None, reason="nvcc not installed")
COMPILERS = ["nvrtc", pytest.param("nvcc", marks=needs_nvcc)]


@pytest.mark.parametrize("backend", COMPILERS)
def test_template_entries_get_their_lowered_names_and_the_cubin_holds_them(
        write, backend: str) -> None:
    path = write("templates.cu", SOURCE)
    result = compile_file(path, arch="sm_90", backend=backend, entries=[*ENTRIES, "plain"])
    assert result.ok, result.message
    assert result.lowered == LOWERED
    assert sorted(read_cubin(result.cubin or b"").kernels) == sorted(
        [*LOWERED.values(), "plain", "_Z5twicePf", "_Z5twicePi"])
    for entry, symbol in LOWERED.items():
        assert result.kernel_symbol(entry) == symbol
        assert symbol.encode() + b"\0" in (result.cubin or b"")
    assert result.kernel_symbol(" scale<float, 4>") == LOWERED["scale<float, 4>"]
    # Plain names and overloads resolve as before: the name itself, or refused as ambiguous.
    assert result.kernel_symbol("plain") == "plain"
    assert result.kernel_symbol("twice") is None and len(result.kernel_symbols("twice")) == 2
    assert not result.warnings, [d.format() for d in result.warnings]


def test_without_entries_a_template_is_not_instantiated_and_entries_key_the_cache(write) -> None:
    path = write("templates.cu", SOURCE)
    bare = compile_file(path, arch="sm_90")
    assert bare.ok and bare.lowered == {}
    assert not any(k.name.startswith("_Z5scale") for k in bare.kernels)
    assert bare.kernel_symbol("scale<float, 4>") is None
    first = compile_file(path, arch="sm_90", entries=["scale<float, 4>"])
    assert not first.cached and first.kernel_symbol("scale<float, 4>") == LOWERED[
        "scale<float, 4>"]
    again = compile_file(path, arch="sm_90", entries=["scale<float, 4>", "plain"])
    assert again.cached and again.lowered == first.lowered  # plain names change nothing
    other = compile_file(path, arch="sm_90", entries=["scale<int, 2>"])
    assert not other.cached and other.kernel_symbol("scale<int, 2>") == \
        "_Z5scaleIiLi2EEvPKT_PS0_S0_i"


@pytest.mark.parametrize("backend", COMPILERS)
@pytest.mark.parametrize(("entry", "says"), [
    ("scale<float>", 'cannot determine which instance of function template "scale"'),
    ("scal<float, 4>", 'identifier "scal" is undefined'),
])
def test_an_entry_that_cannot_be_instantiated_is_an_error_naming_it(
        write, backend: str, entry: str, says: str) -> None:
    path = write("templates.cu", SOURCE)
    result = compile_file(path, arch="sm_90", backend=backend, entries=[entry])
    assert not result.ok and result.stage == "compile"
    first = result.errors[0]
    assert first.file == "templates.cu" and first.line == 0
    assert first.message.startswith(f"the entry {entry!r} cannot be instantiated: ")
    assert says in first.message
    assert result.message.startswith(f"{len(result.errors)} error")


@pytest.mark.parametrize("backend", COMPILERS)
def test_errors_in_the_users_lines_keep_their_line_numbers(write, backend: str) -> None:
    path = write("bad.cu", SOURCE.replace("alpha * x[first + k]", "alpha * xx[first + k]"))
    result = compile_file(path, arch="sm_90", backend=backend, entries=["scale<float, 4>"])
    assert not result.ok
    assert (result.errors[0].file, result.errors[0].line) == ("bad.cu", 6)
    assert 'identifier "xx" is undefined' in result.errors[0].message


def test_a_malformed_entry_is_refused_before_compiling(write) -> None:
    result = compile_file(write("k.cu", SOURCE), entries=["scale<float;>"])
    assert result.stage == "options" and "is not a function name" in result.message


def test_demangled_names_match_entries_as_users_write_them() -> None:
    names = demangle(list(LOWERED.values()) + ["plain"])
    assert names["plain"] == "plain"
    assert function_name(names[LOWERED["scale<float, 4>"]]) == "scale<float, 4>"
    assert function_name(names[LOWERED["flags<3, true>"]]) == "flags<3u, true>"
    assert normalized("flags<3u, true>") == normalized(" flags<3,true>")
    assert match_entries(ENTRIES, names) == LOWERED
    # An alias cannot be told apart when two instances are left for it.
    assert "scale<uint32_t,1>" not in match_entries(["scale<uint32_t,1>"], names)


@needs_nvcc
def test_nvcc_names_the_instances_when_an_entry_matches_none(write) -> None:
    source = SOURCE + "template __global__ void scale<int, 2>(const int*, int*, int, int);\n"
    result = compile_file(write("t.cu", source), arch="sm_90", backend="nvcc",
                          entries=["scale<uint32_t, 1>"])
    assert result.ok and result.kernel_symbol("scale<uint32_t, 1>") is None
    warning = result.warnings[0].message
    assert "matches none of the instances" in warning
    assert "scale<int, 2>" in warning and "scale<unsigned int, 1>" in warning


def test_compile_command_builds_entries_and_prints_their_lowered_names(write) -> None:
    path = write("templates.cu", SOURCE)
    done = subprocess.run([sys.executable, "-m", "app", "compile", str(path), "--entry",
                           "scale<float, 4>", "--entry", "flags<3, true>"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert f"scale<float, 4> is {LOWERED['scale<float, 4>']}" in done.stdout
    assert f"flags<3, true> is {LOWERED['flags<3, true>']}" in done.stdout
    shown = subprocess.run([sys.executable, "-m", "app", "compile", str(path), "--kernel",
                            "ns::fill<double>", "--resources"],
                           capture_output=True, text=True, timeout=120, check=False)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[1].startswith(LOWERED["ns::fill<double>"] + " ")
