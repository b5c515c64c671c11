"""The include scanner and the preprocessor text helpers (app.compile.includes, pptext) on
hostile sources: every input finishes under the bound, returns or raises OptionError, and the
work grows linearly with the input."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.compile import includes, pptext
from app.compile.model import OptionError
from tests.fuzz.bounds import bounded, grows_linearly

# Pieces that matter to the preprocessor's reading, so that random joins of them reach the
# scanner's corners (directives, gaps, comments, literals, header names, splices, trigraphs).
ATOMS = ["#", "%:", "??=", " ", "\t", "\f", "\n", "\r", "\r\n", "\\\n", "\\ \n", "/*", "*/",
         "//", '"', "'", "<", ">", "(", ")", "include", "include_next", "import", "embed",
         "pragma GCC dependency", "__has_include", "__has_include_next", "__has_embed",
         "_Pragma", "defined", 'R"x(', ')x"', "a.h", "../", "/etc/passwd", "x", "1", "'0'", "u8"]
SOURCES = st.one_of(st.lists(st.sampled_from(ATOMS), max_size=80).map("".join),
                    st.text(max_size=300))


def _scan(folder: Path) -> Callable[[str], object]:
    """The full scan of one source, as `compile` runs it, in `folder`."""
    return lambda text: includes.scan(text, "k.cu", folder)


@given(SOURCES)
def test_any_source_is_scanned_in_bounded_time(text: str) -> None:
    """Every reading of any source, and the directives found in it, come back quickly."""
    bounded(includes.uses, text, ())
    for reading in pptext.readings(text):
        bounded(functools.partial(pptext.logical_text, reading=reading), text, ())


@given(SOURCES)
def test_any_source_scans_or_is_refused_with_a_clear_error(text: str) -> None:
    """The whole scan (names checked, headers looked up) returns or raises OptionError."""
    bounded(_scan(Path("/nonexistent-kernel-folder")), text, (OptionError,))


def test_a_hash_and_forty_spaces_finish_at_once() -> None:
    """The 98-byte source of the issue: the gap pattern took 2**n steps for n spaces."""
    for text in ("#" + " " * 40 + "\n" + " " * 57, "#" + " " * 40 + "x", "%:" + "\t" * 60,
                 "__has_include" + " " * 60 + "x", "# /**/ /**/ /**/" * 30 + "x"):
        bounded(includes.uses, text, (), seconds=0.5)


# (a source of size k, k): sources whose old readings cost 2**k, or k**2.
FAMILIES = {
    "gap-spaces": (lambda k: "#" + " " * k + "x", 4000),
    "gap-comments": (lambda k: "#" + " /**/" * k + "x", 2000),
    "operand-spaces": (lambda k: "#include x" + " " * k + "y\n", 4000),
    "probe-angle": (lambda k: "__has_include(<" * k, 2000),
    "probe-quote": (lambda k: '__has_include("' * k, 2000),
    "many-directives": (lambda k: '#include "a.h"\n' * k, 8000),
    "unclosed-names": (lambda k: ("#include <" + "x" * 20 + "\n") * k, 1000),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_work_grows_linearly(family: str) -> None:
    """A source 4 times larger costs about 4 times more, not 16 (or 2**n)."""
    make, n = FAMILIES[family]
    grows_linearly(includes.uses, make, n, ())


def test_a_deep_chain_of_local_headers_is_scanned(tmp_path: Path) -> None:
    """MAX_HEADERS headers each including the next: no recursion limit is reached."""
    count = includes.MAX_HEADERS
    for index in range(count):
        (tmp_path / f"h{index}.h").write_text(f'#include "h{index + 1}.h"\n')
    (tmp_path / f"h{count}.h").write_text("// the last\n")
    with pytest.raises(OptionError, match=f"more than {count} local headers"):
        includes.scan('#include "h0.h"\n', "k.cu", tmp_path)
    (tmp_path / f"h{count - 1}.h").write_text("// the end\n")
    assert len(includes.scan('#include "h0.h"\n', "k.cu", tmp_path)) == count
