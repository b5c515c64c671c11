"""Propose and refine from the GUI, as plain functions for the assistant's thread: the request is
a dict of plain values (the spec's path, the description, chains, rounds, the run folder), the
attempts go out as dicts with their kernel's text. The loop is app.assist.refine.proposing's, the
same
as `kernel-studio propose --rounds R`: every candidate goes through the verifier (sandboxed),
and nothing is applied to a buffer here."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

Emit = Callable[[object], None]


def attempt_info(attempt: Any) -> dict[str, Any]:
    """An attempt as the attempts view shows it: its record and its kernel's text."""
    info: dict[str, Any] = attempt.as_dict()
    path = attempt.source_path
    try:
        info["source"] = path.read_text(encoding="utf-8") if path else ""
    except (OSError, UnicodeDecodeError):
        info["source"] = ""
    return info


def run_refine(session: Any, request: dict[str, Any], stop: threading.Event, emit: Emit,
               token: Callable[[str], None]) -> dict[str, Any]:
    """Run the chains; a summary for the pane (how it ended, the kernel that passed)."""
    # The assistant's stack loads on the model's thread with the first request, not at startup.
    from app.assist.refine.proposing import ProposeSettings, propose_kernels

    settings = ProposeSettings(int(request.get("chains", 1)), int(request.get("rounds", 3)),
                               int(request.get("max_new_tokens", 512)),
                               speed_rounds=int(request.get("speed_rounds", 0)))
    made = propose_kernels(session, Path(request["spec"]), str(request.get("description", "")),
                           Path(request["run_dir"]), settings, stop,
                           lambda _chain, attempt: emit(attempt_info(attempt)),
                           lambda _row, text: token(text))
    passed = attempt_info(made.passed) if made.passed else None
    return {"action": "propose_rounds", "finish_reason": "stopped" if stop.is_set() and not
            passed else "done", "attempts": len(made.attempts), "passed": passed,
            "run_dir": str(request["run_dir"]), "code": passed["source"] if passed else None,
            "speedup": made.speedup,
            "code_complete": True, "warnings": []}
