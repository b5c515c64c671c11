"""Settings: a form made from the declared settings (table.py); OK is refused, saying what is
wrong, while a value is not right."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.base.settings import Kind
from ui.preferences.table import PREFERENCES, Preference, problems

ERROR_STYLE = "color: #e53935;"
Field = QSpinBox | QDoubleSpinBox | QComboBox | QLineEdit


def _field(preference: Preference, value: Any) -> Field:
    """An editor for one setting, showing `value`."""
    field: Field
    if preference.kind is Kind.INT:
        field = QSpinBox(minimum=int(preference.minimum), maximum=int(preference.maximum))
        field.setValue(int(value))
    elif preference.kind is Kind.FLOAT:
        field = QDoubleSpinBox(minimum=preference.minimum, maximum=preference.maximum,
                               decimals=1)
        field.setValue(float(value))
    elif preference.kind is Kind.CHOICE:
        field = QComboBox()
        field.addItems(list(preference.choices))
        field.setCurrentText(str(value))
    else:
        field = QLineEdit(str(value))
        field.setPlaceholderText("default")
    field.setToolTip(preference.meaning)
    field.setObjectName(preference.key)
    return field


def _value(field: Field) -> Any:
    """What a field holds."""
    if isinstance(field, QSpinBox | QDoubleSpinBox):
        return field.value()
    if isinstance(field, QComboBox):
        return field.currentText()
    return field.text().strip()


class PreferencesDialog(QDialog):
    """Edit every setting; values() holds them once accepted."""

    def __init__(self, values: dict[str, Any], parent: QWidget | None = None) -> None:
        """A field per declared setting, filled with `values`."""
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.fields = {p.key: _field(p, values.get(p.key, p.default)) for p in PREFERENCES}
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet(ERROR_STYLE)
        form = QFormLayout()
        self.hints: list[QLabel] = []
        for preference in PREFERENCES:
            form.addRow(preference.label, self.fields[preference.key])
            hint = QLabel(preference.meaning)
            hint.setWordWrap(True)
            hint.setEnabled(False)  # greyed: an explanation, not a value
            hint.setObjectName(f"hint_{preference.key}")
            form.addRow("", hint)
            self.hints.append(hint)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)
        self.resize(560, 0)

    def fit_hints(self) -> None:
        """Give each wrapped help text the height its lines need at its width: a form layout
        sizes rows without asking wrapped labels, which cut their last line off."""
        for hint in self.hints:
            hint.setMinimumHeight(hint.heightForWidth(max(hint.width(), 1)))

    def showEvent(self, event: QShowEvent) -> None:
        """Fit the help texts once the dialog has its width."""
        super().showEvent(event)
        self.fit_hints()

    def resizeEvent(self, event: QResizeEvent) -> None:
        """A narrower dialog wraps the help texts onto more lines: make room for them."""
        super().resizeEvent(event)
        self.fit_hints()

    def values(self) -> dict[str, Any]:
        """Every field's value, by setting key."""
        return {key: _value(field) for key, field in self.fields.items()}

    def accept(self) -> None:
        """Close only when every value is right; else say what is wrong."""
        found = problems(self.values())
        if found:
            labels = {p.key: p.label for p in PREFERENCES}
            self.problem.setText("\n".join(f"{labels[k]}: {v}" for k, v in found.items()))
            return
        super().accept()
