"""`kernel-studio ask`, `propose` and `model` as real processes with the real default model,
including `ask` inside a network namespace that has no interface but loopback."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.assist.prompting.candidates import verify_candidate, write_candidate
from app.engine.verify.results import PLAIN_WORDS
from app.engine.verify.runs import Engine
from app.engine.verify.verifier import verify_file
from app.spec.model import load_spec

ROOT = Path(__file__).resolve().parents[2]
VECTOR_ADD = ROOT / "resources" / "kernels" / "vector_add"
# One thread: the test machine's cores are shared (see test_assist_model.py).
ASK = [sys.executable, "-m", "app", "ask", "--threads", "1", "--max-new-tokens", "8"]


def run(command: list[str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run a command from the checkout's root, capturing text."""
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          check=False)


def unshare_refusal() -> str | None:
    """None when `unshare -n` works here, else why it does not."""
    if not shutil.which("unshare"):
        return "unshare is not installed"
    done = run(["unshare", "-n", "true"], timeout=30)
    return None if done.returncode == 0 else f"unshare -n is not permitted: {done.stderr.strip()}"


def test_ask_streams_an_answer(default_folder: Path) -> None:
    done = run([*ASK, "What is a CUDA warp?"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()


def test_ask_works_in_a_network_namespace_without_interfaces(default_folder: Path) -> None:
    refusal = unshare_refusal()
    if refusal:
        pytest.skip(refusal)
    script = 'cat /proc/self/net/dev && exec "$@"'
    done = run(["unshare", "-n", "sh", "-c", script, "sh", *ASK, "--json", "What is a warp?"])
    assert done.returncode == 0, done.stderr
    table, _, report = done.stdout.partition("{")
    interfaces = {line.split(":")[0].strip() for line in table.splitlines() if ":" in line}
    assert interfaces == {"lo"}, table
    result = json.loads("{" + report)
    assert result["answer"]["new_tokens"] > 0
    assert result["answer"]["text"].strip()
    assert result["budget"]["prompt_tokens"] <= result["budget"]["limit"]


def test_ask_with_a_missing_model_exits_2_and_says_what_to_do(tmp_path: Path) -> None:
    done = run([*ASK, "--model", str(tmp_path / "nowhere"), "hello"], timeout=60)
    assert done.returncode == 2
    assert "no model at" in done.stderr


def test_ask_refuses_an_unknown_skill_listing_the_known_ones(default_folder: Path) -> None:
    done = run([*ASK, "--skill", "no-such", "hello"], timeout=120)
    assert done.returncode == 2
    assert "unknown skill: no-such" in done.stderr and "indexing-and-bounds" in done.stderr


def test_model_check_passes_for_the_default_model(default_folder: Path) -> None:
    done = run([sys.executable, "-m", "app", "model", "check", "--json"], timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["files"] >= 5


def test_propose_writes_and_verifies_a_candidate(default_folder: Path, tmp_path: Path) -> None:
    """End to end: the model's answer (opened with the spec's signature) is written beside a
    copy of the spec and gets a real verdict from the engine; a failure goes back for a second
    round; exit code as the table says."""
    out = tmp_path / "proposals"
    done = run([sys.executable, "-m", "app", "propose", str(VECTOR_ADD / "vector_add.toml"),
                "--description", "c = a + b", "-n", "1", "--rounds", "2", "--max-new-tokens",
                "24", "--threads", "1", "--no-examples", "--no-skills", "--out", str(out),
                "--json"])
    result = json.loads(done.stdout)
    attempts = result["attempts"]
    assert 1 <= len(attempts) <= 2
    for attempt in attempts:
        assert attempt["status"] in PLAIN_WORDS, attempt
    passed = [a for a in attempts if a["status"] == "passed"]
    assert done.returncode == (0 if passed else {"unverified": 3}.get(attempts[-1]["status"], 1))
    if len(attempts) == 2:
        assert attempts[1]["action"] in ("fix_compile", "fix_verify", "propose")
    first = out / "vector_add" / "run" / "chain-1" / "round-1"
    source = (first / "vector_add.cu").read_text()
    assert source.startswith('extern "C" __global__ void vector_add(const float* __restrict__ a')
    assert (first / "vector_add.toml").read_bytes() == (VECTOR_ADD / "vector_add.toml").read_bytes()
    assert (first / "answer.md").read_text().startswith("```cuda\n")
    assert json.loads((first / "attempt.json").read_text())["round"] == 1


def test_a_written_candidate_is_verified_like_the_original(tmp_path: Path) -> None:
    """The candidate folder is self-contained: the known-good kernel written as a candidate
    gets the same verdict as the template itself, from the real engine."""
    spec = load_spec(VECTOR_ADD / "vector_add.toml")
    code = (VECTOR_ADD / "vector_add.cu").read_text()
    spec_copy = write_candidate(spec, code, tmp_path / "candidate-1", "answer text")
    assert load_spec(spec_copy).source_path.read_text() == code
    with Engine() as engine:
        status, message = verify_candidate(spec_copy, "auto", engine, None)
        original = verify_file(VECTOR_ADD / "vector_add.toml", engine=engine)
    assert status == original.status, message


def test_propose_says_a_broken_spec_before_loading_the_model(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("[kernel]\nsource = 3\n", "utf-8")
    for spec in (tmp_path / "missing.toml", broken):
        started = time.perf_counter()
        done = run([sys.executable, "-m", "app", "propose", str(spec), "--no-verify"], 120)
        assert done.returncode == 2 and spec.name in done.stderr, done.stderr[-1000:]
        assert "Traceback" not in done.stderr
        assert time.perf_counter() - started < 10  # the model (about 20 s) was not loaded


def test_the_attempts_table_shows_no_escape_sequence_from_the_model() -> None:
    """A compiler message quoting the model's `#error "\x1b[2J..."`: shown escaped."""
    from app.assist.refine.attempts import Attempt
    from app.cli.commands.propose import table

    message = 'error: #error directive: "\x1b[2J\x1b[31mPWNED\x1b]0;title\x07"'
    text = table([Attempt("add_f32", "arm", 1, 1, 0, "/tmp/x", "compile_error", message)])
    assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b[2J\\x1b[31mPWNED" in text
