"""Answers are split into code and explanation; proposals are shown as unified diffs."""

from __future__ import annotations

from app.assist import Answer, parse_answer, unified_diff

KERNEL = 'extern "C" __global__ void k(float* y) { y[threadIdx.x] = 1.0f; }'


def test_a_fenced_kernel_is_split_from_the_explanation() -> None:
    parsed = parse_answer(f"Here it is:\n```cuda\n{KERNEL}\n```\nEach thread writes one.")
    assert parsed.code == KERNEL + "\n"
    assert parsed.explanation == "Here it is:\nEach thread writes one."
    assert parsed.language == "cuda" and parsed.complete


def test_the_kernel_block_wins_over_other_blocks() -> None:
    text = f"Build with:\n```sh\nmake\n```\n```cpp\n{KERNEL}\n```\n```cpp\nint x;\n```"
    parsed = parse_answer(text)
    assert parsed.code == KERNEL + "\n"
    assert "make" in parsed.explanation and "int x;" in parsed.explanation


def test_an_unclosed_block_is_code_marked_incomplete() -> None:
    parsed = parse_answer(f"Sure:\n```cuda\n{KERNEL}\n  // more")
    assert parsed.code is not None and KERNEL in parsed.code
    assert not parsed.complete


def test_an_unfenced_kernel_is_found_from_its_first_line() -> None:
    parsed = parse_answer(f"Try this.\n#include <cuda_fp16.h>\n{KERNEL}\n")
    assert parsed.code is not None and parsed.code.startswith("#include <cuda_fp16.h>")
    assert parsed.explanation == "Try this."


def test_prose_has_no_code() -> None:
    parsed = parse_answer("A warp is 32 threads that execute together.")
    assert parsed.code is None
    assert parsed.explanation.startswith("A warp")


def test_answer_reports_speed_and_json() -> None:
    answer = Answer(f"```cuda\n{KERNEL}\n```", "eos", prompt_tokens=20, new_tokens=11,
                    seconds=1.5, first_token_s=0.5)
    assert answer.tokens_per_s == 10.0
    data = answer.as_dict()
    assert data["code"] == KERNEL + "\n" and data["finish_reason"] == "eos"
    assert not answer.stopped


def test_unified_diff_shows_the_change_and_nothing_for_equal_texts() -> None:
    old = "a\nb\nc\n"
    diff = unified_diff(old, "a\nB\nc\n")
    assert diff.startswith("--- current\n+++ proposed\n")
    assert "-b\n+B\n" in diff
    assert unified_diff(old, old) == ""


def test_unified_diff_marks_a_missing_final_newline() -> None:
    diff = unified_diff("x\n", "y")
    assert "+y\n\\ No newline at end of file\n" in diff


def test_a_proposal_starts_with_the_signature_the_spec_implies() -> None:
    from pathlib import Path

    from app.assist.prompting.candidates import answer_prefix
    from app.spec.model import load_spec

    kernels = Path(__file__).resolve().parents[3] / "resources" / "kernels"
    prefix = answer_prefix(load_spec(kernels / "vector_add" / "vector_add.toml"))
    assert prefix == ("```cuda\nextern \"C\" __global__ void vector_add("
                      "const float* __restrict__ a, const float* __restrict__ b, "
                      "float* __restrict__ c, int n)\n{\n")
    for spec_path in kernels.glob("*/*.toml"):
        spec = load_spec(spec_path)
        text = answer_prefix(spec)
        assert f"void {spec.entry}(" in text
        half = any(a.dtype == "float16" for a in spec.args)
        assert ("#include <cuda_fp16.h>" in text) == half
