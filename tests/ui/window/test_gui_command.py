"""The gui subcommand: registered, imports Qt only when it runs, screenshots offscreen too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def run(code: str) -> str:
    """stdout of a Python snippet run in the checkout."""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    return done.stdout


def test_the_command_is_registered_and_the_core_stays_free_of_qt() -> None:
    out = run("import sys; from app.cli import entry as cli; "
              "from app.cli.commands import COMMANDS; "
              "mods = {c.name: cli.command_module(c.name) for c in COMMANDS}; "
              "p = cli.build_parser(mods); "
              "print('gui' in mods, any(m.startswith(('PySide6', 'ui')) for m in sys.modules))")
    assert out.split() == ["True", "False"]


def test_help_names_the_screenshot_option() -> None:
    done = subprocess.run([sys.executable, "-m", "app", "gui", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and "--screenshot" in done.stdout


def test_offscreen_screenshot_without_files(tmp_path: Path, private_data: Path) -> None:
    target = tmp_path / "empty.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "KERNEL_STUDIO_DATA": str(private_data),
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "app", "gui", "--screenshot", str(target)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert target.stat().st_size > 10_000
