"""Helpers shared by the GUI tests (a module name of its own, unlike conftest)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from selftest_spec import write_selftest_spec

from ui.editor.prompter import Prompter


class ScriptedPrompter(Prompter):
    """Answers the window's questions from attributes and records what was asked."""

    def __init__(self) -> None:
        """Default answers: discard unsaved buffers, no paths, recover."""
        super().__init__(None)
        self.unsaved = "discard"
        self.save_path: str | None = None
        self.open_paths: list[str] = []
        self.recover = True
        self.line: int | None = None
        self.asked: list[tuple[str, Any]] = []
        self.filters_asked: list[str] = []

    def ask_unsaved(self, title: str) -> str:
        """The scripted answer to 'save changes?'."""
        self.asked.append(("unsaved", title))
        return self.unsaved

    def ask_save_path(self, suggestion: str) -> str | None:
        """The scripted save path."""
        self.asked.append(("save_path", suggestion))
        return self.save_path

    def ask_open_paths(self, folder: str, filters: str = "") -> list[str]:
        """The scripted files to open (the dialog's file types kept in `filters_asked`)."""
        self.asked.append(("open", folder))
        self.filters_asked.append(filters)
        return self.open_paths

    def ask_line(self, current: int, last: int) -> int | None:
        """The scripted line to go to."""
        self.asked.append(("line", (current, last)))
        return self.line

    def ask_recover(self, buffers: Any) -> bool:
        """The scripted answer to 'recover?'."""
        self.asked.append(("recover", [b.title for b in buffers]))
        return self.recover


# -- kernels run by the engine's selftest backend ---------------------------------------------

def selftest_kernel(folder: Path, entry: str, reference: str = "return {'c': a}",
                    bench: str = "") -> Path:
    """A kernel folder whose spec names a selftest behaviour; returns the .cu path."""
    return write_selftest_spec(folder, entry, reference=reference, bench=bench).with_suffix(".cu")


def processes_tagged(tag: str) -> list[int]:
    """Live processes whose environment carries this test's tag (the job and its worker)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"KS_TEST_TAG={tag}".encode() in environ and state != "Z":
            found.append(int(entry.name))
    return found
