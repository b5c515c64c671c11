"""The command line: subcommands, usage errors and the doctor, run as real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from app.cli import doctor


def kernel_studio(*args: str) -> subprocess.CompletedProcess[str]:
    """Run `python -m app ARGS` in a child process."""
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True,
                          timeout=120, check=False)


def test_unknown_subcommand_prints_usage_and_exits_2() -> None:
    done = kernel_studio("frobnicate")
    assert done.returncode == 2
    assert "usage: kernel-studio" in done.stderr
    assert "invalid choice: 'frobnicate'" in done.stderr


def test_bad_flag_exits_2() -> None:
    done = kernel_studio("doctor", "--no-such-flag")
    assert done.returncode == 2
    assert "unrecognized arguments: --no-such-flag" in done.stderr


def test_doctor_json_tells_the_truth_about_this_machine() -> None:
    done = kernel_studio("doctor", "--json")
    report = json.loads(done.stdout)
    names = {c["name"]: c for c in report["checks"]}
    assert done.returncode == (0 if report["can_run"] else 1)
    assert names["python"]["value"].startswith(f"{sys.version_info.major}.{sys.version_info.minor}")
    assert "nvrtc" in names and "offline" in names
    # The doctor runs under the CLI's offline guard, so it must report offline.
    assert names["offline"]["ok"] is True, names["offline"]


def test_doctor_reports_proxies_as_a_problem(monkeypatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    check = next(c for c in doctor.run_checks() if c.name == "offline")
    assert not check.ok
    assert "HTTPS_PROXY" in check.value


def test_doctor_text_ends_with_a_verdict_line() -> None:
    checks = doctor.run_checks()
    last = doctor.as_text(checks).splitlines()[-1]
    assert last.startswith("ready") or last.startswith("cannot run: missing")


def test_gui_without_a_display_says_how_to_get_one(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    done = subprocess.run([sys.executable, "-m", "app", "gui", str(tmp_path / "k.cu")],
                          capture_output=True, text=True, timeout=60, env=env, check=False)
    assert done.returncode == 3
    assert "no display to open a window on" in done.stderr and "xvfb-run" in done.stderr


def modules_after(*args: str) -> set[str]:
    """The modules a `kernel-studio ARGS` run has imported by its end (run in a child)."""
    code = ("import sys\nfrom app.cli import entry as cli\ntry:\n    cli.main(sys.argv[1:])\n"
            "except SystemExit:\n    pass\nprint(' '.join(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=120, check=False)
    return set(done.stdout.split())


def test_help_imports_no_command_and_verify_never_the_assistant() -> None:
    listing = modules_after("--help")
    assert not {m for m in listing if m.startswith("app.cli.commands.")}
    assert not {"numpy", "torch", "gguf"} & listing
    for command in ("verify", "compile", "bench", "spec-check"):
        loaded = modules_after(command, "--help")
        own = f"app.cli.commands.{command.replace('-', '_')}"
        # A command's own helper modules (bench_pytorch for bench) are part of it.
        commands = {m for m in loaded if m.startswith("app.cli.commands.")
                    and not m.startswith(own + "_")}
        assert commands <= {"app.cli.commands.verify", own, "app.cli.commands.bench"}, commands
        assert not {m for m in loaded if m.startswith("app.assist")}, command
        assert not {"torch", "gguf", "transformers"} & loaded, command
