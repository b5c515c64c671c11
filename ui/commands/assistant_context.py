"""A snapshot of what the assistant may see, taken on the GUI thread as plain strings.

The model's thread receives this dict, never a widget (docs/architecture.md: workers get data).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtWidgets import QTableWidget, QTableWidgetItem

from ui.assembly.view import AssemblyView
from ui.editor.tabs import EditorTabs
from ui.runs.compile_pane import CompilePane
from ui.runs.results_pane import ResultsPane
from ui.spec.panel import SpecPanel


def _read(path: Path | None) -> str:
    """A small text file, or '' when absent or unreadable."""
    if path is None:
        return ""
    try:
        return path.read_text(encoding="utf-8")[:50_000]
    except (OSError, UnicodeDecodeError):
        return ""


def _text(item: QTableWidgetItem | None) -> str:
    """An item's text ('' for an empty cell)."""
    return item.text() if item is not None else ""


def table_text(table: QTableWidget) -> str:
    """A table as 'header: value' lines, one block per row."""
    headers = [_text(table.horizontalHeaderItem(c)) or str(c) for c in range(table.columnCount())]
    rows = []
    for row in range(table.rowCount()):
        cells = [_text(table.item(row, c)) for c in range(table.columnCount())]
        rows.append(", ".join(f"{h}: {v}" for h, v in zip(headers, cells, strict=True) if v))
    return "\n".join(rows)


@dataclass(frozen=True)
class ContextSources:
    """The panes a snapshot for the assistant is read from."""

    tabs: EditorTabs
    spec_panel: SpecPanel
    compile_pane: CompilePane
    results_pane: ResultsPane
    assembly_view: AssemblyView

    def gather(self, question: str) -> dict[str, str]:
        """Question, source, selection, spec, reference, diagnostics, verdict, resources, SASS
        (only the parts that are not empty)."""
        context = {"question": question.strip(), **self._editor(), **self._spec()}
        context["diagnostics"] = "\n".join(f"line {d.line}, column {d.column}: {d.severity}: "
                                           f"{d.message}" for d in self.compile_pane.items())
        context["verdict"] = self._verdict()
        context["resources"] = table_text(self.compile_pane.resources)
        view = self.assembly_view
        context["sass"] = view.mix_label.text() if view.rows else ""
        return {key: value for key, value in context.items() if value}

    def _editor(self) -> dict[str, str]:
        """The current buffer's text and selection."""
        editor = self.tabs.current()
        if editor is None:
            return {}
        found = {"source": editor.text()}
        if not editor.selectionEmpty():
            found["selection"] = bytes(editor.getSelText().data()).decode("utf-8", "replace")
        return found

    def _spec(self) -> dict[str, str]:
        """The spec file's text and its reference's."""
        spec = self.spec_panel.spec()
        return {"spec": _read(self.spec_panel.path),
                "reference": _read(spec.reference_path) if spec is not None else ""}

    def _verdict(self) -> str:
        """What the Results pane shows, when it shows anything."""
        results = self.results_pane
        if not results.runs.rowCount() and not results.details.toPlainText():
            return ""
        return f"{results.status()}: {results.message.text()}\n{results.details.toPlainText()}"
