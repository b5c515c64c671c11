"""Errors of the assistant that users see: what happened, and what to do next."""

from __future__ import annotations

from pathlib import Path


class AssistError(Exception):
    """Something the assistant cannot do; `hint` says what the user can do about it."""

    def __init__(self, message: str, hint: str = "") -> None:
        """Keep the message and the hint apart so fronts can show them differently."""
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        """The message, then the hint on its own line when there is one."""
        return self.message + (f"\n{self.hint}" if self.hint else "")


class ModelMissing(AssistError):
    """The model folder or file does not exist (or was never prepared)."""


class ModelRefused(AssistError):
    """A model folder that is unsafe or changed: pickle weights, remote code, a failed manifest.

    `path` names the offending file, so the message can say which one.
    """

    def __init__(self, message: str, path: Path | None = None, hint: str = "") -> None:
        """Remember the offending file as well as the message."""
        super().__init__(message, hint)
        self.path = path


class PromptTooLong(AssistError):
    """The parts of a prompt that must not be cut do not fit the model's context."""


class GenerationFailed(AssistError):
    """The model raised while generating (out of memory, say)."""
