"""Verdicts and runs in the Results pane's words (no Qt): the details of a run, its message
column, its time column, and the engine's command-line phrasing said the way the GUI names
things.
"""

from __future__ import annotations

import math
import re

from app.engine.verify.results import (
    PLAIN_WORDS,
    START_WORDS,
    Finding,
    RunResult,
    Status,
    Verdict,
)

# The engine speaks to the command line; the window has menus for the same things.
GUI_PHRASES: tuple[tuple[str, str], ...] = (
    (r"--sanitize needs an NVIDIA GPU: the cpu backend has no sanitizer",
     "memcheck and racecheck need an NVIDIA GPU (they run compute-sanitizer); this machine "
     "runs kernels in CPU emulation"),
    (r"--sanitize", "Verify under memcheck or racecheck"),
    (r"--backend[ =](\w+)", r"Run > Backend > \1"),
    (r"--backend", "Run > Backend"),
    (r"--timeout", "the time limit (Settings)"),
    (r"--vs", "a baseline (Bench with options)"),
    (r"`kernel-studio (trust [^`]+)`", r"`kernel-studio \1` in a terminal"),
)
UNBOUNDED = "unbounded (an Inf or NaN where the reference has a finite value)"


def gui_words(text: str) -> str:
    """The engine's message with command-line options named as the window names them."""
    for pattern, replacement in GUI_PHRASES:
        text = re.sub(pattern, replacement, text)
    return text


def case_text(case: dict[str, int | float]) -> str:
    """n=1000, m=3."""
    return ", ".join(f"{k}={v}" for k, v in case.items())


def error_size(value: float | None) -> str:
    """One largest error: a number, or what an infinite one means."""
    if value is None:
        return "not measured"
    if math.isinf(value) or math.isnan(value):
        return UNBOUNDED
    return f"{value:.3g}"


def largest_errors(finding: Finding) -> str:
    """'largest errors: absolute 0.5, relative 0.25', one unbounded clause when both are."""
    absolute, relative = error_size(finding.max_abs_error), error_size(finding.max_rel_error)
    if absolute == relative == UNBOUNDED:
        return f"largest error: {UNBOUNDED}"
    return f"largest errors: absolute {absolute}, relative {relative}"


def finding_text(finding: Finding) -> str:
    """A finding in words: buffer, message, what its kind means, how many elements are wrong,
    first bad indices with values, largest errors."""
    lines = [f"{finding.buffer}: {gui_words(finding.message)}"]
    words = PLAIN_WORDS.get(finding.kind)
    if words:
        lines.append(f"    ({words})")
    if finding.count and finding.total:  # guard zones count bytes, of no total
        lines.append(f"    {finding.count} of {finding.total} elements are wrong")
    for index, want, got in zip(finding.first_indices, finding.expected, finding.actual,
                                strict=False):
        lines.append(f"    at {tuple(index)}: expected {want}, got {got}")
    if finding.max_abs_error is not None or finding.max_rel_error is not None:
        lines.append(f"    {largest_errors(finding)}")
    return "\n".join(lines)


def run_message(run: RunResult) -> str:
    """The message column: the run's own message, else its first finding's, else what its
    status means (a passed run says nothing)."""
    if run.message:
        return gui_words(run.message)
    if run.findings:
        first = run.findings[0]
        return f"{first.buffer}: {gui_words(first.message)}"
    return "" if run.passed else PLAIN_WORDS.get(run.status, "")


def seed_text(seed: int, fresh: list[int]) -> str:
    """The seed column: a seed drawn at random for this run says so."""
    return f"{seed} (fresh)" if seed in fresh else str(seed)


def run_seconds(run: RunResult, time_limit: float | None) -> str:
    """The seconds column: the kernel's time, or the limit a killed kernel ran into."""
    if run.status == Status.TIMEOUT:
        return f"> {time_limit:g} (limit)" if time_limit else "over the limit"
    return f"{run.seconds:.3f}"


def run_details(run: RunResult, time_limit: float | None = None) -> str:
    """Everything known about one run, in plain words."""
    lines = [f"case {{{case_text(run.case)}}}, seed {run.seed}: {run.status}"]
    if PLAIN_WORDS.get(run.status):
        lines.append(PLAIN_WORDS[run.status])
    if not run.passed and run.start in START_WORDS:
        lines.append(f"In this run the {START_WORDS[run.start]}.")
    if run.status == Status.TIMEOUT and time_limit:
        lines.append(f"The time limit is {time_limit:g} s per launch (Settings > Time limit).")
    if run.message:
        lines.append(gui_words(run.message))
    lines.extend(finding_text(f) for f in run.findings)
    return "\n".join(lines)


def sanitizer_text(verdict: Verdict) -> str:
    """compute-sanitizer's reports, one line each (the engine keeps them as plain records)."""
    return "\n".join(f"{s.get('tool')}: {s.get('kind')} in {s.get('kernel')} at "
                     f"{s.get('location') or 'unknown line'}" for s in verdict.sanitizer)


def first_failure(verdict: Verdict) -> int:
    """The row of the first run that did not pass (-1 when every run passed)."""
    return next((row for row, run in enumerate(verdict.runs) if not run.passed), -1)


def summary_text(verdict: Verdict) -> str:
    """The details shown when no run is selected: sanitizer findings, or a short all-clear."""
    if verdict.sanitizer:
        return sanitizer_text(verdict)
    return "Every run passed." if verdict.runs else ""
