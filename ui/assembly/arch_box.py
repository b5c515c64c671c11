"""The PTX / SASS pane's architecture picker: the architectures this machine's NVRTC builds for,
with the one of the build shown selected.

NVRTC is asked once, off the GUI thread (it starts the compile child, about 0.4 s), when the
first build is shown; until it answers, the box holds only the shown build's architecture.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QObject, QThreadPool, Signal
from PySide6.QtWidgets import QComboBox


def _arch_key(arch: str) -> tuple[int, str]:
    """sm_75 < sm_80 < sm_100 < sm_100a: by number, then suffix."""
    digits = "".join(c for c in arch[3:] if c.isdigit())
    return int(digits or 0), arch


class _Loader(QObject):
    """Asks NVRTC for its architectures on a pool thread; `loaded` arrives on the GUI thread."""

    loaded = Signal(object)  # a tuple of names

    def start(self) -> None:
        """Ask once, in the background."""
        QThreadPool.globalInstance().start(self._ask)

    def _ask(self) -> None:
        """Runs on the pool thread."""
        # Imported here: app.compile.api (the compile service) is not needed for the window to
        # appear, only once a build is shown.
        from app.compile.api import nvrtc_archs

        archs = nvrtc_archs()
        try:
            self.loaded.emit(archs)
        except RuntimeError:  # the pane was closed while NVRTC answered
            pass


class ArchBox(QComboBox):
    """A combo box of architectures; `activated` is the user's choice, set_shown() never
    emits it."""

    def __init__(self) -> None:
        """Empty until set_shown()."""
        super().__init__()
        self.setToolTip("Build the current text for another architecture and show its SASS "
                        "and PTX (Build, Ctrl+B, keeps using the arch in Settings)")
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self._archs: tuple[str, ...] = ()
        self._shown = ""
        self._loader: _Loader | None = None

    @property
    def archs(self) -> tuple[str, ...]:
        """Every architecture in the box (NVRTC's once it answered, and the shown one)."""
        return tuple(self.itemText(i) for i in range(self.count()))

    @property
    def loaded(self) -> bool:
        """Whether NVRTC's list is in."""
        return bool(self._archs)

    @property
    def shown(self) -> str:
        """The architecture of the build shown ('' when none)."""
        return self._shown

    def load(self) -> None:
        """Ask NVRTC for its list (once)."""
        if self._loader is None:
            self._loader = _Loader(self)
            self._loader.loaded.connect(self.set_archs)
            self._loader.start()

    def set_archs(self, archs: Sequence[str]) -> None:
        """The architectures to offer."""
        self._archs = tuple(archs)
        self._fill()

    def set_shown(self, arch: str) -> None:
        """Select the shown build's architecture (added to the list when NVRTC's lacks it)."""
        self._shown = arch
        self._fill()

    def _fill(self) -> None:
        """The items: NVRTC's and the shown one, in order, the shown one selected."""
        names = sorted({*self._archs, *([self._shown] if self._shown else [])}, key=_arch_key)
        blocked = self.blockSignals(True)
        self.clear()
        self.addItems(names)
        if self._shown:
            self.setCurrentText(self._shown)
        self.blockSignals(blocked)
        self.setEnabled(bool(names))
