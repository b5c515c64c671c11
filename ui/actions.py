"""The window's actions: menus, toolbar and keyboard shortcuts in one table.

Every command is a QAction, so a menu item, a toolbar button and a key all do the same thing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMenu, QToolBar

from ui.theme import available_themes

if TYPE_CHECKING:
    from ui.main_window import MainWindow

# name: (menu, text, shortcut, tool tip)
COMMANDS: dict[str, tuple[str, str, str, str]] = {
    "new": ("&File", "&New from template\u2026", "Ctrl+N", "Start a kernel from the gallery"),
    "open": ("&File", "&Open\u2026", "Ctrl+O", "Open kernel sources or specs"),
    "save": ("&File", "&Save", "Ctrl+S", "Save the current file (atomically)"),
    "save_as": ("&File", "Save &as\u2026", "Ctrl+Shift+S", "Save under another name"),
    "close_tab": ("&File", "&Close tab", "Ctrl+W", "Close the current file"),
    "quit": ("&File", "&Quit", "Ctrl+Q", "Quit Kernel Studio"),
    "find": ("&Edit", "&Find\u2026", "Ctrl+F", "Find in the current file"),
    "replace": ("&Edit", "&Replace\u2026", "Ctrl+H", "Find and replace (plain or regex)"),
    "find_next": ("&Edit", "Find &next", "F3", ""),
    "find_previous": ("&Edit", "Find pre&vious", "Shift+F3", ""),
    "comment": ("&Edit", "Toggle &comment", "Ctrl+/", "Comment or uncomment the lines"),
    "build": ("&Build", "&Build", "Ctrl+B", "Compile the current file"),
    "verify": ("&Run", "&Verify", "F5", "Run the kernel against its reference"),
    "bench": ("&Run", "&Bench", "Ctrl+F5", "Time the kernel"),
    "bench_options": ("&Run", "Bench with &options\u2026", "Ctrl+Shift+F5",
                      "Time with a budget, cold or hot caches, a size sweep or a baseline (A/B)"),
    "memcheck": ("&Run", "Verify under &memcheck", "", "compute-sanitizer memcheck"),
    "racecheck": ("&Run", "Verify under &racecheck", "", "compute-sanitizer racecheck"),
    "cancel": ("&Run", "&Cancel", "Shift+F5", "Stop the running build, verification or timing"),
    "reset_layout": ("&View", "&Reset layout", "", "Put every pane back where it started"),
}
TOOLBAR = ("new", "open", "save", None, "build", "verify", "bench", "cancel")
BACKENDS = ("auto", "pycuda", "cpu")


def _slots(window: MainWindow) -> dict[str, Callable[[], object]]:
    """What each command does."""
    return {
        "new": window.new_from_template, "open": window.open_dialog,
        "save": window.tabs.save, "save_as": window.tabs.save_as,
        "close_tab": lambda: window.tabs.close_tab(window.tabs.currentIndex()),
        "quit": window.close, "find": lambda: window.find_bar.open_find(False),
        "replace": lambda: window.find_bar.open_find(True),
        "find_next": window.find_bar.find_next, "find_previous": window.find_bar.find_previous,
        "comment": window.toggle_comment, "build": window.build, "verify": window.verify,
        "bench": window.bench, "bench_options": window.bench_with_options,
        "memcheck": lambda: window.verify("memcheck"),
        "racecheck": lambda: window.verify("racecheck"), "cancel": window.runner.cancel,
        "reset_layout": window.reset_layout,
    }


def install_actions(window: MainWindow) -> dict[str, QAction]:
    """Create every action, its menu entry and toolbar button; returns them by name."""
    menus: dict[str, QMenu] = {}
    actions: dict[str, QAction] = {}
    slots = _slots(window)
    for name, (menu_title, text, shortcut, tip) in COMMANDS.items():
        if menu_title not in menus:
            menus[menu_title] = window.menuBar().addMenu(menu_title)
        action = QAction(text, window)
        action.setObjectName(f"action_{name}")
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        action.setToolTip(f"{tip} ({shortcut})" if shortcut and tip else tip or text)
        action.setStatusTip(tip)
        action.triggered.connect(lambda _=False, slot=slots[name]: slot())
        menus[menu_title].addAction(action)
        window.addAction(action)
        actions[name] = action
    _add_backend_menu(window, menus["&Run"])
    _add_view_menu(window, menus["&View"])
    _add_toolbar(window, actions)
    actions["cancel"].setEnabled(False)
    return actions


def _add_backend_menu(window: MainWindow, run_menu: QMenu) -> None:
    """Run > Backend: where verification runs (auto picks the GPU, else CPU emulation)."""
    menu = run_menu.addMenu("Back&end")
    group = QActionGroup(window)
    for name in BACKENDS:
        action = QAction(name, window, checkable=True)
        action.setChecked(name == window.runner.backend)
        action.triggered.connect(lambda _=False, n=name: setattr(window.runner, "backend", n))
        group.addAction(action)
        menu.addAction(action)


def _add_view_menu(window: MainWindow, view_menu: QMenu) -> None:
    """View: one toggle per pane, and the themes."""
    view_menu.addSeparator()
    for dock in window.docks.values():
        view_menu.addAction(dock.toggleViewAction())
    view_menu.addSeparator()
    themes = view_menu.addMenu("&Theme")
    group = QActionGroup(window)
    for name in available_themes():
        action = QAction(name.capitalize(), window, checkable=True)
        action.setChecked(name == window.themes.theme.name)
        action.triggered.connect(lambda _=False, n=name: window.set_theme(n))
        group.addAction(action)
        themes.addAction(action)


def _add_toolbar(window: MainWindow, actions: dict[str, QAction]) -> None:
    """The main toolbar."""
    toolbar = QToolBar("Main", window)
    toolbar.setObjectName("main_toolbar")
    for name in TOOLBAR:
        if name is None:
            toolbar.addSeparator()
        else:
            toolbar.addAction(actions[name])
    window.addToolBar(toolbar)
