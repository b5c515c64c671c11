"""Which LoRA adapter the assistant loads over the local model: a line saying which one is
active (and how it scored on the held-out tasks), and a list to switch it (kept in the settings
file by the window's assistant commands). The choice means what `--adapter` means on the command
line (auto, none or a name) and is resolved the same way (app.assist.model.adapters).

The model's adapters are read (each checked against its manifest) when the control is first
shown and again each time its list opens, never at startup: the window opens without the
assistant's modules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QShowEvent, QStandardItemModel
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget

AUTO, NONE, DEFAULT_NAME = "auto", "none", "default"  # as app.assist.model.adapters names them
WARNING_STYLE = "color: #d18b00;"
ModelFolder = Callable[[], Path]


@dataclass(frozen=True)
class Option:
    """One entry of the list: the value kept (auto, none or a name), its title, and why it is
    refused ('' when it may be chosen)."""

    value: str
    title: str
    problem: str = ""


def pass_at_1(card: dict[str, Any]) -> float | None:
    """The held-out pass@1 an adapter's card records after training, if any."""
    value = card.get("eval", {}).get("after", {}).get("summary", {}).get("pass_at_1")
    return float(value) if isinstance(value, int | float) else None


def score(card: dict[str, Any]) -> str:
    """'held-out pass@1 0.47', or that it was not measured."""
    value = pass_at_1(card)
    return "held-out pass@1 not measured" if value is None else f"held-out pass@1 {value:.2f}"


def options(adapters: list[Any], requested: str) -> list[Option]:
    """Automatic, none, then every adapter of the model (`adapters`: AdapterInfo); a requested
    name the model does not have is listed too, refused, so the list shows what is kept."""
    names = {a.name for a in adapters}
    automatic = DEFAULT_NAME if DEFAULT_NAME in names else "base model"
    found = [Option(AUTO, f"automatic ({automatic})"), Option(NONE, "none (base model)")]
    found += [Option(a.name, a.name if a.problem else f"{a.name} ({score(a.card)})", a.problem)
              for a in adapters]
    if requested not in names | {AUTO, NONE}:
        found.append(Option(requested, f"{requested} (not found)",
                            f"this model has no adapter {requested!r}"))
    return found


def describe(requested: str, resolved: str | None, adapters: list[Any]) -> tuple[str, str]:
    """What the next question loads, for people, and what is wrong with it ('' when nothing)."""
    if resolved is None:
        why = " (automatic: this model has no 'default' adapter)" if requested == AUTO else ""
        return f"none, the base model alone{why}", ""
    how = " (automatic)" if requested == AUTO else ""
    info = next((a for a in adapters if a.name == resolved), None)
    if info is None:
        return f"{resolved}{how}: not found", f"this model has no adapter {resolved!r}"
    if info.problem:
        return f"{resolved}{how}: refused", info.problem
    return f"{resolved}{how} \u2014 {score(info.card)}", ""


def default_folder() -> Path:
    """The folder of the model the assistant loads (the CLI's default)."""
    # app.assist (about 0.3 s of imports) loads when the control is first shown, not at startup.
    from app.assist.model.convert import default_model_folder

    return default_model_folder()


class _ListCombo(QComboBox):
    """A combo box that reads the adapters again just before its list opens."""

    def __init__(self, before_popup: Callable[[], None]) -> None:
        """Call `before_popup` each time the list opens."""
        super().__init__()
        self.before_popup = before_popup

    def showPopup(self) -> None:  # noqa: N802 - Qt's name
        """Refresh, then open."""
        self.before_popup()
        super().showPopup()


class AdapterChoice(QWidget):
    """'Adapter: default — held-out pass@1 0.47' beside the list that switches it (Alt+A)."""

    chosen = Signal(str)

    def __init__(self, model_folder: ModelFolder | None = None,
                 parent: QWidget | None = None) -> None:
        """Automatic until told the kept choice; the adapters are read when first shown."""
        super().__init__(parent)
        self.model_folder = model_folder or default_folder
        self._choice = AUTO
        self._listed = False
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.box = _ListCombo(self.refresh)
        self.box.setToolTip("The LoRA adapter loaded over the local model (kernel-studio teach "
                            "makes them); a change applies from the next question")
        self.box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.label.setBuddy(self.box)  # Alt+A reaches the list
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label, 1)
        row.addWidget(self.box)
        self.box.currentIndexChanged.connect(self._picked)
        self.keep(AUTO)

    def choice(self) -> str:
        """The kept choice: auto, none or an adapter's name."""
        return self._choice

    def keep(self, value: str) -> None:
        """Show the choice kept from before (the settings file), without announcing it."""
        self._choice = value or AUTO
        if self._listed:
            self.refresh()
            return
        self._fill([Option(self._choice, self._choice)])
        self._show_text(f"{self._choice} (checked when shown)", "")

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        """Read the adapters once the pane is on screen (after it is painted)."""
        super().showEvent(event)
        if not self._listed:
            self._listed = True
            QTimer.singleShot(0, self.refresh)

    def refresh(self) -> None:
        """Read the model's adapters again: the list, each refused one disabled with its reason,
        and the line saying what the next question loads."""
        from app.assist.model.adapters import list_adapters, resolve_adapter

        self._listed = True
        folder = self.model_folder()
        try:
            adapters = list_adapters(folder)
        except OSError as error:
            self._show_text(self._choice, f"the adapters in {folder} cannot be read: {error}")
            return
        self._fill(options(adapters, self._choice))
        self._show_text(*describe(self._choice, resolve_adapter(folder, self._choice), adapters))

    def set_choice(self, value: str) -> None:
        """Choose (as the user would): said, and announced to be kept and used."""
        if value == self._choice:
            return
        self._choice = value
        self.refresh()
        self.chosen.emit(value)

    def _fill(self, found: list[Option]) -> None:
        """Put the options in the list, the kept one current, refused ones disabled."""
        self.box.blockSignals(True)  # filling is not choosing
        self.box.clear()
        model = self.box.model()
        assert isinstance(model, QStandardItemModel)
        for index, option in enumerate(found):
            self.box.addItem(option.title, option.value)
            if option.problem:
                model.item(index).setEnabled(False)
                self.box.setItemData(index, option.problem, Qt.ItemDataRole.ToolTipRole)
        self.box.setCurrentIndex(max(0, self.box.findData(self._choice)))
        self.box.blockSignals(False)

    def _picked(self, index: int) -> None:
        """The user chose an entry."""
        value = self.box.itemData(index)
        if isinstance(value, str):
            self.set_choice(value)

    def _show_text(self, text: str, problem: str) -> None:
        """'Adapter: ...' (A underlined: Alt+A), in the warning colour with its problem."""
        words = f"{text}: {problem}" if problem and not text.endswith(problem) else text
        self.label.setText("&Adapter: " + words.replace("&", "&&"))
        self.label.setToolTip(problem or "The adapter the next question is answered with")
        self.label.setStyleSheet(WARNING_STYLE if problem else "")

    def text(self) -> str:
        """The line as people read it (no mnemonic marks)."""
        return self.label.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
