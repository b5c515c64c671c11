"""Workflow tests: each test is a whole task a person does across the parts, with the real window
(offscreen) where a window is involved. The GUI fixtures are the GUI suite's own."""

from __future__ import annotations

import sys
from pathlib import Path

# The GUI suite's helpers import as top-level modules (gui_support, stand_in), as they do there.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ui"))

from tests.ui.conftest import (  # noqa: E402
    kernel_copy,
    no_leaked_top_level_widgets,
    private_data,
    prompter,
    window,
)

__all__ = ["kernel_copy", "no_leaked_top_level_widgets", "private_data", "prompter", "window"]
