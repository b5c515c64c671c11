"""Workflow tests: each test is a whole task a person does across the parts, with the real window
(offscreen) where a window is involved. The GUI fixtures are the GUI suite's own; on a machine
without Qt (the GPU machine) only the workflows without a window are collected."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

# The workflows that need no window; every other one does.
WINDOWLESS = {"test_kernelbench_day.py"}

if importlib.util.find_spec("PySide6") is None:
    collect_ignore = [p.name for p in Path(__file__).parent.glob("test_*.py")
                      if p.name not in WINDOWLESS]
else:
    # The GUI suite's helpers import as top-level modules (gui_support, stand_in), as there.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ui"))
    from tests.ui.conftest import (  # noqa: F401
        kernel_copy,
        no_leaked_top_level_widgets,
        private_data,
        prompter,
        window,
    )
