"""Bad cases, sweeps and numbers on the command line are bad usage (exit 2) with a message that
names the problem, found before any GPU is looked for; run through the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.base.paths import ROOT

SPEC = str(ROOT / "resources" / "kernels" / "vector_add" / "vector_add.toml")


def kernel_studio(*args: str) -> subprocess.CompletedProcess[str]:
    """Run `python -m app ARGS` in a child process."""
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True,
                          timeout=240, check=False)


@pytest.mark.parametrize(("flags", "message"), [
    (["--case", "n=-5"], "--case {n=-5}: arg (a).shape is (-5,); sizes cannot be negative"),
    (["--case", "m=5"], "'m' is not a variable of this spec; its variables are n"),
    (["--case", "n=5.5"], "--case {n=5.5}: arg (a).shape[0] must be a whole number"),
    (["--case", "n=0"], "--case {n=0}: [launch].grid[0] is 0"),
    (["--case", "n=5,m=6"], "'m' is not a variable of this spec; its variables are n"),
    (["--case", "n=3000000000"], "arg (n).value: 3000000000 does not fit in int32"),
    (["--sweep", "m=1,2"], "--sweep m=1: 'm' is not a variable of this spec"),
    (["--sweep", "n=-1,2"], "--sweep n=-1: arg (a).shape is (-1,); sizes cannot be negative"),
])
def test_bench_refuses_a_bad_case_before_looking_for_a_gpu(flags: list[str],
                                                           message: str) -> None:
    done = kernel_studio("bench", SPEC, *flags)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stdout
    assert "SPEC_ERROR" in done.stdout and "GPU" not in done.stdout
    assert "Traceback" not in done.stderr


def test_bench_json_says_spec_error_for_a_bad_case() -> None:
    done = kernel_studio("bench", SPEC, "--case", "n=-5", "--json")
    report = json.loads(done.stdout)
    assert done.returncode == 2
    assert report["status"] == "spec_error" and "{n=-5}" in report["message"]


@pytest.mark.parametrize("command", ["bench", "verify"])
def test_a_variable_given_twice_is_bad_usage(command: str) -> None:
    done = kernel_studio(command, SPEC, "--case", "n=5,n=6")
    assert done.returncode == 2
    assert "'n' is given twice; give each variable once" in done.stderr
    assert "usage:" in done.stderr


def test_verify_refuses_a_variable_the_spec_does_not_use() -> None:
    done = kernel_studio("verify", SPEC, "--backend", "cpu", "--case", "n=5,m=6")
    assert done.returncode == 2, done.stdout
    assert "--case {n=5, m=6}: 'm' is not a variable of this spec; its variables are n" \
        in done.stdout


def test_verify_names_the_spec_case_that_cannot_be_resolved(tmp_path: Path) -> None:
    text = Path(SPEC).read_text()
    folder = Path(SPEC).parent
    for name in ("vector_add.cu", "vector_add_ref.py"):
        (tmp_path / name).write_text((folder / name).read_text())
    start = text.index("cases")
    end = text.index("\n", start)
    spec = tmp_path / "spec.toml"
    spec.write_text(text[:start] + "cases = [{ n = 1 }, { n = 1023 }, { n = 3000000000 }]"
                    + text[end:])
    done = kernel_studio("verify", str(spec), "--backend", "cpu")
    assert done.returncode == 2, done.stdout
    assert ("[verify].cases[2] {n=3000000000}: arg (n).value: 3000000000 does not fit in int32"
            in done.stdout)


KERNEL = str(ROOT / "resources" / "kernels" / "vector_add" / "vector_add.cu")


@pytest.mark.parametrize(("flags", "message"), [
    (["--block", "0"], "'0': a block's threads must be from 1 to 1024"),
    (["--block", "-1"], "'-1': a block's threads must be from 1 to 1024"),
    (["--block", "5000"], "'5000': a block's threads must be from 1 to 1024"),
    (["--dynamic-shared", "-1"], "'-1': dynamic shared memory in bytes must be from 0"),
    (["--arch="], "argument --arch: '' is refused: not a real GPU architecture"),
    (["--timeout", "0.01"], "'0.01': seconds must be at least 0.1"),
])
def test_compile_refuses_impossible_numbers(flags: list[str], message: str) -> None:
    done = kernel_studio("compile", KERNEL, "--resources", *flags)
    assert done.returncode == 2, done.stdout
    assert message in done.stderr and "usage:" in done.stderr
    assert "n/a" not in done.stdout


def test_compile_block_in_range_gives_occupancy() -> None:
    done = kernel_studio("compile", KERNEL, "--resources", "--block", "1024")
    assert done.returncode == 0, done.stderr
    assert "n/a" not in done.stdout and "%" in done.stdout


@pytest.mark.parametrize("command", ["verify", "bench"])
def test_a_timeout_too_short_to_launch_is_bad_usage(command: str) -> None:
    done = kernel_studio(command, SPEC, "--backend", "cpu", "--timeout", "1e-9")
    assert done.returncode == 2
    assert "argument --timeout: '1e-9': seconds must be at least 0.1" in done.stderr
    assert "TIMEOUT" not in done.stdout


def test_verify_refuses_an_empty_arch() -> None:
    done = kernel_studio("verify", SPEC, "--backend", "cpu", "--arch=")
    assert done.returncode == 2
    assert "argument --arch: '' is refused" in done.stderr
