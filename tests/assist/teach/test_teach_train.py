"""`teach train` with the real default model on the CPU: verified data, a few LoRA steps, a
cancel that keeps its checkpoint, a resume, and the sealed adapter loaded to answer a prompt and
to run an eval."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from app.assist.evaluation import store
from app.assist.model.adapters import CARD_NAME, check_adapter
from app.assist.model.manifest import write_manifest
from app.assist.model.session import ModelSession
from app.assist.tasks.suite import load_suite
from app.assist.teach.data import DATA_NAME, build
from app.assist.teach.generate import candidates
from app.assist.teach.guard import Guard
from app.assist.teach.recipe import train_adapter
from app.assist.teach.train import CHECKPOINT, STATE_NAME, Settings, TrainError, partial_folder
from app.base.paths import ROOT
from app.cli.entry import main


def _stop_at(step: str, lines: list[str]) -> Callable[[str], None]:
    """A progress callback that records lines and presses Ctrl+C once `step` is reported."""

    def say(line: str) -> None:
        """Record; cancel at the step."""
        lines.append(line)
        if line.startswith(f"step {step}"):
            raise KeyboardInterrupt

    return say


def test_data_to_adapter_to_an_answer_with_a_cancel_and_a_resume(
        tmp_path: Path, default_folder: Path) -> None:
    model = tmp_path / "model"
    shutil.copytree(default_folder, model, copy_function=os.link)
    summary = build(tmp_path / "data", 2, candidates(11, ["elementwise"]), Guard.of(load_suite()),
                    lambda _line: None)
    assert summary.written == 2
    data = tmp_path / "data" / DATA_NAME
    settings = Settings(steps=3, seed=1, max_tokens=256, checkpoint_every=5, batch=2,
                        targets="all")
    lines: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        train_adapter(model, data, "kern", settings, _stop_at("2/3", lines))
    assert lines[0].startswith("memory: about") and "MiB" in lines[0]
    state = json.loads((partial_folder(model, "kern") / CHECKPOINT / STATE_NAME).read_text())
    assert state["step"] == 2
    with pytest.raises(TrainError, match="--resume"):
        train_adapter(model, data, "kern", settings, lines.append)
    folder = train_adapter(model, data, "kern", settings, lines.append, resume=True)
    assert lines[-1].startswith("step 3/3") and not partial_folder(model, "kern").exists()
    card = json.loads((folder / CARD_NAME).read_text())
    assert card["steps"] == 3 and card["data"]["examples"] == 2 and card["prompt"] == "compact-v1"
    assert "down_proj" in card["settings"]["target_modules"]
    assert len(card["base"]["manifest_sha256"]) == 64
    check_adapter(model, "kern")
    session = ModelSession(model, device="cpu", quantization="none", adapter="kern")
    answer = session.generate([{"role": "user", "content": "Write a CUDA relu kernel."}],
                              max_new_tokens=8)
    assert answer.text.strip()
    _eval_with_adapter(model, tmp_path)


def _eval_with_adapter(model: Path, tmp_path: Path) -> None:
    """One task of eval with the adapter, graded by the real verifier; the stored result names
    the adapter (so runs before and after it can be told apart)."""
    env = dict(os.environ, KERNEL_STUDIO_DATA=str(tmp_path / "store"))
    done = subprocess.run(
        [sys.executable, "-m", "app", "eval", "--limit", "1", "-k", "1", "--rounds", "1",
         "--max-new-tokens", "16", "--skills", "off", "--examples", "off", "--threads", "1",
         "--model", str(model), "--adapter", "kern", "--quantization", "none",
         "--out", str(tmp_path / "run"), "--json"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    (stored,), _ = store.load_results(tmp_path / "store" / "eval" / "results.jsonl")
    assert stored["model"]["adapter"] == "kern"
    assert stored["model"]["prompt_style"] == "compact-v1", "asked as it was taught"


def test_bad_training_data_ends_with_exit_2(
        tmp_path: Path, tiny_model: Callable[[str], Path],
        capsys: pytest.CaptureFixture[str]) -> None:
    model = tiny_model("tiny")
    write_manifest(model)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"description": "no spec or kernel"}\n', "utf-8")
    code = main(["teach", "train", "--data", str(bad), "--out", "x", "--model", str(model)])
    assert code == 2 and "holds no examples of teach data" in capsys.readouterr().err
    assert not (model / "adapters").exists() or not any((model / "adapters").iterdir())


FULL_DISK = """import resource, runpy, sys
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
sys.argv = ["app"] + sys.argv[1:]
runpy.run_module("app", run_name="__main__")
"""


def test_a_full_disk_while_saving_ends_with_a_message_and_leaves_no_adapter(
        tmp_path: Path, tiny_model: Callable[[str], Path]) -> None:
    """Files may not grow past 4 KiB (Python then gets EFBIG, as from a full disk): the adapter
    cannot be written, the run says so with exit 2, and nothing is left under its name."""
    model = tiny_model("tiny")
    write_manifest(model)
    data = tmp_path / "train.jsonl"
    spec = (ROOT / "resources/kernels/vector_add/vector_add.toml").read_text("utf-8")
    kernel = (ROOT / "resources/kernels/vector_add/vector_add.cu").read_text("utf-8")
    data.write_text(json.dumps({"description": "c = a + b", "spec": spec, "kernel": kernel})
                    + "\n", "utf-8")
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, "teach", "train", "--data", str(data), "--out", "x",
         "--model", str(model), "--steps", "1", "--max-tokens", "128", "--device", "cpu"],
        capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "could not write the adapter 'x'" in done.stderr and "free some space" in done.stderr
    assert "Traceback" not in done.stderr
    left = [p.name for p in (model / "adapters").iterdir()]
    assert "x" not in left and ".x.staging" not in left
