"""Diagnostics from the real NVRTC (and nvcc where installed) land on the user's own lines and
columns, with the compiler's message, for the mistakes people make."""

from __future__ import annotations

import pytest

from app.base import system
from app.compile import Diagnostic, compile_file

needs_nvcc = pytest.mark.skipif(system.find_tool("nvcc") is None, reason="nvcc is not installed")


def column(text: str, line: int, token: str) -> int:
    """The 1-based character column of `token` on `line` of `text`."""
    return text.splitlines()[line - 1].index(token) + 1


def only_error(result) -> Diagnostic:
    """The one error of a failed result."""
    assert not result.ok and result.stage == "compile", (result.stage, result.message)
    errors = result.errors
    assert len(errors) == 1, [d.format() for d in result.diagnostics]
    return errors[0]


UNDEFINED = """extern "C" __global__ void scale(float* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = undefined_name * a[i];
}
"""


def test_undefined_name_is_reported_at_its_line_and_column(write) -> None:
    result = compile_file(write("scale.cu", UNDEFINED))
    error = only_error(result)
    assert (error.file, error.line, error.severity) == ("scale.cu", 3, "error")
    assert error.column == column(UNDEFINED, 3, "undefined_name")
    assert error.message == 'identifier "undefined_name" is undefined'
    assert error.format() == (f"scale.cu:3:{error.column}: error: identifier "
                              '"undefined_name" is undefined')
    assert "undefined_name" in error.raw and "^" in error.raw
    assert result.message.startswith("1 error in scale.cu; first: scale.cu:3:")
    assert result.cubin is None and result.kernels == []


def test_syntax_error_names_the_line_where_the_compiler_noticed(write) -> None:
    text = 'extern "C" __global__ void k(float* a) {\n    a[0] = 1\n}\n'
    error = only_error(compile_file(write("k.cu", text)))
    # The missing ';' after line 2 is noticed at the '}' on line 3, as the compiler says.
    assert (error.line, error.column, error.message) == (3, 1, 'expected a ";"')


def test_type_error(write) -> None:
    text = ('struct Pair { int x; };\n'
            'extern "C" __global__ void k(float* a) {\n'
            '    Pair p;\n'
            '    float* q = p;\n'
            '    a[0] = *q;\n'
            '}\n')
    error = only_error(compile_file(write("k.cu", text)))
    assert error.line == 4
    assert error.column == column(text, 4, "p;")
    assert error.message == 'no suitable conversion function from "Pair" to "float *" exists'


def test_missing_include_names_the_header(write) -> None:
    text = '#include "missing.cuh"\nextern "C" __global__ void k(float* a) { a[0] = 1; }\n'
    result = compile_file(write("k.cu", text))
    error = only_error(result)
    assert (error.file, error.line) == ("k.cu", 1)
    assert error.message == 'cannot open source file "missing.cuh"'


def test_error_inside_a_device_function_uses_character_columns(write) -> None:
    # A tab and a two-byte character before the error: the column counts characters.
    text = ('__device__ float helper(float x) {\n'
            '\tfloat y = x; /* \u00e9t\u00e9 */ return y + nope;\n'
            '}\n'
            'extern "C" __global__ void k(float* a) { a[0] = helper(a[1]); }\n')
    error = only_error(compile_file(write("k.cu", text)))
    assert (error.line, error.column) == (2, column(text, 2, "nope"))
    assert error.message == 'identifier "nope" is undefined'


def test_error_in_a_template_points_at_the_template_and_the_instantiation(write) -> None:
    text = ('template <typename T>\n'
            '__device__ T first(T x) {\n'
            '    return x.member;\n'
            '}\n'
            '\n'
            '__global__ void k(float* a) {\n'
            '    a[0] = first(a[1]);\n'
            '}\n')
    result = compile_file(write("k.cu", text))
    error = only_error(result)
    assert (error.line, error.column) == (3, column(text, 3, "x.member"))
    assert error.message == 'expression must have class type but it has type "float"'
    notes = [d for d in result.diagnostics if d.severity == "note"]
    assert [(n.file, n.line) for n in notes] == [("k.cu", 7)]
    assert 'instantiation of "T first(T) [with T=float]"' in notes[0].message


def test_error_in_a_local_header_names_the_header(write) -> None:
    header = "__device__ float twice(float x) {\n    return x * two;\n}\n"
    write("lib/helper.cuh", header)
    text = ('#include "lib/helper.cuh"\n'
            'extern "C" __global__ void k(float* a) { a[0] = twice(a[0]); }\n')
    error = only_error(compile_file(write("k.cu", text)))
    assert (error.file, error.line, error.column) == ("lib/helper.cuh", 2, column(header, 2, "two"))
    assert error.message == 'identifier "two" is undefined'


def test_warnings_are_reported_and_the_compile_succeeds(write) -> None:
    text = 'extern "C" __global__ void k(float* a) {\n    int unused = 3;\n    a[0] = 1;\n}\n'
    result = compile_file(write("k.cu", text))
    assert result.ok and result.cubin
    assert [(d.severity, d.line, d.column) for d in result.diagnostics] == [
        ("warning", 2, column(text, 2, "unused"))]
    assert result.warnings[0].message == 'variable "unused" was declared but never referenced'


def test_every_error_is_reported_in_order(write) -> None:
    text = 'extern "C" __global__ void k(float* a) {\n    a[0] = zz;\n    a[1] = yy;\n}\n'
    result = compile_file(write("k.cu", text))
    assert [(d.line, d.message) for d in result.errors] == [
        (2, 'identifier "zz" is undefined'), (3, 'identifier "yy" is undefined')]
    assert result.message.startswith("2 errors in k.cu")


@needs_nvcc
def test_nvcc_reports_the_same_coordinates_despite_its_macro_expanded_echo(write) -> None:
    # nvcc echoes the line after expanding __global__; the column must still be the user's.
    text = 'extern "C" __global__ void k(float* a, Missing m) {\n    a[0] = zz;\n}\n'
    result = compile_file(write("k.cu", text), backend="nvcc")
    assert result.backend == "nvcc" and result.stage == "compile"
    assert [(d.file, d.line, d.column, d.message) for d in result.errors] == [
        ("k.cu", 1, column(text, 1, "Missing"), 'identifier "Missing" is undefined'),
        ("k.cu", 2, column(text, 2, "zz"), 'identifier "zz" is undefined')]


def test_nested_template_errors_give_a_note_per_instantiation(write) -> None:
    text = ('template <typename T>\n'
            '__device__ T inner(T x) { return x.bad; }\n'
            'template <typename T>\n'
            '__device__ T outer(T x) { return inner(x) + 1; }\n'
            '__global__ void k(float* a) { a[0] = outer(a[1]); }\n')
    result = compile_file(write("t.cu", text))
    error = only_error(result)
    assert (error.line, error.column) == (2, column(text, 2, "x.bad"))
    notes = [(d.line, d.message) for d in result.diagnostics if d.severity == "note"]
    assert notes == [
        (4, 'detected during instantiation of "T inner(T) [with T=float]"'),
        (5, 'detected during instantiation of "T outer(T) [with T=float]"')]
