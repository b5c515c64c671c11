"""compute-sanitizer around a worker: the command that wraps it, and its report as findings."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from app.base import system

TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
ERROR_EXIT = 86
_PREFIX = re.compile(r"^=+\s?")
_LOCATION = re.compile(r"\bat\s+(?:0x[0-9a-f]+\s+in\s+)?(?P<kernel>[^\s+(]+)[^\s]*"
                       r"(?:\s+in\s+(?P<file>[^\s:]+):(?P<line>\d+))?", re.IGNORECASE)
# The host backtrace of each report is about the worker's Python, not the user's kernel.
_HOST_LINES = ("Host Frame", "Saved host backtrace")
_HEADLINES = ("Invalid ", "Race reported", "Uninitialized", "Barrier", "Error:", "Program hit",
              "Unused memory", "Leaked", "Warning:", "Malloc/Free", "Misaligned")
_SUMMARY = re.compile(r"(ERROR|RACECHECK|INITCHECK|SYNCCHECK) SUMMARY:\s*(?P<rest>.*)")


@dataclass(frozen=True)
class SanitizerFinding:
    """One report from compute-sanitizer."""

    tool: str
    kind: str
    kernel: str
    location: str
    text: str

    def to_json(self) -> dict[str, Any]:
        """Plain data."""
        return asdict(self)


def executable() -> str | None:
    """compute-sanitizer's path, or None."""
    return system.find_tool("compute-sanitizer")


def wrapper(tool: str, log_file: Path) -> list[str]:
    """The command prefix that runs a worker under the sanitizer, reporting into log_file
    (its reports must not reach stdout, which carries the worker protocol)."""
    path = executable()
    if path is None:
        raise FileNotFoundError("compute-sanitizer not found")
    return [path, "--tool", tool, "--error-exitcode", str(ERROR_EXIT), "--print-limit", "100",
            "--log-file", str(log_file), "--target-processes", "all"]


def _strip(line: str) -> str:
    """A report line without the ===== prefix."""
    return _PREFIX.sub("", line.rstrip())


def _location(block: list[str]) -> tuple[str, str]:
    """(kernel, file:line) from the lines of one report."""
    for line in block:
        match = _LOCATION.search(line)
        if match and match.group("kernel"):
            where = f"{match.group('file')}:{match.group('line')}" if match.group("file") else ""
            return match.group("kernel"), where
    return "", ""


def parse_report(tool: str, text: str) -> list[SanitizerFinding]:
    """Each error block of a sanitizer log as a finding."""
    blocks: list[list[str]] = []
    for raw in text.splitlines():
        if not raw.startswith("="):
            continue
        line = _strip(raw)
        if line.startswith(_HEADLINES):
            blocks.append([line])
        elif blocks and raw.startswith("=========    ") and line and \
                not line.lstrip().startswith(_HOST_LINES):
            blocks[-1].append(line)
    findings = []
    for block in blocks:
        kernel, where = _location(block)
        kind = block[0].split(" at ")[0].rstrip(":. ")
        findings.append(SanitizerFinding(tool, kind, kernel, where, "\n".join(block)))
    return findings


def summary_line(text: str) -> str:
    """The sanitizer's own summary line, when present."""
    for raw in text.splitlines():
        match = _SUMMARY.search(raw)
        if match:
            return _strip(raw)
    return ""
