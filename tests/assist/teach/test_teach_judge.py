"""`teach judge`: an adapter is kept only when held-out evals before and after it show a pass@1
lift whose interval lies above zero. The evals are EvalResult.as_dict() of outcomes made here
(the figures are the point, not a model); the adapter is the shipped default, copied into a
hard-link copy of the default model, so keeping re-seals a real adapter and discarding removes
one."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from app.assist.evaluation.grade import EvalResult, EvalSettings, arms_for
from app.assist.evaluation.metrics import TaskOutcome
from app.assist.model.adapters import (
    ADAPTERS_DIR,
    CARD_NAME,
    adapter_folder,
    check_adapter,
    list_adapters,
    read_card,
)
from app.assist.model.manifest import read_manifest
from app.assist.tasks.suite import load_suite
from app.assist.teach.judge import JudgeError, apply, check_runs, discard_folder, judge, read_result
from app.base import codec
from app.base.paths import RESOURCES
from app.cli.entry import main

NAME = "default"
CHAINS = 4


@pytest.fixture
def model(tmp_path: Path, default_folder: Path) -> Path:
    """The default model (hard links) with a real copy of the shipped default adapter."""
    folder = tmp_path / default_folder.name
    shutil.copytree(default_folder, folder, copy_function=os.link,
                    ignore=shutil.ignore_patterns(ADAPTERS_DIR))
    shutil.copytree(RESOURCES / ADAPTERS_DIR / default_folder.name / NAME,
                    adapter_folder(folder, NAME))
    return folder


def _result(passed: list[int], adapter: str = "", model: str = "smollm2-135m-instruct",
            seed: int = 0, stopped: bool = False, quantization: str = "nf4") -> dict[str, Any]:
    """An eval --json result over the held-out tasks: task i passed passed[i] of its chains."""
    tasks = load_suite().split("heldout")[:len(passed)]
    settings = EvalSettings(tasks, Path("run"), arms_for("off", "off"), k=CHAINS, rounds=1,
                            seed=seed)
    outcomes = [TaskOutcome(t.name, t.level, "float32", CHAINS, p, attempts=CHAINS)
                for t, p in zip(tasks, passed, strict=True)]
    result = EvalResult("r1", "2026-01-01T00:00:00", codec.to_object(settings),
                        {settings.arms[0].name: outcomes}, stopped=stopped,
                        model={"name": model, "adapter": adapter,
                               "quantization": quantization})
    return result.as_dict()


def _write(path: Path, data: object) -> Path:
    """Write JSON to path; the path."""
    path.write_text(json.dumps(data), "utf-8")
    return path


def test_read_result_takes_one_arm_eval_output_only(tmp_path: Path) -> None:
    good = _result([0, 1, 2])
    assert read_result(_write(tmp_path / "good.json", good)) == good
    (tmp_path / "bad.json").write_text("{not json", "utf-8")
    with pytest.raises(JudgeError, match="cannot read the eval result"):
        read_result(tmp_path / "bad.json")
    two = dict(good, outcomes={"a": [], "b": []})
    with pytest.raises(JudgeError, match="not the result of a one-arm eval"):
        read_result(_write(tmp_path / "two.json", two))
    with pytest.raises(JudgeError, match="not the result of a one-arm eval"):
        read_result(_write(tmp_path / "other.json", {"outcomes": {"a": []}}))


def test_check_runs_wants_the_base_model_before_and_the_adapter_after() -> None:
    check_runs(_result([0]), _result([1], adapter=NAME), NAME)
    with pytest.raises(JudgeError, match="'before' eval ran with adapter"):
        check_runs(_result([0], adapter="old"), _result([1], adapter=NAME), NAME)
    with pytest.raises(JudgeError, match="not 'default'"):
        check_runs(_result([0]), _result([1], adapter="other"), NAME)
    with pytest.raises(JudgeError, match="different models"):
        check_runs(_result([0]), _result([1], adapter=NAME, model="bigger"), NAME)
    with pytest.raises(JudgeError, match="loaded the model differently"):
        check_runs(_result([0], quantization="none"), _result([1], adapter=NAME), NAME)


def test_judge_keeps_only_a_lift_whose_interval_is_above_zero() -> None:
    base = [0, 1, 0, 2, 0, 0, 1, 0, 0, 0, 0, 0]
    better = [3, 4, 2, 4, 3, 1, 4, 2, 3, 2, 1, 2]
    kept = judge(_result(base), _result(better, adapter=NAME))
    assert kept.kept and kept.lift.tasks == len(base)
    assert kept.lift.low is not None and kept.lift.low > 0
    assert kept.describe().startswith("adapter kept: pass@1 0.083 before, 0.646 after")
    mixed = [1, 0, 0, 3, 0, 1, 0, 0, 1, 0, 0, 0]  # up on some tasks, down on others
    dropped = judge(_result(base), _result(mixed, adapter=NAME))
    assert not dropped.kept and dropped.lift.low is not None and dropped.lift.low <= 0
    assert dropped.describe().startswith("adapter discarded")


def test_judge_refuses_runs_that_cannot_be_compared() -> None:
    with pytest.raises(JudgeError, match="differ in seed"):
        judge(_result([0, 1]), _result([2, 2], adapter=NAME, seed=1))
    with pytest.raises(JudgeError, match="differ in tasks"):
        judge(_result([0, 1]), _result([2, 2, 2], adapter=NAME))
    with pytest.raises(JudgeError, match="stopped"):
        judge(_result([0, 1]), _result([2, 2], adapter=NAME, stopped=True))


def test_a_kept_adapter_gains_both_evals_on_its_card_and_still_passes_its_checks(
        model: Path, tmp_path: Path) -> None:
    source = read_manifest(adapter_folder(model, NAME))["source"]
    verdict = judge(_result([0] * 6), _result([4] * 6, adapter=NAME))
    written = apply(model, NAME, verdict, tmp_path / "discarded")
    assert written == check_adapter(model, NAME)
    card = read_card(written)
    assert card["eval"]["kept"] is True and card["eval"]["lift_pass_at_1"]["mean"] == 1.0
    assert card["eval"]["before"]["summary"]["pass_at_1"] == 0.0
    assert card["eval"]["after"]["model"]["adapter"] == NAME
    assert card["steps"] > 0, "the training card is kept, the eval added to it"
    assert read_manifest(written)["source"] == source
    assert not (tmp_path / "discarded").exists()


def test_a_discarded_adapter_is_removed_and_its_figures_kept(
        model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNEL_STUDIO_DATA", str(tmp_path / "data"))
    card = json.loads((adapter_folder(model, NAME) / CARD_NAME).read_text("utf-8"))
    before = _write(tmp_path / "before.json", _result([1, 2, 0, 1]))
    after = _write(tmp_path / "after.json", _result([1, 2, 0, 1], adapter=NAME))
    code = main(["teach", "judge", "--before", str(before), "--after", str(after),
                 "--adapter", NAME, "--model", str(model)])
    assert code == 1 and "adapter discarded" in capsys.readouterr().out
    assert not adapter_folder(model, NAME).exists() and list_adapters(model) == []
    [figures] = discard_folder(tmp_path / "data").glob(f"{NAME}-*.json")
    kept = json.loads(figures.read_text("utf-8"))
    assert kept["adapter"] == NAME and kept["kept"] is False and kept["card"] == card
    assert kept["lift_pass_at_1"]["mean"] == 0.0 and kept["after"]["model"]["adapter"] == NAME
