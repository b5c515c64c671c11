"""The CPU backend's source handling (rewrite, mask, the scans) on hostile sources: it runs in
the parent, outside every time limit, so each input must finish under the bound and the work
must grow linearly."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.engine.worker.backends.cpu import source
from app.engine.worker.backends.cpu.source import SourceError
from tests.fuzz.bounds import bounded, grows_linearly

ATOMS = ["extern", " ", "\n", "__shared__", "float", "s", "[", "]", ";", "{", "}", "namespace",
         '"C"', "__noinline__", "__align__(16)", "alignas(8)", "__attribute__((aligned(8)))",
         "(", ")", "*", "//", "/*", "*/", "'", '"', "\\", "__global__", "void", "k",
         "__launch_bounds__(256)", "#if 0", "#endif", "asm", "tex2D<", "cuda::", "<<<"]
SOURCES = st.one_of(st.lists(st.sampled_from(ATOMS), max_size=80).map("".join),
                    st.text(max_size=300))


def _all(text: str) -> None:
    """Everything the backend does with a source before compiling it."""
    source.rewrite(text)
    source.mask(text)
    source.kernel_count(text)
    source.launch_bounds(text, "k")
    source.scan([("k.cu", n + 1, line) for n, line in enumerate(text.splitlines())])


@given(SOURCES)
def test_any_source_is_handled_or_refused_in_bounded_time(text: str) -> None:
    """Any source is rewritten and scanned, or refused with a SourceError."""
    bounded(_all, text, (SourceError,))


def test_a_disabled_block_of_extern_tokens_is_rewritten_at_once() -> None:
    """The issue's probe: 150 KiB of `extern` in `#if 0` took 60 s (each `extern` read the rest
    of the text looking for its `;`)."""
    text = "#if 0\n" + "extern " * (150 * 1024 // 7) + "\n#endif\n"
    assert bounded(source.rewrite, text, (), seconds=2.0).error == ""


FAMILIES = {
    "extern-tokens": (lambda k: "extern " * k, 4000),
    "declarations-in-braces": (lambda k: "{ " * k + "extern __shared__ float s[];" * 200, 2000),
    "declarations": (lambda k: "void f() { extern __shared__ float s[]; }\n" * k, 500),
    "noinline": (lambda k: "__noinline__ " * k, 4000),
    "launch-bounds": (lambda k: "__launch_bounds__(1 " * k, 2000),
    "long-declarator": (lambda k: "extern __shared__ float " + "x " * k + "y[];", 4000),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_work_grows_linearly(family: str) -> None:
    """A source 4 times larger costs about 4 times more."""
    make, n = FAMILIES[family]
    grows_linearly(_all, make, n, (SourceError,))


def test_a_refused_declaration_is_named_briefly() -> None:
    """A malformed declaration of 100 KB is named in a message of sensible length."""
    with pytest.raises(SourceError) as caught:
        source.rewrite("extern __shared__ float " + "x " * 50_000 + ";")
    assert len(str(caught.value)) < 300 and "extern __shared__ T name[]" in str(caught.value)


def test_the_rewrite_keeps_lines_and_tells_scopes_apart() -> None:
    """Line breaks inside a declaration stay; extern "C" blocks and namespaces are namespace
    scope, function bodies are not."""
    text = ('extern "C" { extern __shared__ float a[]; }\nnamespace n { extern __shared__\n'
            "float b[]; }\n__global__ void k() { extern __shared__ float c[]; }\n")
    out = source.rewrite(text)
    assert out.count("\n") == text.count("\n")
    assert "ks_dynamic_shared<float> a{}" in out and "ks_dynamic_shared<float> b{}" in out
    assert "float* const c = reinterpret_cast<float*>" in out
