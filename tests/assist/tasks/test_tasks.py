"""The task suite: at least 60 tasks over three levels and four dtypes, split dev/held-out in
the index; a sample of specs checked by the real spec-check and their reference kernels (test
fixtures) verified by the real verifier on the CPU backend (benchmarks/verify_tasks.py does all);
and held-out tasks kept out of everything that teaches: skills, prompt templates, examples."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.assist.prompting.examples import (
    choose_examples,
    record_verified,
    render_examples,
    template_examples,
    verified_examples,
)
from app.assist.prompting.prompts import PROMPTS_DIR, PromptContext, build_prompt
from app.assist.prompting.skills import skill_folders
from app.assist.tasks.suite import TASKS_DIR, Task, TaskError, load_suite, load_task
from app.engine.verify.runs import VerifyOptions
from app.engine.verify.speccheck import Strength, check_spec_file
from app.engine.verify.verifier import verify_file

FIXTURES = Path(__file__).parents[1] / "task_kernels"
# One task per level and dtype family, of every launch shape (1-D, rows, 2-D, 3-D).
SAMPLE = ("add_bf16", "row_mean_f16", "cumsum_i32", "softmax_f32", "matmul_f16",
          "conv2d_channels_f32")


class CharCounter:
    """Counts tokens as a quarter of the characters: enough to fit prompts (the budget is not
    what these tests check)."""

    def count_tokens(self, text: str) -> int:
        """About four characters a token."""
        return len(text) // 4 + 1

    def count_messages(self, messages: list[dict[str, str]]) -> int:
        """The messages' text."""
        return sum(self.count_tokens(m["content"]) for m in messages)

    def context_window(self) -> int:
        """SmolLM2's window."""
        return 8192


@pytest.fixture(scope="module")
def suite() -> list[Task]:
    """Every task of the shipped suite."""
    return list(load_suite().tasks)


def test_the_suite_has_60_tasks_over_three_levels_and_four_dtypes(suite: list[Task]) -> None:
    assert len(suite) >= 60
    assert {t.level for t in suite} == {1, 2, 3}
    assert {"float32", "float16", "bfloat16", "int32"} <= {d for t in suite for d in t.dtypes}
    splits = {t.split for t in suite}
    assert splits == {"dev", "heldout"}
    heldout = [t for t in suite if t.heldout]
    assert {t.level for t in heldout} == {1, 2, 3}, "held-out tasks measure every level"
    assert all(t.description and t.spec_path.is_file() for t in suite)


def test_every_task_has_a_reference_kernel_with_its_entry(suite: list[Task]) -> None:
    for task in suite:
        source = (FIXTURES / f"{task.name}.cu").read_text()
        assert f"void {task.spec().entry}(" in source, task.name
        assert not task.spec().source_path.exists(), "task kernels are fixtures, not resources"


@pytest.mark.parametrize("name", SAMPLE)
def test_a_sample_of_specs_is_strong_and_its_reference_kernel_passes_on_the_cpu(
        name: str, tmp_path: Path) -> None:
    spec_path = TASKS_DIR / name / f"{name}.toml"
    checked = check_spec_file(spec_path)
    assert checked.status == Strength.STRONG, checked.message
    assert not checked.warnings, [w.message for w in checked.warnings]
    folder = tmp_path / name
    shutil.copytree(spec_path.parent, folder)
    shutil.copyfile(FIXTURES / f"{name}.cu", folder / f"{name}.cu")
    verdict = verify_file(folder / f"{name}.toml", VerifyOptions(backend="cpu"))
    assert verdict.passed, verdict.describe()


def test_a_broken_task_is_refused_naming_the_field(tmp_path: Path) -> None:
    source = TASKS_DIR / "add_f32" / "add_f32.toml"
    broken = tmp_path / "add_f32.toml"
    broken.write_text(source.read_text().replace("level = 1", "level = 7"))
    with pytest.raises(TaskError, match=r"\[task\]\.level must be 1"):
        load_task(broken)
    broken.write_text(source.read_text().replace('kind = "out"', 'kind = "output"'))
    (tmp_path / "add_f32_ref.py").write_text("def reference(a, b, n):\n    return {}\n")
    with pytest.raises(TaskError, match="add_f32"):
        load_task(broken)


def test_held_out_tasks_appear_in_no_skill_and_no_prompt_template(suite: list[Task]) -> None:
    heldout = load_suite().heldout()
    files = [p for folder in skill_folders()[:1] for p in folder.rglob("*") if p.is_file()]
    files += sorted(PROMPTS_DIR.glob("*.md"))
    assert files
    for path in files:
        assert heldout.leaks(path.read_text(encoding="utf-8")) == [], path


def _heldout_as_verified(suite: list[Task], folder: Path) -> None:
    """Held-out tasks' reference kernels written as if they had passed for the user."""
    for task in (t for t in suite if t.heldout):
        copy = folder / task.name
        shutil.copytree(task.spec_path.parent, copy)
        shutil.copyfile(FIXTURES / f"{task.name}.cu", copy / f"{task.name}.cu")
        record = {"spec": f"{task.name}.toml", "description": task.description,
                  "source_sha256": "x"}
        (copy / "verified.json").write_text(json.dumps(record))


def test_held_out_kernels_never_become_examples_nor_enter_dev_prompts(
        suite: list[Task], tmp_path: Path) -> None:
    heldout = load_suite().heldout()
    for task in (t for t in suite if t.heldout):
        copy = tmp_path / "cand" / task.name
        shutil.copytree(task.spec_path.parent, copy)
        shutil.copyfile(FIXTURES / f"{task.name}.cu", copy / f"{task.name}.cu")
        assert record_verified(copy / f"{task.name}.toml", task.description, heldout,
                               tmp_path / "verified") is None, task.name
    assert verified_examples(tmp_path / "verified") == []
    # Even planted in the library (as a user could copy them there), they are never chosen.
    _heldout_as_verified(suite, tmp_path / "planted")
    planted = template_examples() + template_examples(tmp_path / "planted")
    assert {t.name for t in suite if t.heldout} <= {e.name for e in planted}
    for task in (t for t in suite if not t.heldout):
        spec = task.spec()
        chosen = choose_examples(planted, spec, task.description, heldout, CharCounter())
        context = PromptContext(description=task.description,
                                spec=task.spec_path.read_text(encoding="utf-8"),
                                reference=spec.reference_path.read_text(encoding="utf-8"),
                                examples=render_examples(chosen))
        prompt = build_prompt("propose", context, CharCounter(), 512)
        text = "\n".join(m["content"] for m in prompt.messages)
        assert heldout.leaks(text) == [], task.name


def test_a_dev_kernel_that_passed_is_kept_as_an_example_once(tmp_path: Path) -> None:
    heldout = load_suite().heldout()
    task = load_task(TASKS_DIR / "add_f32" / "add_f32.toml")
    copy = tmp_path / "attempt"
    shutil.copytree(task.spec_path.parent, copy)
    shutil.copyfile(FIXTURES / "add_f32.cu", copy / "add_f32.cu")
    kept = record_verified(copy / "add_f32.toml", task.description, heldout, tmp_path / "lib")
    assert kept is not None and (kept / "verified.json").is_file()
    assert record_verified(copy / "add_f32.toml", task.description, heldout,
                           tmp_path / "lib") == kept
    (kept / "add_f32.cu").write_text("// edited\n" + (kept / "add_f32.cu").read_text())
    assert verified_examples(tmp_path / "lib") == [], "an edited kernel is no longer verified"
