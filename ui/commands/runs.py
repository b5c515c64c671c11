"""Build, verify and bench from the window: snapshots go to the run controller, results come
back to the panes.

RunCommands receives the panes and services it works with, never the window: the editor tabs,
the run controller, the spec, compile, results and assembly panes, the charts (made on first
use), the message log's report and a way to bring a pane forward.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from app.compile.assembly import same_file
from app.engine.verify.results import Status, Verdict
from app.spec.files import spec_for
from app.workspace.snapshot import SnapshotError
from ui.assembly.view import DIFF_ARCH, AssemblyView
from ui.editor.cuda_editor import CudaEditor
from ui.editor.tabs import EditorTabs
from ui.message_log import Reporter
from ui.runs.bench_options_dialog import BenchOptionsDialog
from ui.runs.compile_pane import CompilePane
from ui.runs.controller import DIFF, BuildSnapshot, RunController
from ui.runs.results_pane import ResultsPane
from ui.spec.panel import SpecPanel

# Only for annotations: timing reports, their options and the charts' feeding import numpy,
# which loads with the first timing run, not at startup.
if TYPE_CHECKING:
    from app.engine.bench.chart_data import ChartsLike
    from app.engine.bench.reports import BenchReport
    from app.engine.bench.runner import BenchOptions

BUSY = ("A job is already running", "Wait for it, or Cancel it.")


@dataclass
class TabResults:
    """What one buffer's last build and last run left for the panes, kept so that the Compile,
    PTX / SASS and Results panes show the active tab's, whichever tab a job started from."""

    build: tuple[BuildSnapshot, dict[str, Any]] | None = None
    outcome: Verdict | BenchReport | tuple[str, str] | str | None = None  # or failure, running
    version: int | None = None  # the buffer's version when the run started
    verdict: Verdict | None = None  # its last verification (a refusal to time sits under it)


class RunCommands(QObject):
    """The window's build, verify and bench commands and what their results do to the panes.

    A QObject (child of the window) so that its methods are slots Qt can connect uniquely."""

    buildShown = Signal(object)

    def __init__(self, tabs: EditorTabs, runner: RunController, spec_panel: SpecPanel,
                 compile_pane: CompilePane, results_pane: ResultsPane,
                 assembly_view: AssemblyView, *, charts: Callable[[], ChartsLike],
                 report: Reporter, show_pane: Callable[[str], None], parent: QWidget) -> None:
        """Work on these panes; `charts` makes the charts pane on first use, `show_pane` brings
        a pane forward by name, `parent` owns this object and the options dialog."""
        super().__init__(parent)
        self.tabs, self.runner, self.spec_panel = tabs, runner, spec_panel
        self.compile_pane, self.results_pane = compile_pane, results_pane
        self.assembly_view = assembly_view
        self.charts, self.report, self.show_pane = charts, report, show_pane
        self._charts_made = False  # the charts pane is made with the first timing result
        self.dialog_parent = parent
        self.assembly_buffer = ""  # the buffer whose build the PTX / SASS pane shows
        self.results: dict[str, TabResults] = {}  # by buffer id
        self.run_buffer = ""  # the buffer whose verification or timing runs (or last ran)
        self.bench_options: BenchOptions | None = None  # the last of Bench with options

    def wire(self) -> None:
        """Route the run controller's and the panes' signals here."""
        self.compile_pane.diagnosticActivated.connect(self.go_to_diagnostic)
        self.assembly_view.sourceLineRequested.connect(self.show_source_line)
        self.assembly_view.archChosen.connect(self.build_for_arch)
        self.assembly_view.diffRequested.connect(self.diff_with)
        self.assembly_view.diff_tabs = self.other_tabs
        self.runner.built.connect(self.show_build)
        self.runner.verified.connect(self.show_verdict)
        self.runner.benched.connect(self.show_bench)
        self.runner.failed.connect(self.show_failure)

    # -- build --------------------------------------------------------------------------------

    def build(self, arch: str | None = None) -> bool:
        """Compile the current buffer's text in the background (for `arch` instead of the
        Settings' when given: the PTX / SASS pane's picker)."""
        editor = self.tabs.current()
        if editor is None:
            self.report("info", "Nothing to build", "Open a kernel or start one from a template.")
            return False
        document = self.tabs.document(editor)
        text, version = editor.snapshot()
        if not self.runner.build(text, version, document.buffer_id, document.path,
                                 document.untitled_name, self.spec_panel.spec(), arch=arch):
            self.report("info", *BUSY)
            return False
        self.compile_pane.show_running()
        if arch is None:  # a build from the picker keeps the PTX / SASS pane in front
            self.show_pane("compile")
        return True

    def build_for_arch(self, arch: str) -> None:
        """The PTX / SASS pane's picker: build the current text for `arch` and show it, the
        Settings' arch unchanged."""
        if not self.build(arch):
            self.assembly_view.arch_refused(f"{arch} not built: another job is running"
                                            if self.runner.running else f"{arch} not built")

    def show_build(self, snapshot: BuildSnapshot, data: dict[str, Any]) -> None:
        """Keep a build for its buffer; show it when that buffer's tab is the active one. The
        other side of a SASS diff goes to the diff instead."""
        if snapshot.purpose == DIFF:
            self._show_diff_side(data)
            return
        self._state(snapshot.buffer_id).build = (snapshot, data)
        if self._is_current(snapshot.buffer_id):
            self._show_build(snapshot, data)
        self.buildShown.emit(data)

    def _show_build(self, snapshot: BuildSnapshot, data: dict[str, Any],
                    announce: bool = True) -> None:
        """Show a build: diagnostics in the pane and the editor, PTX and SASS per kernel."""
        editor = self.tabs.editor_of(snapshot.buffer_id)
        stale = editor is not None and editor.version != snapshot.version
        items = self.compile_pane.show_result(data, stale)
        if editor is not None:
            editor.set_diagnostics([d for d in items if same_file(d.file, snapshot.filename)])
        ptx = data.get("ptx") if isinstance(data.get("ptx"), str) else ""
        note = f"picked here; Build uses {self.runner.arch or 'the default arch'} from " \
            "Settings" if snapshot.arch else ""
        self.assembly_view.show_assembly(str(ptx), data.get("sass") or {}, snapshot.filename,
                                         data.get("ptx_functions") or {}, snapshot.text,
                                         arch=str(data.get("arch") or ""), note=note)
        self.assembly_buffer = snapshot.buffer_id
        if not announce:
            return
        ok = bool(data.get("ok"))
        self.report("info" if ok else "error", self.compile_pane.summary.text(),
                    "" if ok else "Click a diagnostic to jump to its line.", show=False)
        self.show_pane("compile")

    # -- the SASS diff ------------------------------------------------------------------------

    def open_sass_diff(self) -> None:
        """Build > SASS diff: the PTX / SASS pane in front with its Diff menu open."""
        self.show_pane("assembly")
        self.assembly_view.open_diff_menu()

    def other_tabs(self) -> list[tuple[str, str]]:
        """(buffer id, title) of the tabs other than the one whose build the pane shows."""
        documents = [self.tabs.document(editor) for editor in self.tabs.editors()]
        return [(d.buffer_id, self.tabs.distinct_title(d)) for d in documents
                if d.buffer_id != self.assembly_buffer]

    def diff_with(self, kind: str, target: str) -> None:
        """Compare the shown kernel's SASS with `target`: an architecture (built from the same
        text) or another tab (its last build, else its text built for the shown arch)."""
        kept = self._state(self.assembly_buffer).build
        if kept is None or not self.assembly_view.arch:
            self.report("info", "Nothing to compare", "Build the kernel first (Ctrl+B).")
            return
        snapshot, data = kept
        arch = self.assembly_view.arch
        if kind == DIFF_ARCH:
            self._diff_build(snapshot, snapshot.text, target, arch, target)
            return
        editor = self.tabs.editor_of(target)
        if editor is None:
            self.report("info", "That tab is closed", "Choose another one in the Diff menu.")
            return
        document = self.tabs.document(editor)
        title = self.tabs.distinct_title(document)
        left = f"{snapshot.filename} ({arch})"
        other = self._state(target).build
        if other is not None and other[1].get("ok") and other[1].get("sass"):
            other_arch = other[1].get("arch") or arch
            self.assembly_view.begin_diff(left, f"{title} ({other_arch})")
            self.assembly_view.finish_diff(other[1].get("sass") or {})
            return
        text, version = editor.snapshot()
        other_snapshot = BuildSnapshot(target, version, document.title, text)
        self._diff_build(other_snapshot, text, arch, left, f"{title} ({arch})",
                         document.path, document.untitled_name)

    def _diff_build(self, snapshot: BuildSnapshot, text: str, arch: str, left: str,
                    right: str, path: Path | None = None, untitled: str = "") -> None:
        """Build `text` for `arch` as the other side of a diff (the buffer's own build, and
        the Compile pane's report of it, stay as they are)."""
        editor = self.tabs.editor_of(snapshot.buffer_id)
        document = self.tabs.document(editor) if editor is not None else None
        path = path or (document.path if document else None)
        untitled = untitled or (document.untitled_name if document else snapshot.filename)
        spec = self.spec_panel.spec() if snapshot.buffer_id == self.assembly_buffer else None
        if not self.runner.build(text, snapshot.version, snapshot.buffer_id, path, untitled,
                                 spec, arch=arch, purpose=DIFF):
            self.report("info", *BUSY)
            return
        self.assembly_view.begin_diff(left, right)

    def _show_diff_side(self, data: dict[str, Any]) -> None:
        """The other side of a diff was built: compare, or say why not."""
        self.compile_pane.stages.finish()
        problem = "" if data.get("ok") else \
            f"That build failed: {data.get('message') or 'see its diagnostics'}"
        self.assembly_view.finish_diff(data.get("sass") or {}, problem)

    def go_to_diagnostic(self, line: int, column: int) -> None:
        """Jump to a diagnostic in the buffer that was built."""
        editor = self.tabs.editor_of(self.assembly_buffer) or self.tabs.current()
        if editor is not None:
            self.tabs.setCurrentWidget(editor)
            editor.go_to(line, column)

    def source_line_selected(self, line: int) -> None:
        """Highlight the instructions made from the caret's line; the line an instruction's
        click highlighted in the editor is plain again once the caret moves."""
        editor = self.tabs.current()
        if editor is not None:
            editor.highlight_lines([])
        if editor is not None and self.tabs.document(editor).buffer_id == self.assembly_buffer:
            self.assembly_view.select_source_line(line)

    def show_source_line(self, line: int) -> None:
        """An instruction was clicked: show and highlight its source line."""
        editor = self.tabs.editor_of(self.assembly_buffer)
        if editor is not None:
            self.tabs.setCurrentWidget(editor)
            editor.highlight_lines([line])
            editor.ensureVisibleEnforcePolicy(line - 1)

    # -- verify and bench ---------------------------------------------------------------------

    def ready_spec(self) -> Path | None:
        """The spec a run reads, or None after saying why there is none. Unsaved edits (buffers
        of the kernel's folder, the Spec pane's form) go into a private copy that the run reads:
        a run never writes the user's files (app/workspace/snapshot.py)."""
        editor = self.tabs.current()
        spec_path = self.spec_panel.path
        if editor is not None and spec_path is None:
            path = self.tabs.document(editor).path
            spec_path = spec_for(path) if path else None
            if spec_path is not None:
                self.spec_panel.load(spec_path)
        if spec_path is None:
            self.report("error", "No spec for this kernel", "A run needs a .toml spec beside the "
                        ".cu file; File > New from template creates both.")
            return None
        if self.spec_panel.is_modified() and self.spec_panel.validate_now():
            self.report("error", "The spec has problems", "Fix the fields listed in the Spec pane.")
            self.show_pane("spec")
            return None
        unsaved = {path: editor.text() for editor in self.tabs.modified_editors()
                   if (path := self.tabs.document(editor).path) is not None}
        writer = self.spec_panel.write_copy if self.spec_panel.is_modified() else None
        try:
            return self.runner.folders.prepare(spec_path, unsaved, writer)
        except (SnapshotError, OSError) as error:
            self.report("error", f"Could not prepare the run: {error}",
                        "Your files are untouched; saving the edits (Ctrl+S) runs the saved files.")
            return None

    def verify(self, sanitize: str | None = None) -> bool:
        """Verify the current kernel against its reference through the worker."""
        spec_path = self.ready_spec()
        if spec_path is None:
            return False
        if not self.runner.verify(spec_path, sanitize):
            self.report("info", *BUSY)
            return False
        what = f"Verifying {spec_path.name}" + (f" under {sanitize}" if sanitize else "")
        self._started(what + "\u2026")
        self.show_pane("results")
        return True

    def show_verdict(self, verdict: Verdict) -> None:
        """Keep a verdict for the buffer it ran for, and show it when that tab is active."""
        state = self._state(self.run_buffer)
        state.outcome = state.verdict = verdict
        self.report("info" if verdict.passed else "error",
                    f"Verification: {verdict.status.replace('_', ' ')} \u2014 {verdict.message}",
                    show=False)
        if self._is_current(self.run_buffer):
            self._show_verdict(verdict)
            self.show_pane("results")

    def _show_verdict(self, verdict: Verdict) -> None:
        """Show a verdict; compile errors also go to the editor of the buffer it ran for."""
        self.results_pane.show_verdict(verdict)
        # A verdict that compiled the text says what the compiler thinks of it now: its
        # diagnostics replace the editor's, and a clean compile clears old annotations.
        if verdict.diagnostics or verdict.status == Status.PASSED:
            ok = verdict.status != Status.COMPILE_ERROR
            items = self.compile_pane.show_result({"ok": ok, "diagnostics": verdict.diagnostics})
            editor = self.tabs.editor_of(self.run_buffer) or self.tabs.current()
            if editor is not None:
                editor.set_diagnostics(items)

    def bench(self, options: BenchOptions | None = None) -> bool:
        """Time the current kernel (with `options` when the user chose some; the engine's
        defaults otherwise)."""
        spec_path = self.ready_spec()
        if spec_path is None:
            return False
        if not self.runner.bench(spec_path, options):
            self.report("info", *BUSY)
            return False
        against = f" against {Path(options.vs).name}" if options and options.vs else ""
        self._started(f"Timing {spec_path.name}{against}\u2026")
        return True

    def size_variables(self) -> list[str]:
        """The spec's size variables (bench case first), for the sweep's choices."""
        spec = self.spec_panel.spec()
        if spec is None:
            return []
        names = [*spec.bench_case, *(name for case in spec.cases for name in case)]
        return list(dict.fromkeys(names))

    def bench_with_options(self) -> bool:
        """Ask for budget, cold or hot, a sweep and a baseline, then time with them."""
        folder = self.spec_panel.path.parent if self.spec_panel.path else None
        dialog = BenchOptionsDialog(self.size_variables(), folder, self.bench_options,
                                    self.dialog_parent)
        try:
            if not dialog.exec():
                return False
            self.bench_options = dialog.options()
        finally:
            dialog.deleteLater()
        return self.bench(self.bench_options)

    def show_bench(self, report: BenchReport) -> None:
        """Timing results go to the results pane and the charts."""
        # numpy (the charts' statistics): imported with the first timing result, not at startup.
        from app.engine.bench.chart_data import feed_charts

        state = self._state(self.run_buffer)
        state.outcome = report
        if self._is_current(self.run_buffer):
            self.results_pane.show_bench(report, state.verdict)
        # A refusal to time (no GPU) is told in the Results pane; the charts say it too.
        self.show_pane("charts" if report.status == Status.TIMED else "results")
        self._charts_made = True
        shown = feed_charts(self.charts(), report)
        self.report("info" if report.status == Status.TIMED else "error",
                    f"Timing: {report.status} \u2014 {report.message}", f"Charts: {shown}",
                    show=False)

    def show_failure(self, kind: str, message: str, hint: str) -> None:
        """A job without a result: cancelled, or the tool could not run."""
        if kind == "compile" and self.assembly_view.diff_pending():
            self.assembly_view.finish_diff({}, f"The build to compare with did not run: {message}")
        elif kind == "compile":
            self.compile_pane.show_failure(message)
        else:
            self._state(self.run_buffer).outcome = (message, hint)
            if self._is_current(self.run_buffer):
                self.results_pane.show_failure(message, hint)
        self.report("info" if message == "cancelled" else "error", f"{kind}: {message}", hint)

    # -- following the active tab -------------------------------------------------------------

    def _state(self, buffer_id: str) -> TabResults:
        """The kept results of a buffer."""
        return self.results.setdefault(buffer_id, TabResults())

    def _is_current(self, buffer_id: str) -> bool:
        """Whether the buffer is the active tab's (or no tab is open)."""
        editor = self.tabs.current()
        return editor is None or self.tabs.document(editor).buffer_id == buffer_id

    def _started(self, what: str) -> None:
        """A verification or timing started from the active tab."""
        editor = self.tabs.current()
        self.run_buffer = self.tabs.document(editor).buffer_id if editor is not None else ""
        state = self._state(self.run_buffer)
        state.outcome, state.version = what, editor.version if editor is not None else None
        self.results_pane.show_running(what)
        self.results_pane.mark_stale(False)
        self.show_pane("results")

    def follow(self, editor: CudaEditor | None) -> str:
        """Show the active tab's last build and run in the Compile, PTX / SASS and Results
        panes (or that there is none yet); returns a line for the status bar."""
        if editor is None:
            return ""
        document = self.tabs.document(editor)
        kept = self.results.get(document.buffer_id, TabResults())
        if kept.build is not None:
            self._show_build(*kept.build, announce=False)
        else:
            self.compile_pane.show_result({"ok": True, "diagnostics": []})
            self.compile_pane.summary.setText(f"{document.title} has not been built yet "
                                              "(Ctrl+B).")
            self.assembly_view.show_assembly("", {}, document.title)
            self.assembly_buffer = ""
        self.results_pane.mark_stale(self._stale(editor, kept))
        self._follow_charts(kept.outcome, document.title)
        return self._follow_outcome(kept, document.title)

    def _follow_charts(self, outcome: object, title: str) -> None:
        """The charts show the active tab's last timing, or say it has none."""
        if not self._charts_made:
            return
        if outcome is not None and hasattr(outcome, "samples_chart"):  # a BenchReport
            from app.engine.bench.chart_data import (
                feed_charts,  # numpy: loaded with the first report
            )

            feed_charts(self.charts(), outcome)  # type: ignore[arg-type]
            return
        self.charts().show_fed(set(), f"No timing for {title} yet: time it with Ctrl+F5.")

    @staticmethod
    def _stale(editor: CudaEditor, kept: TabResults) -> bool:
        """Whether the buffer's text changed since its last finished run started."""
        finished = kept.outcome is not None and not isinstance(kept.outcome, str | tuple)
        return finished and kept.version is not None and editor.version != kept.version

    def text_edited(self, editor: CudaEditor) -> None:
        """An edit in a tab: the active tab's results are marked stale once they no longer
        describe its text."""
        if editor is self.tabs.current():
            kept = self.results.get(self.tabs.document(editor).buffer_id, TabResults())
            self.results_pane.mark_stale(self._stale(editor, kept))

    def _follow_outcome(self, kept: TabResults, title: str) -> str:
        """The Results pane for a tab's last run; the status bar's line for it."""
        outcome = kept.outcome
        if isinstance(outcome, Verdict):
            self.results_pane.show_verdict(outcome)
            return f"{title}: verification {outcome.status.replace('_', ' ')}"
        if isinstance(outcome, tuple):
            self.results_pane.show_failure(*outcome)
            return f"{title}: {outcome[0]}"
        if isinstance(outcome, str):
            self.results_pane.show_running(outcome)
            return outcome
        if outcome is not None:
            self.results_pane.show_bench(outcome, kept.verdict)
            return f"{title}: timing {outcome.status}"
        self.results_pane.show_none(f"No results for {title} yet: verify with F5, time with "
                                    "Ctrl+F5.")
        return f"{title}: not run yet"
