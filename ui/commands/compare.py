"""Compare and open-bundle from the window: the open kernels (or a spec from disk, or a
kernel's unsaved edits beside its saved file) go to `kernel-studio compare` in a process of its
own; a bundle goes to `kernel-studio bundle verify`; results come back to the Compare dock.

CompareCommands receives what it works with, never the window: the editor tabs, the review
pane, the message log's report, a way to bring a pane forward and to ask for files.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QWidget

from app.review.bundle import Bundle, BundleError, open_bundle
from app.review.decide import (
    DecisionError,
    diff_with_local,
    member_text,
    record_decision,
    source_members,
)
from app.review.model import BundleCheck, CompareReport
from app.spec.files import spec_for
from app.workspace.orphans import session_prefix
from ui.compare.job import ReviewJob
from ui.compare.picker import Candidate, ComparePicker
from ui.compare.review_pane import ReviewPane
from ui.editor.prompter import BUNDLE_FILTER, SOURCE_FILTER, SPEC_FILTER
from ui.editor.tabs import EditorTabs
from ui.message_log import Reporter

UNSAVED = "unsaved"
# A kernel's folder is copied whole for an unsaved compare; a folder larger than this is not a
# kernel's folder.
MAX_COPY_FILES = 500
MAX_COPY_BYTES = 64 << 20


def copy_folder(source: Path, target: Path) -> None:
    """Copy a kernel's folder (its spec, kernel, reference, headers), hidden files and caches
    left out; OSError when it is too large to be one kernel's folder."""
    files = [p for p in source.rglob("*") if p.is_file() and not any(
        part.startswith(".") or part == "__pycache__" for part in p.relative_to(source).parts)]
    if len(files) > MAX_COPY_FILES or sum(p.stat().st_size for p in files) > MAX_COPY_BYTES:
        raise OSError(f"{source} holds more than {MAX_COPY_FILES} files or "
                      f"{MAX_COPY_BYTES >> 20} MiB: put the kernel in a folder of its own")
    for path in files:
        destination = target / path.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)


class CompareCommands(QObject):
    """Compare kernels, open bundles, show what comes back."""

    def __init__(self, tabs: EditorTabs, pane: ReviewPane, *, report: Reporter,
                 show_pane: Callable[[str], None], ask_paths: Callable[[str], list[str]],
                 parent: QWidget) -> None:
        """Work on these tabs and this pane; `ask_paths(filters)` asks the user for files."""
        super().__init__(parent)
        self.tabs, self.pane, self.report = tabs, pane, report
        self.show_pane, self.ask_paths = show_pane, ask_paths
        self.dialog_parent = parent
        self.job = ReviewJob(self)
        self._scratch: Path | None = None
        self._bundle: Bundle | None = None  # the bundle on the bundle page

    def wire(self) -> None:
        """Results and failures of the job; Cancel in the pane."""
        self.job.finished.connect(self._shown)
        self.job.failed.connect(self._failed)
        self.pane.cancelRequested.connect(self.job.cancel)
        self.pane.bundle.diffRequested.connect(self.diff_bundled)
        self.pane.bundle.decisionRequested.connect(self.decide)

    def candidates(self) -> list[Candidate]:
        """Every open kernel with a spec, as its tab is titled; a modified one twice: its
        saved files and its unsaved text."""
        found = []
        for editor in self.tabs.editors():
            path = self.tabs.document(editor).path
            spec = spec_for(path) if path else None
            if spec is None:
                continue
            label = self.tabs.tabText(self.tabs.indexOf(editor)).rstrip(" \u25cf")
            found.append(Candidate(label, spec))
            if editor.is_modified():
                found.append(Candidate(f"{label} (unsaved edits)", spec, editor.text(), path))
        return found

    def compare(self) -> bool:
        """Ask what to compare, then compare it."""
        picker = ComparePicker(self.candidates(), lambda: self.ask_paths(SPEC_FILTER),
                               self.dialog_parent)
        try:
            if not picker.exec():
                return False
            chosen, baseline = picker.chosen()
        finally:
            picker.deleteLater()
        return self.compare_candidates(chosen, baseline)

    def compare_candidates(self, chosen: list[Candidate], baseline: int = 0) -> bool:
        """Start a compare of these candidates (the baseline by index)."""
        if len(chosen) < 2:
            self.report("info", "Choose two or more kernels to compare")
            return False
        if self.job.running():
            self.report("info", "A compare or bundle check is already running",
                        "Wait for it, or Cancel it in the Compare pane.")
            return False
        specs = self._materialise(chosen)
        if specs is None:
            return False
        arguments = ["compare", *map(str, specs), "--baseline", str(specs[baseline])]
        self.job.start("compare", arguments)
        self.pane.compare.show_running([c.label for c in chosen])
        self._started("compare")
        return True

    def _materialise(self, chosen: list[Candidate]) -> list[Path] | None:
        """Spec paths to compare: unsaved text goes into a scratch copy of its kernel's files
        (None after reporting when one cannot be made)."""
        self._drop_scratch()
        specs = []
        for number, candidate in enumerate(chosen):
            if candidate.text is None:
                specs.append(candidate.spec)
                continue
            try:
                specs.append(self._scratch_copy(candidate, number))
            except (OSError, ValueError) as error:
                self.report("error", f"Could not prepare {candidate.label}: {error}",
                            "Save the file and compare it with its earlier copy instead.")
                return None
        return specs

    def _scratch_copy(self, candidate: Candidate, number: int) -> Path:
        """The candidate's spec and files copied into a private folder, the kernel replaced by
        the editor's text."""
        home = candidate.spec.parent
        if candidate.source is None or not candidate.source.is_relative_to(home):
            raise ValueError("its kernel is not in its spec's folder")
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix=session_prefix("compare")))
        folder = self._scratch / str(number) / UNSAVED
        copy_folder(home, folder)
        (folder / candidate.source.relative_to(home)).write_text(candidate.text or "",
                                                                 encoding="utf-8")
        return folder / candidate.spec.name

    def _drop_scratch(self) -> None:
        """Remove the last compare's scratch copies."""
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def open_bundle(self, path: str | None = None) -> bool:
        """Check a review bundle (asking for it when not given) and re-run it here."""
        if path is None:
            picked = self.ask_paths(BUNDLE_FILTER)
            if not picked:
                return False
            path = picked[0]
        if self.job.running():
            self.report("info", "A compare or bundle check is already running")
            return False
        self.job.start("bundle", ["bundle", "verify", path])
        self.pane.bundle.show_running(path)
        self._started("bundle")
        return True

    def _started(self, page: str) -> None:
        """Bring the pane forward on the right page, with Cancel."""
        self.pane.show_page(page)
        self.pane.set_running(True)
        self.show_pane("compare")

    def _shown(self, result: CompareReport | BundleCheck) -> None:
        """A result: to its page."""
        self.pane.set_running(False)
        if isinstance(result, CompareReport):
            self.pane.compare.show_report(result)
            self.report("info", f"Compare: {result.summary()}")
        else:
            self.pane.bundle.show_check(result)
            self._show_sources(Path(result.path))
            self.report("info" if result.claims_hold else "error",
                        f"Bundle {Path(result.path).name}: "
                        + ("every claim holds" if result.claims_hold else "claims differ"),
                        show=False)
        self.show_pane("compare")

    def _show_sources(self, path: Path) -> None:
        """The checked bundle's sources on its page (read again here: the check ran in a
        child; reading checks the manifest and every sum again, and runs nothing)."""
        try:
            bundle = open_bundle(path)
        except BundleError as error:
            self.pane.bundle.show_failure(str(error))
            return
        self._bundle = bundle
        self.pane.bundle.show_sources({name: member_text(bundle, name)
                                       for name in source_members(bundle)})

    def diff_bundled(self, name: str) -> bool:
        """Diff a bundled file against a local copy the user picks."""
        picked = self.ask_paths(SOURCE_FILTER)
        if not picked or self._bundle is None:
            return False
        try:
            diff = diff_with_local(self._bundle, name, Path(picked[0]))
        except DecisionError as error:
            self.report("error", "Cannot diff with that file", str(error))
            return False
        self.pane.bundle.show_diff(name, diff)
        return True

    def decide(self, accepted: bool, note: str) -> bool:
        """Record the reviewer's decision on the bundle shown in the audit log."""
        if self._bundle is None:
            return False
        try:
            bundle, entry = record_decision(self._bundle.path, accepted, note)
        except DecisionError as error:
            self.pane.bundle.show_decision(f"Not recorded: {error}")
            self.report("error", "The decision was not recorded", str(error))
            return False
        word = "accepted" if accepted else "rejected"
        signed = f"signed by key {entry['key_id']}" if "signature" in entry else "not signed"
        self.pane.bundle.show_decision(f"{word.capitalize()}: audit entry {entry['seq']} "
                                       f"(manifest {bundle.digest[:16]}\u2026, {signed}).")
        self.report("info", f"Bundle {bundle.path.name} {word}",
                    "Recorded in the audit log (kernel-studio audit verify checks it).")
        return True

    def _failed(self, message: str) -> None:
        """No result: say why on the page that waited for it."""
        self.pane.set_running(False)
        page = self.pane.compare if self.job.kind == "compare" else self.pane.bundle
        page.show_failure(message)
        self.report("info" if message == "cancelled" else "error",
                    f"{self.job.kind}: {message}")

    def shutdown(self) -> None:
        """Stop a running job and remove scratch copies."""
        self.job.cancel()
        self._drop_scratch()
