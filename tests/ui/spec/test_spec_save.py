"""The Spec panel saves into the same file without throwing its comments away."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ui.main_window import MainWindow


def comment_lines(text: str) -> list[str]:
    """The lines of a TOML text that carry a comment."""
    return [line for line in text.splitlines() if "#" in line]


def test_saving_from_the_panel_keeps_the_templates_comments(
        qtbot: Any, window: MainWindow, kernel_copy: Path) -> None:
    spec_path = kernel_copy.with_suffix(".toml")
    before = spec_path.read_text()
    window.open_files([kernel_copy])
    panel = window.spec_panel
    panel.fields["block"].setText("128")
    panel.fields["grid"].setText("cdiv(n, 128)")
    assert panel.validate_now() == [] and panel.save()
    after = spec_path.read_text()
    assert 'block = ["128"]' in after and 'grid = ["cdiv(n, 128)"]' in after
    assert comment_lines(after) == comment_lines(before)
    assert after.startswith("# c = a + b: the first template to read")
    changed = {line for line in after.splitlines()} - {line for line in before.splitlines()}
    assert changed == {'block = ["128"]', 'grid = ["cdiv(n, 128)"]'}  # nothing else rewritten
    assert panel.load(spec_path) and panel.spec() is not None
