"""A snapshot of what the assistant may see, taken on the GUI thread as plain strings.

The model's thread receives this dict, never a widget (DESIGN.md: workers get data).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QTableWidget, QTableWidgetItem

if TYPE_CHECKING:
    from ui.main_window import MainWindow


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


def gather_context(window: MainWindow, question: str) -> dict[str, str]:
    """Question, source, selection, spec, reference, diagnostics, verdict, resources, SASS."""
    context = {"question": question.strip()}
    editor = window.tabs.current()
    if editor is not None:
        context["source"] = editor.text()
        if not editor.selectionEmpty():
            context["selection"] = bytes(editor.getSelText().data()).decode("utf-8", "replace")
    spec = window.spec_panel.spec()
    context["spec"] = _read(window.spec_panel.path)
    context["reference"] = _read(spec.reference_path) if spec is not None else ""
    items = window.compile_pane.items()
    context["diagnostics"] = "\n".join(f"line {d.line}, column {d.column}: {d.severity}: "
                                       f"{d.message}" for d in items)
    results = window.results_pane
    if results.runs.rowCount() or results.details.toPlainText():
        context["verdict"] = f"{results.status()}: {results.message.text()}\n" \
                             f"{results.details.toPlainText()}"
    context["resources"] = table_text(window.compile_pane.resources)
    context["sass"] = window.assembly_view.mix_label.text() if window.assembly_view.rows else ""
    return {key: value for key, value in context.items() if value}
