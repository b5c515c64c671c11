"""The include scanner reads a source as the preprocessors do: every way of writing a directive
that NVRTC (EDG) or nvcc's host preprocessor (GCC) acts on is seen, and a name outside the
kernel's folder is refused on the user's line, before any compiler runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.compile import compile_file, compile_source
from app.compile.includes import uses

KERNEL = 'extern "C" __global__ void k(float* a) { a[0] = 1.0f; }\n'
SECRET = '"/etc/hostname"'

# (name, source before the kernel, line of the refused use, words of the reason)
HIDDEN_FORMS = [
    ("form feed before #", f'\f#include {SECRET}\n', 1, "absolute header paths"),
    ("vertical tab after #", f'#\v include {SECRET}\n', 1, "absolute header paths"),
    ("form feed after include", f'#include\f{SECRET}\n', 1, "absolute header paths"),
    ("lone carriage returns (GCC: line breaks)", f'int a;\r#include {SECRET}\r', 2,
     "absolute header paths"),
    ("carriage return after # (EDG: a space)", f'#\rinclude {SECRET}\n', 1,
     "absolute header paths"),
    ("splice inside the name", f'#inc\\\nlude {SECRET}\n', 1, "absolute header paths"),
    ("splice with CR LF", f'#inc\\\r\nlude {SECRET}\r\n', 1, "absolute header paths"),
    ("splice after spaces (GCC)", f'#inc\\  \nlude {SECRET}\n', 1, "absolute header paths"),
    ("comment between # and include", f'# /* a */ include {SECRET}\n', 1,
     "absolute header paths"),
    ("comment over a line break", f'#/*\n*/include {SECRET}\n', 1, "absolute header paths"),
    ("comment before #", f'/* a\n b */ #include {SECRET}\n', 1, "absolute header paths"),
    ("digraph", f'%:include {SECRET}\n', 1, "absolute header paths"),
    ("trigraph (GCC in ISO modes)", f'??=include {SECRET}\n', 1, "absolute header paths"),
    ("trigraph splice", f'#inc??/\nlude {SECRET}\n', 1, "absolute header paths"),
    ("include_next", f'#include_next {SECRET}\n', 1, "absolute header paths"),
    ("import", '#import <../../etc/hostname>\n', 1, "climbs out"),
    ("embed", f'const char d[] = {{\n#embed {SECRET}\n}};\n', 2, "absolute header paths"),
    ("a raw-string look-alike hides nothing", f'#define X BAR"(\n#include {SECRET}\n)"\n', 2,
     "absolute header paths"),
    ("a digit separator is no quote", f'int x = 1\'0; const char* s = "\'/*";\n'
     f'#include {SECRET}\n// */\n', 2, "absolute header paths"),
    ("a comment after a quote-ended name", f'#include "x\\" "/*"\n#include {SECRET}\n// */\n',
     1, "computed includes"),
    ("__has_include", f'#if __has_include({SECRET})\n#endif\n', 1, "absolute header paths"),
    ("__has_include_next", '#if __has_include_next(<../../etc/shadow>)\n#endif\n', 1,
     "climbs out"),
    ("__has_embed", f'#if __has_embed({SECRET})\n#endif\n', 1, "absolute header paths"),
    ("__has_include spliced", f'#if __has_in\\\nclude ( {SECRET} )\n#endif\n', 1,
     "absolute header paths"),
    ("__has_include through a macro", '#define PROBE(f) __has_include(f)\n'
     f'#if PROBE({SECRET})\n#endif\n', 1, "computed names"),
    ("#pragma GCC dependency", f'#pragma GCC dependency {SECRET} "changed"\n', 1,
     "absolute header paths"),
    ("_Pragma GCC dependency", '_Pragma("GCC dependency \\"/etc/hostname\\"")\n', 1,
     "look for a file"),
]


@pytest.mark.parametrize(("before", "line", "reason"), [f[1:] for f in HIDDEN_FORMS],
                         ids=[f[0] for f in HIDDEN_FORMS])
def test_every_way_of_writing_a_directive_is_seen(tmp_path: Path, before: str, line: int,
                                                   reason: str) -> None:
    result = compile_source(before + KERNEL, filename="k.cu", folder=tmp_path, use_cache=False)
    assert (result.ok, result.stage) == (False, "includes"), result.message
    assert reason in result.message
    [mark] = result.diagnostics
    assert (mark.file, mark.line) == ("k.cu", line)


def test_a_comment_marker_inside_a_header_name_is_no_comment(tmp_path: Path) -> None:
    """`<x/*y>` names a file (which can exist); the next line is a directive for the compiler."""
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "*y").write_text("// a header with an odd name\n")
    text = f"#include <x/*y>\n#include {SECRET}\n// */\n" + KERNEL
    result = compile_source(text, filename="k.cu", folder=tmp_path, use_cache=False)
    assert result.stage == "includes"
    assert [(d.file, d.line) for d in result.diagnostics] == [("k.cu", 2)]


def test_a_byte_order_mark_does_not_hide_a_header_directive(tmp_path: Path) -> None:
    (tmp_path / "a.h").write_bytes(b"\xef\xbb\xbf#include \"/etc/hostname\"\n")
    result = compile_source('#include "a.h"\n' + KERNEL, filename="k.cu", folder=tmp_path,
                            use_cache=False)
    assert result.stage == "includes"
    assert [(d.file, d.line) for d in result.diagnostics] == [("a.h", 1)]


def test_line_numbers_stay_the_users_after_splices_and_comments() -> None:
    text = ("/* one\n two\n three */ int a; \\\n int b;\n"
            "#inc\\\nlude \"a.h\"\n"
            "#include /* x\n y */ <cuda_fp16.h>\n"
            "#include \"b.h\"\n")
    assert [(u.line, u.operand) for u in uses(text)] == [
        (5, '"a.h"'), (7, "<cuda_fp16.h>"), (9, '"b.h"')]


def test_ordinary_code_still_compiles(tmp_path: Path) -> None:
    """What the scanner must not take for a directive or a probe."""
    (tmp_path / "local.h").write_text("#define LOCAL 1\n")
    text = ('#include <cuda_fp16.h> // a comment with #include "/etc/hostname" in it\n'
            '#if defined(__has_include) && __has_include(<cuda_fp16.h>) && '
            '__has_include("local.h")\n#include "local.h"\n#endif\n'
            "// a trigraph-looking comment ??/\n"
            '__device__ const char text[] = "/* not a comment ??= */";\n'
            "__device__ const unsigned long long big = 1'000'000ull;\n"
            'extern "C" __global__ void k(float* a) { a[0] = LOCAL + big + text[0]; }\n')
    result = compile_source(text, filename="k.cu", folder=tmp_path, use_cache=False)
    assert result.ok, result.message


def test_a_large_hostile_source_is_scanned_in_linear_time() -> None:
    """Unclosed raw strings and digit separators by the million cost seconds, not hours."""
    import time

    for text in ('R"(' * 300_000, "1'" * 400_000, "a ??/\r\n" * 100_000):
        started = time.perf_counter()
        uses("#define X\n" + text)
        assert time.perf_counter() - started < 5


def test_refusals_reach_the_cli_compile(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(f'#\vinclude {SECRET}\n' + KERNEL)
    result = compile_file(path, use_cache=False)
    assert result.stage == "includes" and "/etc/hostname" in result.message
