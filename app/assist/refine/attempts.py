"""One attempt of a refine chain: what the model wrote, what the verifier said, and the feedback
the next round gets. Every attempt is kept in the run folder: the kernel beside a copy of the
spec and its reference, the full answer, and attempt.json (prompt hash, tokens, seconds,
verdict); prompts are kept once per hash in <run>/prompts/.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from app.assist.model.answer import Answer
from app.assist.model.session import Message
from app.base.fsutil import atomic_write_text
from app.compile.model import Severity
from app.engine.verify.results import Finding, RunResult, Status, Verdict


class AttemptOutcome(StrEnum):
    """The statuses an attempt can have besides a verdict's (Status): the model wrote no code,
    the user stopped it, or it was written but verification was not asked for."""

    NO_CODE = "no_code"
    STOPPED = "stopped"
    NOT_VERIFIED = "not_verified"


NO_CODE = AttemptOutcome.NO_CODE
STOPPED = AttemptOutcome.STOPPED
NOT_VERIFIED = AttemptOutcome.NOT_VERIFIED
# How much of a failure goes back to the model: enough to act on, little enough to fit.
MAX_DIAGNOSTICS = 6
MAX_FINDINGS = 2
ATTEMPT_FILE = "attempt.json"
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_SPACE = re.compile(r"\s+")


def prompt_hash(messages: list[Message]) -> str:
    """SHA-256 of a prompt's messages (the same prompt always has the same hash)."""
    text = json.dumps(messages, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def save_prompt(run_dir: Path, messages: list[Message]) -> str:
    """Keep a prompt once in <run>/prompts/<hash>.json; its hash."""
    digest = prompt_hash(messages)
    path = run_dir / "prompts" / f"{digest[:16]}.json"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(messages, indent=1, ensure_ascii=False) + "\n")
    return digest


def kernel_key(code: str) -> str:
    """A kernel's text without comments and with runs of spaces made one: two answers with the
    same key are the same kernel, whatever their comments and layout."""
    return _SPACE.sub(" ", _COMMENT.sub(" ", code)).strip()


def _source_line(source: str, line: int) -> str:
    """Line `line` (1-based) of the source, or '' when there is none."""
    lines = source.splitlines()
    return lines[line - 1].rstrip() if 0 < line <= len(lines) else ""


def diagnostics_feedback(diagnostics: list[dict[str, Any]], source: str) -> str:
    """Compiler messages, each followed by the line of the kernel it is about and a caret under
    the column, as a compiler shows them; errors first."""
    ordered = sorted(diagnostics, key=lambda d: d.get("severity") != Severity.ERROR)
    parts = []
    for item in ordered[:MAX_DIAGNOSTICS]:
        line, column = int(item.get("line") or 0), item.get("column")
        where = f"line {line}" + (f", column {column}" if column else "") if line else "compiler"
        text = f"{where}: {item.get('severity', Severity.ERROR)}: {item.get('message', '')}"
        code = _source_line(source, line)
        if code:
            text += f"\n    {line:>4} | {code}"
            if column:
                text += "\n         | " + " " * (int(column) - 1) + "^"
        parts.append(text)
    more = len(ordered) - MAX_DIAGNOSTICS
    return "\n".join(parts) + (f"\n({more} more messages)" if more > 0 else "")


def _finding_lines(finding: Finding) -> list[str]:
    """A finding's message, its first bad elements and its largest errors."""
    return finding.describe().splitlines()


def _first_failure(runs: list[RunResult]) -> RunResult | None:
    """The first run that did not pass."""
    return next((r for r in runs if not r.passed), None)


def verdict_feedback(verdict: Verdict) -> str:
    """The verdict in words for the model: the status and what it means, then the first
    failing case and seed with its first bad indices, expected and actual values."""
    lines = [f"Verdict: {verdict.status} - {verdict.message}"]
    failed = _first_failure(verdict.runs)
    if failed is not None:
        case = ", ".join(f"{k} = {v}" for k, v in failed.case.items())
        lines.append(f"First failing run: case {{{case}}}, seed {failed.seed}: {failed.status}"
                     + (f" ({failed.message})" if failed.message else ""))
        for finding in failed.findings[:MAX_FINDINGS]:
            lines += ["  " + line for line in _finding_lines(finding)]
        passed = sum(1 for r in verdict.runs if r.passed)
        lines.append(f"{passed} of {len(verdict.runs)} runs passed before it stopped")
    return "\n".join(lines)


@dataclass
class Attempt:
    """One round of one chain, as kept in attempt.json."""

    task: str
    arm: str
    chain: int
    round: int
    seed: int
    folder: str
    status: str = ""
    message: str = ""
    prompt_sha256: str = ""
    action: str = ""
    prompt_tokens: int = 0
    new_tokens: int = 0
    finish_reason: str = ""
    generate_s: float = 0.0
    batch: int = 1
    verify_s: float = 0.0
    skills: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    cuts: list[str] = field(default_factory=list)
    feedback: str = ""
    # A passing kernel's time on the GPU (ms a launch) when speed rounds timed it, and its words
    time_ms: float | None = None
    timing: str = ""
    # Answers of this round that repeated a kernel the chain had tried, and were asked again
    redraws: int = 0

    @property
    def passed(self) -> bool:
        """Whether the kernel of this attempt passed verification."""
        return self.status == Status.PASSED

    @property
    def compile_error(self) -> bool:
        """Whether the kernel did not compile."""
        return self.status == Status.COMPILE_ERROR

    @property
    def source_path(self) -> Path | None:
        """The kernel file of the attempt, when one was written."""
        sources = sorted(Path(self.folder).glob("*.cu"))
        return sources[0] if sources else None

    def record_answer(self, answer: Answer, batch: int) -> None:
        """Copy the generation's figures."""
        self.prompt_tokens, self.new_tokens = answer.prompt_tokens, answer.new_tokens
        self.finish_reason, self.generate_s = answer.finish_reason, answer.seconds
        self.batch = batch

    def save(self) -> None:
        """Write attempt.json into the attempt's folder."""
        folder = Path(self.folder)
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(folder / ATTEMPT_FILE, json.dumps(self.as_dict(), indent=1) + "\n")

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready description."""
        data = asdict(self)
        data["generate_s"], data["verify_s"] = round(self.generate_s, 3), round(self.verify_s, 3)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Attempt:
        """An attempt from as_dict's data (unknown keys are ignored)."""
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in names})


def load_attempt(folder: Path) -> Attempt | None:
    """The attempt kept in a folder, or None when there is none or it cannot be read."""
    try:
        return Attempt.from_dict(json.loads((folder / ATTEMPT_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None
