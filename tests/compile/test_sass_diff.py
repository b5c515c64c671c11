"""Issue 25, point 12: the SASS diff on real listings (NVRTC, then nvdisasm or cuobjdump through
app.compile): counts that add up, nothing changed against itself, one changed arithmetic op
seen as one changed instruction, and register numbers, offsets and constant-bank addresses
normalised away."""

from __future__ import annotations

import dataclasses
import functools

from app.base.paths import RESOURCES
from app.compile import compile_source, sass_listing
from app.compile.assembly import SassRow, opcode, sass_rows
from app.compile.sass_diff import Mark, diff_sass, instruction_rows, normalise, pick_kernel

TEMPLATE = (RESOURCES / "kernels" / "vector_add" / "vector_add.cu").read_text(encoding="utf-8")
ADD = "c[i] = a[i] + b[i];"


@functools.cache
def listing(source: str, arch: str) -> tuple[SassRow, ...]:
    """The SASS rows of vector_add built from `source` for `arch` (as the job process sends
    them to the pane)."""
    result = compile_source(source, filename="vector_add.cu", folder=None, arch=arch)
    assert result.ok, result.message
    return tuple(sass_rows(dataclasses.asdict(line) for line in sass_listing(result, "vector_add")))


def test_counts_add_up_between_two_archs() -> None:
    sm80, sm90 = listing(TEMPLATE, "sm_80"), listing(TEMPLATE, "sm_90")
    diff = diff_sass(sm80, sm90, "sm_80", "sm_90")
    left, right = instruction_rows(sm80), instruction_rows(sm90)
    assert diff.unchanged + diff.removed == len(left)
    assert diff.unchanged + diff.added == len(right)
    assert diff.added + diff.removed > 0  # sm_90 loads parameters with LDC, sm_80 does not
    assert diff.unchanged > 0  # both add with FADD and end with EXIT
    assert diff.summary() == f"{diff.added} instructions added, {diff.removed} removed, " \
                             f"{diff.unchanged} unchanged"
    # Every printed line is one of the instructions, marked by the side it comes from.
    for line in diff.lines:
        if line.mark == Mark.REMOVED:
            assert line.right == -1 and sm80[line.left].text in line.text
        elif line.mark == Mark.ADDED:
            assert line.left == -1 and sm90[line.right].text in line.text
        else:
            assert normalise(sm80[line.left].text) == normalise(sm90[line.right].text)


def test_a_kernel_diffed_with_itself_has_no_changes() -> None:
    for arch in ("sm_80", "sm_90"):
        rows = listing(TEMPLATE, arch)
        diff = diff_sass(rows, rows)
        assert (diff.added, diff.removed) == (0, 0)
        assert diff.unchanged == len(instruction_rows(rows)) > 5
        assert all(line.printed.startswith("  ") for line in diff.lines)


def test_one_changed_arithmetic_op_is_one_changed_instruction() -> None:
    assert ADD in TEMPLATE
    product = TEMPLATE.replace(ADD, "c[i] = a[i] * b[i];")
    before, after = listing(TEMPLATE, "sm_90"), listing(product, "sm_90")
    diff = diff_sass(before, after)
    removed = [opcode(line.text.split("*/", 1)[1]) for line in diff.lines
               if line.mark == Mark.REMOVED]
    added = [opcode(line.text.split("*/", 1)[1]) for line in diff.lines
             if line.mark == Mark.ADDED]
    assert (removed, added) == (["FADD"], ["FMUL"])
    assert diff.unchanged == len(instruction_rows(before)) - 1
    assert diff.summary().startswith("1 instruction added, 1 removed, ")


def test_labels_and_end_padding_are_not_instructions() -> None:
    rows = listing(TEMPLATE, "sm_90")
    kept = [rows[i].text for i in instruction_rows(rows)]
    assert any(row.text == "NOP;" for row in rows) and "NOP;" not in kept
    assert not any(text.endswith(":") for text in kept)
    assert opcode(kept[-1]) == "EXIT"


def test_normalising_takes_out_what_equal_code_does_not_share() -> None:
    assert normalise("/*0090*/  IMAD.WIDE R2, R6.reuse, R7.reuse, c[0x0][0x160] ;") == \
        normalise("IMAD.WIDE R12, R9, R3, c[0x0][0x218] ;") == "IMAD.WIDE R#, R#, R#, c[#][#] ;"
    assert normalise("@P0 BRA `(.L_x_3) ;") == normalise("@P1 BRA `(.L_x_7) ;")
    assert normalise("@!P0 BRA 0x1f0 ;") == normalise("@!P2 BRA 0x230 ;")
    assert normalise("IMAD.WIDE R2, R9, 0x4, R2 ;") != normalise("IMAD.WIDE R2, R9, 0x8, R2 ;")
    assert normalise("ISETP.GE.AND P0, PT, R9, UR4, PT ;") != \
        normalise("ISETP.GT.AND P0, PT, R9, UR4, PT ;")


def test_the_other_builds_kernel_is_the_same_entry_or_its_first() -> None:
    assert pick_kernel(["fill", "vector_add"], "vector_add") == "vector_add"
    assert pick_kernel(["relu"], "vector_add") == "relu"
    assert pick_kernel([], "vector_add") == ""
