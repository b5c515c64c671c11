"""Build, verify and bench from the window: snapshots go to the run controller, results come
back to the panes (kept apart from the window so that each module stays small)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

from ui.assembly.model import same_file
from ui.spec.files import spec_for

if TYPE_CHECKING:
    from ui.editor.cuda_editor import CudaEditor
    from ui.main_window import MainWindow
    from ui.runs.controller import BuildSnapshot

RUN_ACTIONS = ("build", "verify", "bench", "bench_options", "memcheck", "racecheck")
BUSY = ("A job is already running", "Wait for it, or Cancel it.")


class RunCommands(QObject):
    """The window's build, verify and bench commands and what their results do to the panes.

    A QObject (child of the window) so that its methods are slots Qt can connect uniquely."""

    def __init__(self, window: MainWindow) -> None:
        """Work on `window`'s panes; wire() routes the run controller's signals here."""
        super().__init__(window)
        self.window = window
        self.assembly_buffer = ""  # the buffer whose build the PTX / SASS pane shows
        self.bench_options: Any = None  # the last options of Bench with options

    def wire(self) -> None:
        """Route the run controller's and the panes' signals here."""
        w = self.window
        w.compile_pane.diagnosticActivated.connect(self.go_to_diagnostic)
        w.assembly_view.sourceLineRequested.connect(self.show_source_line)
        w.runner.busy.connect(self.set_busy)
        w.runner.built.connect(self.show_build)
        w.runner.verified.connect(self.show_verdict)
        w.runner.benched.connect(self.show_bench)
        w.runner.failed.connect(self.show_failure)

    # -- build --------------------------------------------------------------------------------

    def build(self) -> bool:
        """Compile the current buffer's text in the background."""
        w = self.window
        editor = w.tabs.current()
        if editor is None:
            w.report("info", "Nothing to build", "Open a kernel or start one from a template.")
            return False
        document = w.tabs.document(editor)
        text, version = editor.snapshot()
        if not w.runner.build(text, version, document.buffer_id, document.path,
                              document.untitled_name, w.spec_panel.spec()):
            w.report("info", *BUSY)
            return False
        w.compile_pane.show_running()
        w.docks["compile"].raise_()
        return True

    def editor_for(self, buffer_id: str) -> CudaEditor | None:
        """The open editor of a buffer id."""
        tabs = self.window.tabs
        return next((e for e in tabs.editors() if tabs.document(e).buffer_id == buffer_id), None)

    def show_build(self, snapshot: BuildSnapshot, data: dict[str, Any]) -> None:
        """Show a build: diagnostics in the pane and the editor, PTX and SASS per kernel."""
        w = self.window
        editor = self.editor_for(snapshot.buffer_id)
        stale = editor is not None and editor.version != snapshot.version
        items = w.compile_pane.show_result(data, stale)
        if editor is not None:
            editor.set_diagnostics([d for d in items if same_file(d.file, snapshot.filename)])
        ptx = data.get("ptx") if isinstance(data.get("ptx"), str) else ""
        w.assembly_view.show_assembly(str(ptx), data.get("sass") or {}, snapshot.filename,
                                      data.get("ptx_functions") or {})
        self.assembly_buffer = snapshot.buffer_id
        ok = bool(data.get("ok"))
        w.report("info" if ok else "error", w.compile_pane.summary.text(),
                 "" if ok else "Click a diagnostic to jump to its line.", show=False)
        w.docks["compile"].raise_()
        w.buildFinished.emit(data)

    def go_to_diagnostic(self, line: int, column: int) -> None:
        """Jump to a diagnostic in the buffer that was built."""
        editor = self.editor_for(self.assembly_buffer) or self.window.tabs.current()
        if editor is not None:
            self.window.tabs.setCurrentWidget(editor)
            editor.go_to(line, column)

    def source_line_selected(self, line: int) -> None:
        """Highlight the instructions made from the caret's line."""
        tabs = self.window.tabs
        editor = tabs.current()
        if editor is not None and tabs.document(editor).buffer_id == self.assembly_buffer:
            self.window.assembly_view.select_source_line(line)

    def show_source_line(self, line: int) -> None:
        """An instruction was clicked: show and highlight its source line."""
        editor = self.editor_for(self.assembly_buffer)
        if editor is not None:
            self.window.tabs.setCurrentWidget(editor)
            editor.highlight_lines([line])
            editor.ensureVisibleEnforcePolicy(line - 1)

    # -- verify and bench ---------------------------------------------------------------------

    def ready_spec(self) -> Path | None:
        """Save what a run reads (the kernel, changed files beside it, the spec), or say why not."""
        w = self.window
        editor = w.tabs.current()
        spec_path = w.spec_panel.path
        if editor is not None and spec_path is None:
            path = w.tabs.document(editor).path
            spec_path = spec_for(path) if path else None
            if spec_path is not None:
                w.spec_panel.load(spec_path)
        if spec_path is None:
            w.report("error", "No spec for this kernel", "A run needs a .toml spec beside the "
                     ".cu file; File > New from template creates both.")
            return None
        for other in w.tabs.modified_editors():
            path = w.tabs.document(other).path
            if path is not None and path.parent == spec_path.parent and not w.tabs.save(other):
                return None
        if w.spec_panel.is_modified() and not w.spec_panel.save():
            w.report("error", "The spec has problems", "Fix the fields listed in the Spec pane.")
            w.docks["spec"].raise_()
            return None
        return spec_path

    def verify(self, sanitize: str | None = None) -> bool:
        """Verify the current kernel against its reference through the worker."""
        w = self.window
        spec_path = self.ready_spec()
        if spec_path is None:
            return False
        if not w.runner.verify(spec_path, sanitize):
            w.report("info", *BUSY)
            return False
        what = f"Verifying {spec_path.name}" + (f" under {sanitize}" if sanitize else "")
        w.results_pane.show_running(what + "\u2026")
        w.docks["results"].raise_()
        return True

    def show_verdict(self, verdict: dict[str, Any]) -> None:
        """Show a verdict; compile errors also go to the editor."""
        w = self.window
        w.results_pane.show_verdict(verdict)
        w.docks["results"].raise_()
        status = str(verdict.get("status"))
        w.report("info" if status == "passed" else "error",
                 f"Verification: {status.replace('_', ' ')} \u2014 {verdict.get('message', '')}",
                 show=False)
        if verdict.get("diagnostics"):
            items = w.compile_pane.show_result({"ok": status != "compile_error",
                                                "diagnostics": verdict["diagnostics"]})
            editor = w.tabs.current()
            if editor is not None:
                editor.set_diagnostics(items)

    def bench(self, options: Any = None) -> bool:
        """Time the current kernel (with `options`, a BenchOptions of app.engine.bench.runner, when
        the user chose some; the engine's defaults otherwise)."""
        w = self.window
        spec_path = self.ready_spec()
        if spec_path is None:
            return False
        if not w.runner.bench(spec_path, options):
            w.report("info", *BUSY)
            return False
        against = f" against {Path(options.vs).name}" if options is not None and options.vs else ""
        w.results_pane.show_running(f"Timing {spec_path.name}{against}\u2026")
        return True

    def size_variables(self) -> list[str]:
        """The spec's size variables (bench case first), for the sweep's choices."""
        spec = self.window.spec_panel.spec()
        if spec is None:
            return []
        names = [*spec.bench_case, *(name for case in spec.cases for name in case)]
        return list(dict.fromkeys(names))

    def bench_with_options(self) -> bool:
        """Ask for budget, cold or hot, a sweep and a baseline, then time with them."""
        from ui.runs.bench_options_dialog import BenchOptionsDialog

        w = self.window
        folder = w.spec_panel.path.parent if w.spec_panel.path else None
        dialog = BenchOptionsDialog(self.size_variables(), folder, self.bench_options, w)
        try:
            if not dialog.exec():
                return False
            self.bench_options = dialog.options()
        finally:
            dialog.deleteLater()
        return self.bench(self.bench_options)

    def show_bench(self, data: dict[str, Any]) -> None:
        """Timing results go to the results pane and the charts."""
        from ui.charts.bench_data import feed_charts

        w = self.window
        w.results_pane.show_bench(data)
        w.docks["charts"].raise_()
        shown = feed_charts(w.charts(), data)
        status = str(data.get("status", ""))
        w.report("info" if status == "timed" else "error",
                 f"Timing: {status} \u2014 {data.get('message', '')}", f"Charts: {shown}",
                 show=False)

    def show_failure(self, kind: str, message: str, hint: str) -> None:
        """A job without a result: cancelled, or the tool could not run."""
        w = self.window
        if kind == "compile":
            w.compile_pane.show_failure(message)
        else:
            w.results_pane.show_failure(message, hint)
        w.report("info" if message == "cancelled" else "error", f"{kind}: {message}", hint)

    def set_busy(self, what: str | None) -> None:
        """Enable Cancel while a job runs; disable starting another."""
        w = self.window
        w.status.set_busy(what)
        w.actions_by_name["cancel"].setEnabled(what is not None)
        for name in RUN_ACTIONS:
            w.actions_by_name[name].setEnabled(what is None)
