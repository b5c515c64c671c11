"""Themes: colour sets read from resources/themes/*.json and applied to the whole application.

A theme is data; widgets that draw their own colours (the editor, the charts) read the current
theme from `current()` and re-apply it when `ThemeManager.changed` fires.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from app.base.paths import RESOURCES

THEMES_DIR = RESOURCES / "themes"
DEFAULT_THEME = "dark"

_PALETTE_ROLES = {
    "window": QPalette.ColorRole.Window,
    "window_text": QPalette.ColorRole.WindowText,
    "base": QPalette.ColorRole.Base,
    "alternate_base": QPalette.ColorRole.AlternateBase,
    "text": QPalette.ColorRole.Text,
    "button": QPalette.ColorRole.Button,
    "button_text": QPalette.ColorRole.ButtonText,
    "highlight": QPalette.ColorRole.Highlight,
    "highlighted_text": QPalette.ColorRole.HighlightedText,
    "tooltip_base": QPalette.ColorRole.ToolTipBase,
    "tooltip_text": QPalette.ColorRole.ToolTipText,
    "placeholder_text": QPalette.ColorRole.PlaceholderText,
    "link": QPalette.ColorRole.Link,
}


@dataclass(frozen=True)
class Theme:
    """One colour theme as stored in resources/themes/<name>.json."""

    name: str
    label: str
    palette: dict[str, str] = field(default_factory=dict)
    editor: dict[str, Any] = field(default_factory=dict)
    syntax: dict[str, dict[str, Any]] = field(default_factory=dict)
    diagnostics: dict[str, str] = field(default_factory=dict)
    charts: dict[str, Any] = field(default_factory=dict)


def available_themes() -> list[str]:
    """Names of the themes shipped in resources/themes."""
    return sorted(path.stem for path in THEMES_DIR.glob("*.json"))


def load_theme(name: str, folder: Path = THEMES_DIR) -> Theme:
    """Read one theme file; unknown names fall back to the default theme."""
    path = folder / f"{name}.json"
    if not path.exists():
        path = folder / f"{DEFAULT_THEME}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    return Theme(**{key: data[key] for key in Theme.__dataclass_fields__ if key in data})


def bgr(colour: str) -> int:
    """A '#rrggbb' colour as Scintilla wants it: 0xBBGGRR."""
    value = QColor(colour)
    return value.red() | (value.green() << 8) | (value.blue() << 16)


def abgr(colour: str, alpha: int = 255) -> int:
    """A '#rrggbb' colour with alpha, as Scintilla's element colours want it: 0xAABBGGRR."""
    return bgr(colour) | (alpha << 24)


# Backgrounds of the lines a compare marks (a variant's changed lines, the baseline's), by
# whether the palette is dark: dark tints under the light text of a dark theme, pale ones under
# the dark text of a light theme, each at least 4.5:1 against its theme's text (WCAG AA).
DIFF_COLOURS = {False: ("#fff3c4", "#fde2e2"), True: ("#3d3620", "#4a2a30")}


def is_dark(palette: QPalette) -> bool:
    """Whether a palette draws light text on a dark base."""
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


def diff_colours(palette: QPalette) -> tuple[QColor, QColor]:
    """(changed in a variant, changed in the baseline) line backgrounds for this palette."""
    changed, base_changed = DIFF_COLOURS[is_dark(palette)]
    return QColor(changed), QColor(base_changed)


def relative_luminance(colour: QColor) -> float:
    """WCAG 2 relative luminance of a colour (0 black .. 1 white)."""
    def linear(channel: float) -> float:
        """One sRGB channel (0..1) made linear."""
        return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4
    return (0.2126 * linear(colour.redF()) + 0.7152 * linear(colour.greenF())
            + 0.0722 * linear(colour.blueF()))


def contrast_ratio(first: QColor, second: QColor) -> float:
    """WCAG 2 contrast ratio of two colours (1 .. 21; 4.5 is the floor for body text)."""
    light, dark = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def build_palette(theme: Theme) -> QPalette:
    """A QPalette from the theme's palette section (disabled text greyed)."""
    palette = QPalette()
    for key, role in _PALETTE_ROLES.items():
        if key in theme.palette:
            palette.setColor(role, QColor(theme.palette[key]))
    disabled = QColor(theme.palette.get("disabled_text", "#808080"))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText,
                 QPalette.ColorRole.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, disabled)
    return palette


class ThemeManager(QObject):
    """Holds the current theme and tells the widgets that draw their own colours when it changes."""

    changed = Signal(object)

    def __init__(self, name: str = DEFAULT_THEME, parent: QObject | None = None) -> None:
        """Load `name` without applying it yet (apply() touches the whole application)."""
        super().__init__(parent)
        self._theme = load_theme(name)

    @property
    def theme(self) -> Theme:
        """The theme in use."""
        return self._theme

    def apply(self, name: str | None = None) -> Theme:
        """Switch to `name` (or re-apply the current theme) and notify listeners."""
        if name is not None:
            self._theme = load_theme(name)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.setStyle("Fusion")
            app.setPalette(build_palette(self._theme))
        self.changed.emit(self._theme)
        return self._theme
