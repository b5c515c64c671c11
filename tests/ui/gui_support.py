"""Helpers shared by the GUI tests (a module name of its own, unlike conftest)."""

from __future__ import annotations

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
