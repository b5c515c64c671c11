"""What the Go menu's keys do: move to the next or previous diagnostic, step through the caret
line's SASS instructions, and put the keyboard focus in the editor or a pane.

The keys themselves are in the window's action table (ui/actions.py); this module makes the
slots from the parts they act on, so that a keyboard alone reaches every pane.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QWidget

from ui.assembly.view import AssemblyView
from ui.editor.tabs import EditorTabs


def first_focusable(container: QWidget) -> QWidget | None:
    """`container` or the first widget inside it, in Tab order, that takes focus from the
    keyboard and can be used now (shown and enabled); None when there is none."""
    widget: QWidget | None = container
    while widget is not None:
        if ((widget is container or container.isAncestorOf(widget)) and widget.isVisible()
                and widget.isEnabled() and widget.focusPolicy() & Qt.FocusPolicy.TabFocus):
            return widget
        widget = widget.nextInFocusChain()
        if widget is container:
            return None
    return None


def focus_pane(dock: QDockWidget, preferred: Callable[[], QWidget] | None = None) -> QWidget:
    """Show a pane's dock, bring it forward and put the focus in it (on what `preferred`
    returns when that is shown, else on its first focusable widget); returns the widget
    focused."""
    dock.show()
    dock.raise_()
    wanted = preferred() if preferred is not None else None
    target = wanted if wanted is not None and wanted.isVisible() else None
    # A pane with nothing to type into or move through (the charts' note) still takes the
    # focus, so that the key visibly does something and Tab starts from there.
    target = target or first_focusable(dock.widget()) or dock.widget()
    QWidget.setFocus(target, Qt.FocusReason.ShortcutFocusReason)
    return target


def focus_editor(tabs: EditorTabs) -> None:
    """Put the focus in the current tab's editor."""
    editor = tabs.current()
    if editor is not None:
        editor.take_focus()


def go_to_diagnostic(tabs: EditorTabs, direction: int) -> None:
    """Move the caret of the current editor to its next (1) or previous (-1) diagnostic."""
    editor = tabs.current()
    if editor is not None:
        editor.go_to_diagnostic(direction)


def step_instruction(view: AssemblyView, dock: QDockWidget, direction: int) -> None:
    """Mark the next (1) or previous (-1) SASS instruction of the caret's line, with the
    PTX / SASS pane brought forward so that the mark can be seen."""
    dock.raise_()
    view.step(direction)


def navigation_slots(tabs: EditorTabs, assembly: AssemblyView,
                     docks: Mapping[str, QDockWidget],
                     preferred: Mapping[str, Callable[[], QWidget]],
                     ) -> dict[str, Callable[[], object]]:
    """The slots of the Go menu's commands, by action name; `preferred` gives the widget a
    pane's focus key lands on where the first one in Tab order is not the useful one."""
    slots: dict[str, Callable[[], object]] = {
        "next_diagnostic": partial(go_to_diagnostic, tabs, 1),
        "previous_diagnostic": partial(go_to_diagnostic, tabs, -1),
        "next_instruction": partial(step_instruction, assembly, docks["assembly"], 1),
        "previous_instruction": partial(step_instruction, assembly, docks["assembly"], -1),
        "focus_editor": partial(focus_editor, tabs),
    }
    for name, dock in docks.items():
        slots[f"focus_{name}"] = partial(focus_pane, dock, preferred.get(name))
    return slots
