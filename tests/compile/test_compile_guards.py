"""The compile boundary: refused options and includes, bad inputs, the time limit and the
memory cap, each ending in a result with a stage and a clear message."""

from __future__ import annotations

import os
import time

import pytest
from heavy_templates import RUNAWAY

from app.compile import MAX_SOURCE_BYTES, OptionError, check_options, compile_file, compile_source

KERNEL = 'extern "C" __global__ void k(float* a) { a[threadIdx.x] *= 2.0f; }\n'

@pytest.mark.parametrize(("option", "reason"), [
    ("-ccbin=/usr/bin/gcc", "runs or configures host tools"),
    ("-Xcompiler", "runs or configures host tools"),
    ("-o/tmp/out.cubin", "writes files"),
    ("--fdevice-time-trace=/tmp/trace", "writes files"),
    ("-I/usr/include", "absolute paths are refused"),
    ("-I../elsewhere", "leads outside the kernel's folder"),
    ("-include", "reads headers from outside the kernel's folder"),
    ("-arch=sm_80", "choose the architecture with --arch"),
    ("-rdc=true", "needs one loadable cubin"),
    ("-Xptxas=--preserve-relocs", "ptxas option '--preserve-relocs' is not allowed"),
    ("--frobnicate", "not in Kernel Studio's allowlist"),
])
def test_refused_options_are_named_with_the_reason(write, option: str, reason: str) -> None:
    result = compile_file(write("k.cu", KERNEL), options=[option])
    assert (result.ok, result.stage) == (False, "options")
    assert result.message.startswith(f"{option!r} is refused: ")
    assert reason in result.message


def test_allowed_options_compile(write) -> None:
    write("inc/params.h", "#define FACTOR 3.0f\n")
    text = ('#include "params.h"\n'
            'extern "C" __global__ void k(float* a) { a[0] *= FACTOR * SCALE; }\n')
    options = ["-O3", "--use_fast_math", "-DSCALE=2.0f", "-Iinc", "-std=c++17",
               "--maxrregcount=64", "-Xptxas=--warn-on-spills", "--ftz=true"]
    result = compile_file(write("k.cu", text), options=options)
    assert result.ok, result.message
    assert "-Xptxas=-O3" in result.options and any(o.startswith("-I") for o in result.options)


def test_check_options_raises_option_error_for_callers_that_validate_early(tmp_path) -> None:
    with pytest.raises(OptionError) as caught:
        check_options(["-O2", "-Xlinker"], tmp_path)
    assert caught.value.option == "-Xlinker"


@pytest.mark.parametrize(("line", "reason"), [
    ('#include "/etc/passwd"', "absolute header paths are refused"),
    ('#include "../outside.h"', "climbs out of the kernel's folder"),
    ("#include <../../etc/hosts>", "climbs out of the kernel's folder"),
    ("#define HEADER <cuda_fp16.h>\n#include HEADER", "computed includes are refused"),
    ('/* continued */ #inc\\\nlude "/etc/passwd"', "absolute header paths are refused"),
])
def test_refused_includes_are_marked_on_their_line(write, line: str, reason: str) -> None:
    text = line + "\n" + KERNEL
    result = compile_file(write("k.cu", text))
    assert (result.ok, result.stage) == (False, "includes")
    assert reason in result.message
    [mark] = result.diagnostics
    expected_line = 2 if line.startswith("#define") else 1
    assert (mark.file, mark.line, mark.severity) == ("k.cu", expected_line, "error")


def test_a_symbolic_link_out_of_the_folder_is_refused(write, tmp_path) -> None:
    os.symlink("/etc/hostname", tmp_path / "sneaky.h")
    result = compile_file(write("k.cu", '#include "sneaky.h"\n' + KERNEL))
    assert result.stage == "includes"
    assert "symbolic link that leads outside the kernel's folder" in result.message


def test_a_refused_include_inside_a_local_header_names_the_header(write) -> None:
    write("a.h", '#pragma once\n#include "/etc/passwd"\n')
    result = compile_file(write("k.cu", '#include "a.h"\n' + KERNEL))
    assert result.stage == "includes"
    assert [(d.file, d.line) for d in result.diagnostics] == [("a.h", 2)]


def test_cuda_headers_and_local_headers_are_allowed(write) -> None:
    write("sub/util.cuh",
          '#include "more.cuh"\n__device__ float twice(float x) { return 2 * x; }\n')
    write("sub/more.cuh", "#pragma once\n")
    text = ('#include <cuda_fp16.h>\n#include "sub/util.cuh"\n'
            'extern "C" __global__ void k(__half* h, float* a) {\n'
            '    a[0] = twice(__half2float(h[0]));\n}\n')
    result = compile_file(write("k.cu", text))
    if result.stage == "compile" and "cuda_fp16.h" in result.message:
        pytest.skip("no CUDA headers on this machine (toolkit or nvidia wheels)")
    assert result.ok, result.message


def test_empty_file(write) -> None:
    for text in ("", "  \n\t\n"):
        result = compile_file(write("empty.cu", text))
        assert (result.ok, result.stage) == (False, "input")
        assert result.message == ("empty.cu is empty: there is nothing to compile; write a "
                                  "__global__ function")


def test_non_utf8_file_names_the_byte_and_its_place(write) -> None:
    data = KERNEL.encode() + b"// caf\xe9 in Latin-1\n"
    result = compile_file(write("latin1.cu", data))
    assert (result.ok, result.stage) == (False, "input")
    assert result.message == ("latin1.cu is not UTF-8 text: byte 0xe9 at line 2, column 7. "
                              "Save the file as UTF-8")


def test_ten_megabyte_file_is_refused_quickly(write) -> None:
    line = "// " + "x" * 96 + "\n"
    path = write("huge.cu", KERNEL + line * (10 * 2**20 // len(line)))
    started = time.perf_counter()
    result = compile_file(path)
    assert time.perf_counter() - started < 2.0
    assert (result.ok, result.stage) == (False, "input")
    assert result.message.startswith(f"huge.cu is 10.0 MiB; kernel sources are limited to "
                                     f"{MAX_SOURCE_BYTES // 2**20} MiB")


def test_a_large_file_under_the_limit_compiles(write) -> None:
    line = "// " + "x" * 96 + "\n"
    result = compile_file(write("large.cu", KERNEL + line * (3 * 2**20 // len(line))))
    assert result.ok, result.message


def test_file_with_no_kernel_compiles_with_a_clear_warning(write) -> None:
    result = compile_file(write("lib.cu", "__device__ float twice(float x) { return 2 * x; }\n"))
    assert result.ok and result.kernels == []
    assert result.message == ("lib.cu compiled, but it has no __global__ function: there is no "
                              "kernel to run or inspect")
    assert [d.severity for d in result.diagnostics] == ["warning"]
    assert result.kernel_symbol("twice") is None


def test_missing_file_and_binary_source(tmp_path) -> None:
    result = compile_file(tmp_path / "nowhere.cu")
    assert result.stage == "input" and result.message.startswith("cannot read ")
    binary = compile_source("int x;\0junk", filename="blob.cu", folder=tmp_path)
    assert binary.stage == "input" and "NUL character on line 1" in binary.message


def test_unsupported_and_virtual_architectures(write) -> None:
    path = write("k.cu", KERNEL)
    old = compile_file(path, arch="sm_50")
    assert old.stage == "options" and "sm_50 is not supported by NVRTC" in old.message
    assert "sm_90" in old.message  # the supported ones are listed
    virtual = compile_file(path, arch="compute_90")
    assert virtual.stage == "options" and "use sm_90" in virtual.message


def test_a_compile_over_its_time_limit_is_stopped_and_the_next_one_works(write) -> None:
    path = write("runaway.cu", RUNAWAY.replace("T<N,N,N>", "T<60,60,60>"))
    started = time.perf_counter()
    result = compile_file(path, timeout=1.0, use_cache=False)
    assert time.perf_counter() - started < 10
    assert (result.ok, result.stage) == (False, "timeout")
    assert result.message.startswith("compiling runaway.cu took longer than the 1 s limit")
    after = compile_file(write("k.cu", KERNEL), use_cache=False)
    assert after.ok, after.message


def test_a_compile_over_its_memory_cap_is_stopped(write) -> None:
    path = write("hungry.cu", RUNAWAY.replace("T<N,N,N>", "T<30,30,30>"))
    result = compile_file(path, memory_mb=400, timeout=60, use_cache=False)
    assert (result.ok, result.stage) == (False, "memory"), result.message
    assert "400 MiB memory cap" in result.message
    after = compile_file(write("k.cu", KERNEL), use_cache=False)
    assert after.ok, after.message


def test_missing_cuda_headers_get_a_hint(write, monkeypatch) -> None:
    from app.compile import includes

    monkeypatch.setattr(includes, "cuda_include_dirs", lambda: [])
    result = compile_file(write("k.cu", "#include <cuda_fp16.h>\n" + KERNEL), use_cache=False)
    assert result.stage == "compile"
    assert result.errors[0].message == 'cannot open source file "cuda_fp16.h"'
    [note] = [d for d in result.diagnostics if d.severity == "note"]
    assert note.line == 1 and "no CUDA headers were found on this machine" in note.message
