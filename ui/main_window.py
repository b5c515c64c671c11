"""The main window: file tabs with the editor in the centre, panes in docks, a saved layout.

It wires widgets together and adds no logic of its own: building, verifying and timing happen
in app/ through the run controller's job process.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QSettings, Qt, QThreadPool, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QResizeEvent
from PySide6.QtWidgets import (
    QDialog,
    QDockWidget,
    QLabel,
    QMainWindow,
    QMenu,
    QVBoxLayout,
    QWidget,
)

from app.base.paths import data_dir
from app.spec.files import source_of, spec_for
from app.workspace import recovery as recovery_files
from app.workspace.orphans import remove_orphans
from ui.actions import (
    Choices,
    bench_refusal,
    check_backend,
    install_actions,
    set_running,
    shortcut_rows,
    update_availability,
)
from ui.assembly.view import AssemblyView
from ui.assistant.pane import AssistantPane
from ui.assistant.worker import AssistantRunner, SessionFactory
from ui.background import BackendProbe
from ui.commands.assistant import AssistantCommands
from ui.commands.assistant_context import ContextSources
from ui.commands.compare import CompareCommands
from ui.commands.runs import RunCommands
from ui.commands.workspace import APP_TITLE, EDITS, WorkspaceCommands
from ui.compare.review_pane import ReviewPane
from ui.editor.cuda_editor import CudaEditor
from ui.editor.find_bar import FindBar
from ui.editor.prompter import Prompter
from ui.editor.tabs import EditorTabs
from ui.help_dialogs import AboutDialog, ShortcutsDialog
from ui.keyboard import navigation_slots
from ui.message_log import MessageLog
from ui.runs.compile_pane import CompilePane
from ui.runs.controller import RunController
from ui.runs.results_pane import ResultsPane
from ui.spec.panel import SpecPanel
from ui.status_bar import StudioStatusBar
from ui.theme import DEFAULT_THEME, ThemeManager

# Only for annotations (startup time): the charts import pyqtgraph, loaded when the Charts pane
# is first shown; the bench options numpy, loaded with the first timing run.
if TYPE_CHECKING:
    from app.engine.bench.runner import BenchOptions
    from ui.charts.charts_pane import ChartsPane

KEEP_MS = 1000  # how often the layout and open files are saved when they changed
# At most this share of the window goes to the right-hand panes (of the width) and to the
# bottom ones (of the height below the toolbar) when the window is resized: the editor keeps
# the rest, also at 800x500.
RIGHT_SHARE, BOTTOM_SHARE = 1 / 3, 0.4

DOCKS = (  # name, title, area
    ("spec", "Spec", Qt.DockWidgetArea.RightDockWidgetArea),
    ("assembly", "PTX / SASS", Qt.DockWidgetArea.RightDockWidgetArea),
    ("compile", "Compile", Qt.DockWidgetArea.BottomDockWidgetArea),
    ("results", "Results", Qt.DockWidgetArea.BottomDockWidgetArea),
    ("charts", "Charts", Qt.DockWidgetArea.BottomDockWidgetArea),
    ("messages", "Messages", Qt.DockWidgetArea.BottomDockWidgetArea),
    ("compare", "Compare", Qt.DockWidgetArea.BottomDockWidgetArea),
    ("assistant", "Assistant", Qt.DockWidgetArea.RightDockWidgetArea),
)


class MainWindow(QMainWindow):
    """Kernel Studio's window."""

    buildFinished = Signal(object)

    def __init__(self, settings_path: Path | None = None, prompter: Prompter | None = None,
                 offer_recovery: bool = True,
                 assistant_session: SessionFactory | None = None) -> None:
        """Build every pane, restore the saved layout, detect the backend after showing."""
        super().__init__()
        self.setWindowTitle("Kernel Studio")
        self.settings = QSettings(str(settings_path or data_dir() / "settings.ini"),
                                  QSettings.Format.IniFormat)
        self.themes = ThemeManager(str(self.settings.value("theme", DEFAULT_THEME)), self)
        self.themes.apply()
        self.prompter = prompter or Prompter(self)
        self.recovery = recovery_files.RecoveryStore()
        self.tabs = EditorTabs(self.themes.theme, self.recovery, self.prompter, self)
        self.find_bar = FindBar(self.tabs.current, self)
        self.runner = RunController(self)
        self.gpu_usable = True  # until the backend probe says otherwise
        self.messages = MessageLog()
        self.compile_pane = CompilePane()
        self.results_pane = ResultsPane()
        self.results_pane.time_limit = lambda: self.runner.timeout
        self.assembly_view = AssemblyView()
        self.spec_panel = SpecPanel()
        self.assistant_pane = AssistantPane()
        self.review_pane = ReviewPane()
        self.status = StudioStatusBar(self)
        self.setStatusBar(self.status)
        self._charts: ChartsPane | None = None
        self.runs = RunCommands(self.tabs, self.runner, self.spec_panel, self.compile_pane,
                                self.results_pane, self.assembly_view, charts=self.charts,
                                report=self.report, show_pane=self.show_pane, parent=self)
        sources = ContextSources(self.tabs, self.spec_panel, self.compile_pane,
                                 self.results_pane, self.assembly_view)
        self.assistant_commands = AssistantCommands(
            self.assistant_pane, sources, report=self.report, show_pane=self.show_pane,
            factory=assistant_session, store=self.settings, parent=self)
        self.compare_commands = CompareCommands(
            self.tabs, self.review_pane, report=self.report, show_pane=self.show_pane,
            ask_paths=self._ask_paths, parent=self)
        self.workspace = WorkspaceCommands(
            self.tabs, self.runner, self.settings, self.prompter, open_files=self.open_files,
            set_backend=self.set_backend, set_title=self._set_title, report=self.report,
            parent=self)
        self._dialogs: dict[str, QDialog] = {}  # Help's windows, made on first use
        self._stale_watched: weakref.WeakSet[CudaEditor] = weakref.WeakSet()
        self._build_central()
        self.docks = self._build_docks()
        self.actions_by_name = install_actions(self, self._command_slots(), Choices(
            self.runner.backend, self.set_backend, self.themes.theme.name,
            self.set_theme, list(self.docks.values())))
        self._connect()
        self._default_state = self.saveState()
        self._restore_layout()
        self._kept: tuple[object, ...] = ()
        self._keep_timer = QTimer(self, interval=KEEP_MS)
        self._keep_timer.timeout.connect(self.keep_workspace)
        self._offer_recovery = offer_recovery
        QTimer.singleShot(0, self._after_show)

    # -- construction -------------------------------------------------------------------------

    def _build_central(self) -> None:
        """Tabs over the find bar."""
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.find_bar)
        self.setCentralWidget(central)
        self.resize(1400, 900)

    def _build_docks(self) -> dict[str, QDockWidget]:
        """One dock per pane, tabified by area; the charts load when first shown."""
        widgets: dict[str, QWidget] = {
            "spec": self.spec_panel, "assembly": self.assembly_view,
            "compile": self.compile_pane, "results": self.results_pane,
            "charts": QLabel("Charts appear after a timing run (Ctrl+F5)."),
            "messages": self.messages, "assistant": self.assistant_pane,
            "compare": self.review_pane}
        docks: dict[str, QDockWidget] = {}
        first_in_area: dict[Qt.DockWidgetArea, QDockWidget] = {}
        for name, title, area in DOCKS:
            dock = QDockWidget(title, self)
            dock.setObjectName(f"dock_{name}")
            dock.setWidget(widgets[name])
            self.addDockWidget(area, dock)
            if area in first_in_area:
                self.tabifyDockWidget(first_in_area[area], dock)
            else:
                first_in_area[area] = dock
            docks[name] = dock
        for name in ("spec", "compile"):
            docks[name].raise_()
        self.resizeDocks([docks["spec"]], [460], Qt.Orientation.Horizontal)
        # The right-hand panes (spec, assembly, assistant) take the full height: the spec's
        # arguments and a proposal's diff need it more than the bottom panes need the width.
        self.setCorner(Qt.Corner.TopRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        # At 1400x900 the Results pane shows six runs and the editor about thirty lines.
        self.resizeDocks([docks["compile"]], [300], Qt.Orientation.Vertical)
        docks["charts"].visibilityChanged.connect(
            lambda visible: self.charts() if visible else None)
        return docks

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Keep the docks within their share of a smaller window (ui: RIGHT_SHARE and
        BOTTOM_SHARE); a dock the user widens by its handle stays so until the next resize."""
        super().resizeEvent(event)
        self.fit_docks()

    def fit_docks(self) -> None:
        """Shrink the shown right-hand and bottom docks to their share of the window."""
        central = self.centralWidget()
        if central is None or not hasattr(self, "docks"):  # resized while being built
            return
        for dock in self.docks.values():
            if dock.isFloating() or not dock.isVisible():
                continue
            area = self.dockWidgetArea(dock)
            if area == Qt.DockWidgetArea.RightDockWidgetArea:
                most = int(self.width() * RIGHT_SHARE)
                if dock.width() > most:
                    self.resizeDocks([dock], [most], Qt.Orientation.Horizontal)
            elif area == Qt.DockWidgetArea.BottomDockWidgetArea:
                most = int((central.height() + dock.height()) * BOTTOM_SHARE)
                if dock.height() > most:
                    self.resizeDocks([dock], [most], Qt.Orientation.Vertical)

    def _connect(self) -> None:
        """Signals between panes, tabs, the runner and the status bar."""
        self.tabs.problem.connect(lambda what, hint: self.report("error", what, hint))
        self.tabs.currentEditorChanged.connect(self._editor_changed)
        self.tabs.documentSaved.connect(self._document_saved)
        self.spec_panel.specSaved.connect(
            lambda path: self.report("info", f"Saved the spec {Path(path).name}"))
        self.status.cancelRequested.connect(self.runner.cancel)
        self.runner.workerState.connect(self.status.set_worker_state)
        self.runner.progress.connect(self.status.set_progress)
        self.runner.progress.connect(self._job_progress)
        self.runner.busy.connect(self._set_busy)
        self.runs.buildShown.connect(self.buildFinished)
        self.runs.wire()
        self.assistant_commands.wire()
        self.compare_commands.wire()
        self.workspace.wire(self.findChild(QMenu, "menu_recent"))

    def _command_slots(self) -> dict[str, Callable[[], object]]:
        """What each action (ui/actions.py) does."""
        tabs, find = self.tabs, self.find_bar
        return {
            "new": self.new_from_template, "open": self.open_dialog,
            "save": tabs.save, "save_as": tabs.save_as,
            "close_tab": lambda: tabs.close_tab(tabs.currentIndex()),
            "quit": self.close, "find": lambda: find.open_find(False),
            "replace": lambda: find.open_find(True),
            "find_next": find.find_next, "find_previous": find.find_previous,
            "comment": self.toggle_comment, "build": self.build, "verify": self.verify,
            "sass_diff": self.runs.open_sass_diff,
            "bench": self.bench, "bench_options": self.bench_with_options,
            "memcheck": lambda: self.verify("memcheck"),
            "racecheck": lambda: self.verify("racecheck"), "cancel": self.runner.cancel,
            "reset_layout": self.reset_layout, "compare": self.compare_commands.compare,
            "open_bundle": self.compare_commands.open_bundle,
            **{name: partial(self.workspace.edit, name) for name in EDITS},
            "go_to_line": self.workspace.go_to_line, "settings": self.workspace.edit_preferences,
            "shortcuts": lambda: self.show_dialog("shortcuts"),
            "about": lambda: self.show_dialog("about"),
            **navigation_slots(tabs, self.assembly_view, self.docks,
                               {"assistant": lambda: self.assistant_pane.question,
                                "assembly": self.assembly_view.tabs.currentWidget,
                                "compile": self.compile_pane.tabs.currentWidget}),
        }

    def _job_progress(self, text: str, fraction: float) -> None:
        """A running job's news, as stages in the pane of its kind."""
        pane = self.compile_pane if self.runner.kind == "compile" else self.results_pane
        pane.show_progress(text, fraction)

    def _set_busy(self, what: str | None) -> None:
        """A job started (`what` it does) or ended (None): the status bar and the actions."""
        self.status.set_busy(what)
        set_running(self.actions_by_name, what is not None)

    def _after_show(self) -> None:
        """Work that must not delay the first paint: backend detection, crash recovery."""
        probe = BackendProbe(self)
        probe.found.connect(self.status.set_backend)
        probe.gpu.connect(self._gpu_found)
        QThreadPool.globalInstance().start(probe.runnable())
        self.workspace.restore_session()
        if self._offer_recovery:
            self.offer_recovery()
        remove_orphans()  # what crashed sessions left in the temporary folder
        # Only now: a save before the session was restored would forget the files it names.
        self._keep_timer.start()

    def set_backend(self, name: str) -> None:
        """Where verify and bench run: auto, pycuda or cpu (Run > Backend, Settings)."""
        self.runner.set_backend(name)
        check_backend(self, name)
        self._update_sanitizers()

    def _gpu_found(self, usable: bool) -> None:
        """The backend probe found (or did not find) a GPU that can run kernels."""
        self.gpu_usable = usable
        self._update_sanitizers()

    def _update_sanitizers(self) -> None:
        """memcheck and racecheck need a GPU, Bench a backend that times: disabled, saying
        why, when they cannot run."""
        update_availability(self.actions_by_name, self.gpu_usable, self.runner.backend)
        why = bench_refusal(self.gpu_usable, self.runner.backend)
        self.assistant_pane.set_speed_refusal(f"Speed rounds time each kernel that passes. {why}"
                                              if why else "")

    # -- messages and layout ------------------------------------------------------------------

    def report(self, level: str, what: str, hint: str = "", show: bool = True) -> None:
        """Tell the user: the Messages pane keeps it, the status bar shows it for a while;
        errors bring the Messages pane forward unless `show` is False (a pane of their own
        already shows them, as the Compile pane does for build errors)."""
        self.messages.add(level, what, hint)
        self.status.showMessage(what + (f" \u2014 {hint}" if hint else ""), 8000)
        if level == "error" and show:
            self.docks["messages"].raise_()

    def show_pane(self, name: str) -> None:
        """Bring a pane's dock forward (spec, assembly, compile, results, charts, messages,
        assistant, compare)."""
        self.docks[name].raise_()

    def _restore_layout(self) -> None:
        """Window geometry and dock layout from the settings file."""
        geometry = self.settings.value("geometry")
        state = self.settings.value("windowState")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        if isinstance(state, QByteArray):
            self.restoreState(state)

    def keep_workspace(self) -> bool:
        """Save the layout, theme and open files when they changed since the last save, so
        that a crash (no close event) loses none of them; whether anything was saved."""
        kept = (bytes(self.saveGeometry().data()), bytes(self.saveState().data()),
                self.themes.theme.name, self.workspace.session())
        if kept == self._kept:
            return False
        self._kept = kept
        self.workspace.save_session()
        self.save_layout()
        return True

    def save_layout(self) -> None:
        """Remember geometry, dock layout and theme."""
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("windowState", self.saveState())
        self.settings.setValue("theme", self.themes.theme.name)
        self.settings.sync()

    def reset_layout(self) -> None:
        """Every dock back where it started."""
        self.restoreState(self._default_state)

    def set_theme(self, name: str) -> None:
        """Switch theme for the application, every editor and the charts."""
        theme = self.themes.apply(name)
        self.tabs.theme = theme
        for editor in self.tabs.editors():
            editor.apply_theme(theme)
        if self._charts is not None:
            self._charts.apply_theme(theme)

    def charts(self) -> ChartsPane:
        """The charts pane, created (and pyqtgraph imported) on first use."""
        if self._charts is None:
            # pyqtgraph takes a while to import: loaded on first use, not at startup.
            from ui.charts.charts_pane import ChartsPane

            self._charts = ChartsPane(self.themes.theme)
            self.docks["charts"].setWidget(self._charts)
        return self._charts

    # -- files --------------------------------------------------------------------------------

    def open_files(self, paths: Iterable[str | Path]) -> list[CudaEditor]:
        """Open files in tabs; a spec opens its kernel source too."""
        opened = []
        for raw in paths:
            path = Path(raw).expanduser()
            if path.suffix == ".toml":
                self.spec_panel.load(path)
                source = source_of(path)
                path = source if source is not None else path
            editor = self.tabs.open_path(path)
            if editor is not None:
                opened.append(editor)
                self.workspace.remember(path)
        return opened

    def _ask_paths(self, filters: str) -> list[str]:
        """Files the user picks (compare's spec files, bundles), `filters` the file types."""
        folder = str(self.settings.value("last_folder", str(Path.home())))
        return self.prompter.ask_open_paths(folder, filters)

    def open_dialog(self) -> None:
        """Ask for files and open them."""
        folder = str(self.settings.value("last_folder", str(Path.home())))
        paths = self.prompter.ask_open_paths(folder)
        if paths:
            self.settings.setValue("last_folder", str(Path(paths[0]).parent))
            self.open_files(paths)

    def new_from_template(self, name: str | None = None, folder: Path | None = None,
                          kernel_name: str | None = None) -> CudaEditor | None:
        """Copy a template into a folder under a kernel name and open it (asks for the template,
        the name and the folder when not given; ui/commands/workspace.py)."""
        return self.workspace.new_from_template(name, folder, kernel_name)

    def _set_title(self, name: str, modified: bool) -> None:
        """The window's title: the current file's name, marked while it has unsaved changes."""
        self.setWindowTitle(f"{name}[*] \u2014 {APP_TITLE}" if name else APP_TITLE)
        self.setWindowModified(modified)

    def show_dialog(self, name: str) -> QDialog:
        """Help > Keyboard shortcuts ("shortcuts") or About ("about"), made once, brought up."""
        if name not in self._dialogs:
            self._dialogs[name] = ShortcutsDialog(shortcut_rows(), self) \
                if name == "shortcuts" else AboutDialog(self)
        dialog = self._dialogs[name]
        dialog.show()
        dialog.raise_()
        return dialog

    def _editor_changed(self, editor: CudaEditor | None) -> None:
        """Follow the current tab: its spec in the panel, its last build and run in the
        Compile, PTX / SASS and Results panes, its caret and results in the status bar."""
        if editor is None:
            return
        for signal, slot in ((editor.cursorMoved, self.status.set_position),
                             (editor.cursorLineChanged, self.runs.source_line_selected)):
            signal.connect(slot, Qt.ConnectionType.UniqueConnection)
        if editor not in self._stale_watched:  # a lambda cannot be a unique connection
            self._stale_watched.add(editor)
            editor.textEdited.connect(lambda e=editor: self.runs.text_edited(e))
        position = int(editor.currentPos())
        self.status.set_position(int(editor.lineFromPosition(position)) + 1,
                                 int(editor.column(position)) + 1)
        self.status.showMessage(self.runs.follow(editor), 8000)
        self._follow_spec(editor)

    def _follow_spec(self, editor: CudaEditor) -> None:
        """The Spec pane shows the spec beside the tab's file (unless its form has edits)."""
        path = self.tabs.document(editor).path
        spec = spec_for(path) if path else None
        if spec is not None and spec != self.spec_panel.path and not self.spec_panel.is_modified():
            self.spec_panel.load(spec)

    def _document_saved(self, editor: CudaEditor) -> None:
        """A saved spec file reloads the panel; a kernel saved under another name (Save As into
        another folder) brings the spec beside its new place."""
        path = self.tabs.document(editor).path
        if path is not None and path == self.spec_panel.path and not self.spec_panel.is_modified():
            self.spec_panel.load(path)
        elif editor is self.tabs.current():
            self._follow_spec(editor)

    def toggle_comment(self) -> None:
        """Comment or uncomment the selected lines of the current editor."""
        editor = self.tabs.current()
        if editor is not None:
            editor.toggle_comment()

    def offer_recovery(self) -> int:
        """Offer back what crashed sessions autosaved; returns how many buffers reopened."""
        root = recovery_files.recovery_root()
        crashed = recovery_files.crashed_sessions(root, exclude=self.recovery.folder)
        buffers = recovery_files.recoverable(root, exclude=self.recovery.folder)
        if not buffers:
            recovery_files.discard_sessions(crashed)
            return 0
        if not self.prompter.ask_recover(buffers):
            recovery_files.set_aside(crashed)
            self.report("info", "Unsaved work from the last session was set aside",
                        f"It is kept in {recovery_files.set_aside_root()}.")
            return 0
        for buffer in buffers:
            self._reopen(buffer)
        recovery_files.discard_sessions(crashed)
        self.report("info", f"Recovered {len(buffers)} unsaved buffer(s)",
                    "Save them to keep them (Ctrl+S).")
        return len(buffers)

    def _reopen(self, buffer: recovery_files.RecoveredBuffer) -> None:
        """A recovered buffer in a tab of its own, or, when its file's tab is already open (the
        restored session reopened it), as that tab's unsaved text (one undo step)."""
        path = Path(buffer.path) if buffer.path else None
        editor = self.tabs.find_path(path) if path is not None else None
        if editor is None:
            self.tabs.add_buffer(buffer.text, path, buffer.title, modified=True)
        elif editor.text() != buffer.text:
            editor.replace_text_undoably(buffer.text)

    # -- assistant (ui/commands/assistant.py) --------------------------------------------------

    @property
    def assistant(self) -> AssistantRunner | None:
        """The model's thread and worker (None until the first question)."""
        return self.assistant_commands.runner

    def ask_assistant(self, action: str, question: str) -> bool:
        """Send a snapshot of the kernel and the question (or description) to the model."""
        return self.assistant_commands.ask(action, question)

    # -- build, verify, bench (ui/commands/runs.py) ---------------------------------------------

    def build(self) -> bool:
        """Compile the current buffer's text in the background."""
        return self.runs.build()

    def verify(self, sanitize: str | None = None) -> bool:
        """Verify the current kernel against its reference through the worker."""
        return self.runs.verify(sanitize)

    def bench(self, options: BenchOptions | None = None) -> bool:
        """Time the current kernel (the engine's default options unless given)."""
        return self.runs.bench(options)

    def bench_with_options(self) -> bool:
        """Ask for timing options (budget, cold/hot, sweep, baseline), then time."""
        return self.runs.bench_with_options()

    # -- closing ------------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        """Ask about unsaved buffers; on a clean exit remove this session's recovery folder."""
        self._keep_timer.stop()  # closing tabs one by one is no session to keep
        self.workspace.save_session()  # before the tabs close: they open again next time
        if not self.tabs.close_all():
            event.ignore()
            self._keep_timer.start()
            return
        self.runner.shutdown()
        self.assistant_commands.shutdown()
        self.compare_commands.shutdown()
        self.spec_panel.checker.close()
        self.save_layout()
        self.recovery.close()
        event.accept()
