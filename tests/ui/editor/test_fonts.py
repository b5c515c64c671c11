"""Code is set in a font Qt itself reports fixed-pitch (issue 25, point 15), whichever fonts the
machine has: a family that is not (Noto Sans Mono on some Debian systems) is never chosen."""

from __future__ import annotations

from PySide6.QtGui import QFont, QFontDatabase, QFontInfo
from PySide6.QtWidgets import QApplication

from ui.fonts import code_family, code_font, usable_family


def test_the_code_font_is_fixed_pitch_and_proportional_families_are_passed_over(
        qapp: QApplication) -> None:
    assert QFontInfo(code_font()).fixedPitch()
    assert QFontInfo(code_font(14)).pointSize() == 14
    proportional = [f for f in QFontDatabase.families() if not QFontInfo(QFont(f)).fixedPitch()]
    for family in proportional[:20]:
        assert usable_family(family) == code_family()
    assert usable_family("No Such Font Family") == code_family()
    assert usable_family(code_family()) == code_family()
