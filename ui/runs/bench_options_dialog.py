"""Run > Bench with options: budget, cold or hot timing, a size sweep and an A/B baseline.

The dialog builds a BenchOptions of app.engine.bench.runner (what `kernel-studio bench` builds
from its flags), so the GUI and the CLI time the same way; it validates as you type and
refuses OK while anything is wrong, saying what.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.spec import expr

# The bench runner and the timing plan import numpy: they load when the dialog first opens,
# not at startup (the window imports this module); here only for annotations.
if TYPE_CHECKING:
    from app.engine.bench.runner import BenchOptions

MODES = (("cold", "Cold: flush L2 before each sample"), ("hot", "Hot: caches stay warm"))
DEFAULT_SIZES = "2**16, 2**18, 2**20, 2**22, 2**24"


def parse_sizes(text: str) -> list[int | float]:
    """'1e4, 2**20 65536' -> [10000, 1048576, 65536]: numbers or spec expressions, separated
    by commas or spaces (ValueError names a bad item)."""
    sizes: list[int | float] = []
    for item in text.replace(",", " ").split():
        try:
            value = expr.evaluate(item, {})
        except expr.ExprError as error:
            raise ValueError(f"{item!r} is not a size ({error})") from None
        if value <= 0:
            raise ValueError(f"{item!r} is not a positive size")
        sizes.append(int(value) if float(value).is_integer() else float(value))
    return sizes


class BenchOptionsDialog(QDialog):
    """Timing options for one run; options() gives the BenchOptions once accepted."""

    def __init__(self, variables: Sequence[str], spec_folder: Path | None = None,
                 initial: BenchOptions | None = None, parent: QWidget | None = None) -> None:
        """`variables` are the spec's size variables (the sweep's choices); `initial` is the
        last BenchOptions used, if any."""
        super().__init__(parent)
        self.setWindowTitle("Bench with options")
        self.spec_folder = spec_folder or Path.home()
        self.budget = QDoubleSpinBox(minimum=10.0, maximum=600_000.0, decimals=0,
                                     singleStep=500.0, suffix=" ms")
        self.mode = QComboBox()
        for name, title in MODES:
            self.mode.addItem(title, name)
        self.sweep_box = QCheckBox("Sweep one size variable")
        self.variable = QComboBox(editable=True)
        self.variable.addItems(list(variables))
        self.sizes = QLineEdit(DEFAULT_SIZES)
        self.vs_box = QCheckBox("Compare against a baseline spec (A/B, interleaved)")
        self.vs_path = QLineEdit()
        self.vs_path.setPlaceholderText("the baseline's .toml spec")
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Bench")
        self._build()
        self._load(initial)
        self.validate()

    def _build(self) -> None:
        """Timing, sweep and baseline rows, the problem line, the buttons."""
        form = QFormLayout()
        form.addRow("Budget per variant and size", self.budget)
        form.addRow("Caches", self.mode)
        form.addRow(self.sweep_box)
        form.addRow("Variable", self.variable)
        form.addRow("Sizes", self.sizes)
        form.addRow(self.vs_box)
        row = QHBoxLayout()
        row.addWidget(self.vs_path, 1)
        browse = QPushButton("Browse\u2026")
        browse.clicked.connect(self._browse)
        row.addWidget(browse)
        form.addRow("Baseline", row)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        for box in (self.sweep_box, self.vs_box):
            box.toggled.connect(self.validate)
        for line in (self.sizes, self.vs_path):
            line.textChanged.connect(self.validate)
        self.variable.currentTextChanged.connect(self.validate)

    def _load(self, initial: BenchOptions | None) -> None:
        """Show the last options used (the engine's defaults the first time)."""
        from app.engine.bench.runner import BenchOptions  # numpy: not at startup

        options = initial or BenchOptions()
        self.budget.setValue(float(options.budget_ms))
        self.mode.setCurrentIndex(max(0, self.mode.findData(options.mode)))
        if options.sweep is not None:
            self.sweep_box.setChecked(True)
            self.variable.setCurrentText(str(options.sweep[0]))
            self.sizes.setText(", ".join(str(v) for v in options.sweep[1]))
        if options.vs is not None:
            self.vs_box.setChecked(True)
            self.vs_path.setText(str(options.vs))

    def _browse(self) -> None:
        """Choose the baseline spec with a file dialog."""
        path, _ = QFileDialog.getOpenFileName(self, "Baseline spec", str(self.spec_folder),
                                              "Kernel specs (*.toml)")
        if path:
            self.vs_path.setText(path)
            self.vs_box.setChecked(True)

    def problems(self) -> list[str]:
        """What stops these options from running, in words."""
        found = []
        if self.sweep_box.isChecked():
            if not self.variable.currentText().strip().isidentifier():
                found.append("Name the size variable to sweep (for example n).")
            try:
                if len(parse_sizes(self.sizes.text())) < 2:
                    found.append("A sweep needs at least two sizes.")
            except ValueError as error:
                found.append(f"Sizes: {error}.")
        if self.vs_box.isChecked():
            path = Path(self.vs_path.text().strip()).expanduser()
            if path.suffix != ".toml" or not path.is_file():
                found.append("The baseline must be an existing .toml spec.")
        return found

    def validate(self) -> bool:
        """Enable the sweep and baseline fields that are switched on; OK only when valid."""
        self.variable.setEnabled(self.sweep_box.isChecked())
        self.sizes.setEnabled(self.sweep_box.isChecked())
        self.vs_path.setEnabled(self.vs_box.isChecked())
        found = self.problems()
        self.problem.setText(" ".join(found))
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(not found)
        return not found

    def options(self) -> BenchOptions:
        """The BenchOptions these fields describe (call once validate() is True)."""
        from app.engine.bench.runner import BenchOptions  # numpy: not at startup
        from app.engine.worker.timing import TimingMode

        sweep = None
        if self.sweep_box.isChecked():
            sweep = (self.variable.currentText().strip(), parse_sizes(self.sizes.text()))
        vs = Path(self.vs_path.text().strip()).expanduser() if self.vs_box.isChecked() else None
        return BenchOptions(mode=TimingMode(self.mode.currentData()), budget_ms=self.budget.value(),
                            sweep=sweep, vs=vs)
