"""The window's actions: menus, toolbar and keyboard shortcuts in one table.

Every command is a QAction, so a menu item, a toolbar button and a key all do the same thing.
The window says what each command does (a slot per name) and what the choice menus offer; this
module only builds the menus, the toolbar and the shortcuts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu, QToolBar

from app.base import settings
from ui.theme import available_themes

# Panes the Go menu moves the keyboard focus to, Alt+0 the editor, Alt+1 the Spec pane and so
# on (name, menu text, where): digits, because Alt+letter opens the menus.
FOCUS_TARGETS = (("editor", "&Editor", "the editor"), ("spec", "Spec pane", "the Spec pane"),
                 ("assembly", "PTX / SASS pane", "the PTX / SASS pane"),
                 ("compile", "Compile pane", "the Compile pane"),
                 ("results", "Results pane", "the Results pane"),
                 ("charts", "Charts pane", "the Charts pane"),
                 ("messages", "Messages pane", "the Messages pane"),
                 ("compare", "Compare pane", "the Compare pane"),
                 ("assistant", "Assistant pane", "the Assistant pane's question box"))

# name: (menu, text, shortcut, tool tip)
COMMANDS: dict[str, tuple[str, str, str, str]] = {
    "new": ("&File", "&New from template\u2026", "Ctrl+N", "Start a kernel from the gallery"),
    "open": ("&File", "&Open\u2026", "Ctrl+O", "Open kernel sources or specs"),
    "open_bundle": ("&File", "Open review &bundle\u2026", "",
                    "Check a review bundle (.ksb) and re-run everything in it here"),
    "save": ("&File", "&Save", "Ctrl+S", "Save the current file (atomically)"),
    "save_as": ("&File", "Save &as\u2026", "Ctrl+Shift+S", "Save under another name"),
    "close_tab": ("&File", "&Close tab", "Ctrl+W", "Close the current file"),
    "quit": ("&File", "&Quit", "Ctrl+Q", "Quit Kernel Studio"),
    "undo": ("&Edit", "&Undo", "Ctrl+Z", "Undo the last edit"),
    "redo": ("&Edit", "&Redo", "Ctrl+Shift+Z", "Redo what was undone"),
    "cut": ("&Edit", "Cu&t", "Ctrl+X", "Cut the selection"),
    "copy": ("&Edit", "&Copy", "Ctrl+C", "Copy the selection"),
    "paste": ("&Edit", "&Paste", "Ctrl+V", "Paste"),
    "go_to_line": ("&Edit", "&Go to line\u2026", "Ctrl+G", "Move the caret to a line"),
    "find": ("&Edit", "&Find\u2026", "Ctrl+F",
             "Find in the current file (the selection or the word under the caret)"),
    "replace": ("&Edit", "&Replace\u2026", "Ctrl+H", "Find and replace (plain or regex)"),
    "find_next": ("&Edit", "Find &next", "F3", ""),
    "find_previous": ("&Edit", "Find pre&vious", "Shift+F3", ""),
    "comment": ("&Edit", "Toggle co&mment", "Ctrl+/", "Comment or uncomment the lines"),
    "settings": ("&Edit", "Setti&ngs\u2026", "Ctrl+,",
                 "Font size, default architecture, compiler options, backend, time limit"),
    "build": ("&Build", "&Build", "Ctrl+B", "Compile the current file"),
    "sass_diff": ("&Build", "SASS &diff\u2026", "Ctrl+Shift+D",
                  "Compare the kernel's SASS with another architecture's or another tab's "
                  "kernel, in the PTX / SASS pane (Escape leaves the diff)"),
    "verify": ("&Run", "&Verify", "F5", "Run the kernel against its reference"),
    "bench": ("&Run", "&Bench", "Ctrl+F5", "Time the kernel"),
    "bench_options": ("&Run", "Bench with &options\u2026", "Ctrl+Shift+F5",
                      "Time with a budget, cold or hot caches, a size sweep or a baseline (A/B)"),
    "memcheck": ("&Run", "Verify under &memcheck", "",
                 "Verify with every memory access checked (compute-sanitizer memcheck)"),
    "racecheck": ("&Run", "Verify under &racecheck", "",
                  "Verify with shared-memory races detected (compute-sanitizer racecheck)"),
    "compare": ("&Run", "Co&mpare kernels\u2026", "Ctrl+Shift+M",
                "Open kernels side by side: sources, verdicts, resources, timing with ratios"),
    "cancel": ("&Run", "&Cancel", "Shift+F5", "Stop the running build, verification or timing"),
    "reset_layout": ("&View", "&Reset layout", "", "Put every pane back where it started"),
    "next_diagnostic": ("&Go", "&Next diagnostic", "F8",
                        "Move the caret to the next error, warning or note in this file"),
    "previous_diagnostic": ("&Go", "&Previous diagnostic", "Shift+F8",
                            "Move the caret to the previous error, warning or note"),
    "next_instruction": ("&Go", "Next &instruction of the line", "Alt+Down",
                         "Mark the next SASS instruction made from the caret's line"),
    "previous_instruction": ("&Go", "Previous in&struction of the line", "Alt+Up",
                             "Mark the previous SASS instruction made from the caret's line"),
    **{f"focus_{name}": ("&Go", title, f"Alt+{key}", f"Put the keyboard focus in {where}")
       for key, (name, title, where) in enumerate(FOCUS_TARGETS)},
    "shortcuts": ("&Help", "&Keyboard shortcuts", "F1", "Every command and its keys"),
    "about": ("&Help", "&About Kernel Studio", "", "Version, data folder, offline state"),
}
TOOLBAR = ("new", "open", "save", None, "build", "verify", "bench", "cancel")
# Commands that start a job: disabled while one runs (Cancel is enabled instead).
RUN_ACTIONS = ("build", "verify", "bench", "bench_options", "memcheck", "racecheck")
Slots = Mapping[str, Callable[[], object]]
SANITIZERS = ("memcheck", "racecheck")
# Why a command cannot run here; kept on the action so that set_running leaves it disabled.
UNAVAILABLE = "unavailable"
NO_GPU = ("Needs an NVIDIA GPU: {name} runs the kernel under compute-sanitizer, which only "
          "works on a GPU. This machine runs kernels in CPU emulation.")
CPU_CHOSEN = ("Not with the CPU backend: {name} runs the kernel under compute-sanitizer on a "
              "GPU. Choose Run > Backend > auto or pycuda.")
BENCH_ACTIONS = ("bench", "bench_options")
# Backends whose times mean something (selftest: the engine's scripted stand-in for tests).
TIMING_BACKENDS = ("pycuda", "selftest")
BENCH_NO_GPU = ("Needs an NVIDIA GPU: timing runs the kernel with pycuda, and this machine "
                "runs kernels in CPU emulation, whose times say nothing about a GPU. Verify "
                "(F5) works here.")
BENCH_CPU_CHOSEN = ("Not with the CPU backend: the CPU emulator's times say nothing about a "
                    "GPU. Choose Run > Backend > auto or pycuda to time.")


@dataclass(frozen=True)
class Choices:
    """What the choice menus show and do: Run > Backend, View's panes and themes."""

    backend: str
    set_backend: Callable[[str], None]
    theme: str
    set_theme: Callable[[str], None]
    panes: Sequence[QDockWidget]


def install_actions(window: QMainWindow, slots: Slots, choices: Choices) -> dict[str, QAction]:
    """Create every action (doing `slots[name]`), its menu entry and toolbar button, and the
    choice menus; returns the actions by name."""
    menus: dict[str, QMenu] = {}
    actions: dict[str, QAction] = {}
    for name, (menu_title, text, shortcut, tip) in COMMANDS.items():
        if menu_title not in menus:
            menus[menu_title] = window.menuBar().addMenu(menu_title)
            menus[menu_title].setToolTipsVisible(True)  # a disabled entry says why
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
    recent = QMenu("Open &recent", window)
    recent.setObjectName("menu_recent")
    menus["&File"].insertMenu(actions["save"], recent)
    actions["recent"] = recent.menuAction()  # its entries are filled when it opens
    _add_backend_menu(window, menus["&Run"], choices)
    _add_view_menu(window, menus["&View"], choices)
    _add_toolbar(window, actions)
    actions["cancel"].setEnabled(False)
    return actions


def set_running(actions: Mapping[str, QAction], running: bool) -> None:
    """While a job runs, Cancel is enabled and the commands that start another are not."""
    actions["cancel"].setEnabled(running)
    for name in RUN_ACTIONS:
        actions[name].setEnabled(not running and not actions[name].property(UNAVAILABLE))


def shortcut_rows() -> list[tuple[str, str, str]]:
    """(command, keys, what it does) for every command, for Help > Keyboard shortcuts."""
    return [(text.replace("&", "").rstrip("\u2026"), shortcut or "\u2014", tip or "")
            for _, text, shortcut, tip in COMMANDS.values()]


def command_tip(name: str) -> str:
    """An action's own tool tip: what it does, and its shortcut."""
    _, text, shortcut, tip = COMMANDS[name]
    return f"{tip} ({shortcut})" if shortcut and tip else tip or text


def sanitizer_refusal(gpu: bool, backend: str) -> str:
    """Why compute-sanitizer cannot run here ('' when it can), in the window's words."""
    if not gpu:
        return NO_GPU
    return CPU_CHOSEN if backend == "cpu" else ""


def bench_refusal(gpu: bool, backend: str) -> str:
    """Why timing cannot run here ('' when it can), in the window's words: the CPU backend
    (chosen, or what auto falls back to without a GPU) runs kernels but cannot time them."""
    if backend in TIMING_BACKENDS:
        return ""
    if backend == "cpu":
        return BENCH_CPU_CHOSEN
    return "" if gpu else BENCH_NO_GPU


def update_availability(actions: Mapping[str, QAction], gpu: bool, backend: str) -> None:
    """Grey out, with the reason as tool tip, what this machine and backend cannot run:
    memcheck and racecheck need a GPU, Bench a backend that times."""
    set_unavailable(actions, SANITIZERS, sanitizer_refusal(gpu, backend))
    set_unavailable(actions, BENCH_ACTIONS, bench_refusal(gpu, backend))


def set_unavailable(actions: Mapping[str, QAction], names: Sequence[str], why: str) -> None:
    """Disable commands that cannot run here, with `why` as their tool tip ('' enables them
    again, unless a job is running); `{name}` in `why` becomes each command's name."""
    for name in names:
        action = actions[name]
        reason = why.format(name=name)
        action.setProperty(UNAVAILABLE, reason)
        action.setEnabled(not reason and not actions["cancel"].isEnabled())
        action.setToolTip(reason or command_tip(name))
        action.setStatusTip(reason or COMMANDS[name][3])


def check_backend(window: QMainWindow, name: str) -> None:
    """Tick `name` in Run > Backend (after a change made elsewhere, in Settings say)."""
    action = window.findChild(QAction, f"backend_{name}")
    if action is not None:
        action.setChecked(True)


def _add_backend_menu(window: QMainWindow, run_menu: QMenu, choices: Choices) -> None:
    """Run > Backend: where verification runs (auto picks the GPU, else CPU emulation)."""
    menu = run_menu.addMenu("Back&end")
    group = QActionGroup(window)
    for name in settings.BACKEND_CHOICES:
        action = QAction(name, window, checkable=True)
        action.setObjectName(f"backend_{name}")
        action.setChecked(name == choices.backend)
        action.triggered.connect(lambda _=False, n=name: choices.set_backend(n))
        group.addAction(action)
        menu.addAction(action)


def _add_view_menu(window: QMainWindow, view_menu: QMenu, choices: Choices) -> None:
    """View: one toggle per pane, and the themes."""
    view_menu.addSeparator()
    for dock in choices.panes:
        view_menu.addAction(dock.toggleViewAction())
    view_menu.addSeparator()
    themes = view_menu.addMenu("&Theme")
    group = QActionGroup(window)
    for name in available_themes():
        action = QAction(name.capitalize(), window, checkable=True)
        action.setChecked(name == choices.theme)
        action.triggered.connect(lambda _=False, n=name: choices.set_theme(n))
        group.addAction(action)
        themes.addAction(action)


def _add_toolbar(window: QMainWindow, actions: dict[str, QAction]) -> None:
    """The main toolbar."""
    toolbar = QToolBar("Main", window)
    toolbar.setObjectName("main_toolbar")
    for name in TOOLBAR:
        if name is None:
            toolbar.addSeparator()
        else:
            toolbar.addAction(actions[name])
    window.addToolBar(toolbar)
