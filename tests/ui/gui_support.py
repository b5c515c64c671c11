"""Helpers shared by the GUI tests (a module name of its own, unlike conftest)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ui.prompter import Prompter


class ScriptedPrompter(Prompter):
    """Answers the window's questions from attributes and records what was asked."""

    def __init__(self) -> None:
        """Default answers: discard unsaved buffers, no paths, recover."""
        super().__init__(None)
        self.unsaved = "discard"
        self.save_path: str | None = None
        self.open_paths: list[str] = []
        self.recover = True
        self.asked: list[tuple[str, Any]] = []

    def ask_unsaved(self, title: str) -> str:
        """The scripted answer to 'save changes?'."""
        self.asked.append(("unsaved", title))
        return self.unsaved

    def ask_save_path(self, suggestion: str) -> str | None:
        """The scripted save path."""
        self.asked.append(("save_path", suggestion))
        return self.save_path

    def ask_open_paths(self, folder: str) -> list[str]:
        """The scripted files to open."""
        self.asked.append(("open", folder))
        return self.open_paths

    def ask_recover(self, buffers: Any) -> bool:
        """The scripted answer to 'recover?'."""
        self.asked.append(("recover", [b.title for b in buffers]))
        return self.recover


# -- kernels run by the engine's selftest backend ---------------------------------------------

SPEC = """[kernel]
source = "k.cu"
entry = "{entry}"

[[arg]]
name = "a"
kind = "in"
dtype = "float32"
shape = ["n"]

[[arg]]
name = "c"
kind = "out"
dtype = "float32"
shape = ["n"]

[[arg]]
name = "n"
kind = "scalar"
dtype = "int32"
value = "n"

[launch]
grid = ["cdiv(n, 256)"]
block = ["256"]

[reference]
python = "ref.py"

[verify]
cases = [{{ n = 1 }}, {{ n = 1025 }}]
seeds = 2
"""


BENCH = """
[bench]
case = { n = 4096 }
bytes = "8 * n"
flops = "n"
"""


def selftest_kernel(folder: Path, entry: str, reference: str = "return {'c': a}",
                    bench: str = "") -> Path:
    """A kernel folder whose spec names a selftest behaviour; returns the .cu path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "k.cu").write_text("// run by the selftest backend\n__global__ void k() {}\n")
    (folder / "ref.py").write_text(f"def reference(a, n):\n    {reference}\n")
    (folder / "k.toml").write_text(SPEC.format(entry=entry) + bench)
    return folder / "k.cu"


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
