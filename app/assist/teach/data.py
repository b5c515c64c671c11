"""Building a training set (`kernel-studio teach data`): every example is a kernel that passed
verification on a spec that passed spec-check, none shows a held-out task, and each carries the
SHA-256 of its files. Sources: the shipped templates, folders the user allowed, proposals the
assistant kept, and the generator (app.assist.teach.sources, .generate); all are judged alike.
Examples are appended one whole line at a time (and synced), so a run that
is cancelled, or stops on a full disk, leaves every line before it complete and nothing else."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from app.assist.prompting.compact import canonical_kernel
from app.assist.prompting.compiler_tests import compiler_dependent
from app.assist.prompting.examples import TEMPLATES_DIR
from app.assist.tasks.suite import one_line
from app.assist.teach.candidate import Candidate
from app.assist.teach.guard import Guard
from app.base.fsutil import atomic_write_text
from app.engine.verify.results import Status
from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.speccheck import Strength, check_spec
from app.engine.verify.verifier import verify
from app.spec.model import Spec, SpecError, entry_name, load_spec

DATA_NAME = "train.jsonl"
SUMMARY_NAME = "summary.json"
# Give up when this many candidates per wanted example have not given enough.
TRIES_PER_EXAMPLE = 4

# Candidates of these families come from a source of that name; every other family is the
# generator's.
NAMED_SOURCES = ("template", "user", "proposal")
GENERATED = "generated"

Say = Callable[[str], None]


class DataError(Exception):
    """The training set could not be written (a full disk, say); what was written stays whole."""


@dataclass(frozen=True)
class Skipped:
    """Something a source found but could not make a candidate of (a spec that does not
    parse, a kernel that cannot be read): counted and named in the summary, never judged."""

    source: str
    name: str
    why: str


def source_of(family: str) -> str:
    """The source a candidate of this family came from."""
    return family if family in NAMED_SOURCES else GENERATED


@dataclass
class Summary:
    """What a run wrote and what it left out, and why."""

    written: int = 0
    families: Counter[str] = field(default_factory=Counter)
    failed_verify: int = 0
    weak_spec: int = 0
    not_canonical: int = 0
    compiler_dependent: int = 0
    refused_heldout: int = 0
    refused_kernelbench: int = 0  # of refused_heldout: those that showed a KernelBench problem
    refusals: list[str] = field(default_factory=list)
    cancelled: bool = False
    seconds: float = 0.0
    # Per source (template, user, proposal, generated): tried, written, dropped, refused,
    # unreadable.
    sources: dict[str, Counter[str]] = field(default_factory=dict)
    # "source entry: why" for every candidate dropped or refused, and every unreadable find.
    dropped: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)

    def count(self, source: str, what: str) -> None:
        """One more `what` for this source."""
        self.sources.setdefault(source, Counter())[what] += 1

    def as_dict(self) -> dict[str, Any]:
        """The summary as JSON-ready data."""
        return {"written": self.written, "families": dict(self.families),
                "dropped_failed_verification": self.failed_verify,
                "dropped_weak_spec": self.weak_spec,
                "dropped_not_canonical": self.not_canonical,
                "dropped_compiler_dependent": self.compiler_dependent,
                "refused_heldout": self.refused_heldout,
                "refused_kernelbench": self.refused_kernelbench,
                "refusals": self.refusals, "cancelled": self.cancelled,
                "seconds": round(self.seconds, 1),
                "sources": {name: dict(counts) for name, counts in sorted(self.sources.items())},
                "dropped": self.dropped, "unreadable": self.unreadable}


def sha256_text(text: str) -> str:
    """The SHA-256 of a file's text as written (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def leading_comment(text: str) -> str:
    """The comment lines at the top of a spec (templates describe themselves there)."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    return " ".join(line for line in lines if line)


def template_candidates(folder: Path = TEMPLATES_DIR) -> Iterator[Candidate]:
    """The shipped templates as candidates (their leading comment says what they compute)."""
    for spec_path in sorted(folder.glob("*/*.toml")):
        try:
            spec = load_spec(spec_path)
            text = spec_path.read_text("utf-8")
            kernel = spec.source_path.read_text("utf-8")
            reference = spec.reference_path.read_text("utf-8")
        except (SpecError, OSError, UnicodeDecodeError):
            continue
        yield Candidate("template", 0, spec.entry, leading_comment(text), kernel, reference,
                        [], (), (), [], extra={"spec_text": text, "spec_path": spec_path})


def record(candidate: Candidate) -> dict[str, Any]:
    """The JSON line of an example that passed."""
    spec_text = str(candidate.extra.get("spec_text", "")) or candidate.spec_text()
    files = {"spec": spec_text, "kernel": candidate.kernel, "reference": candidate.reference}
    line = {"family": candidate.family, "level": candidate.level, "entry": candidate.entry,
            "description": one_line(candidate.description), **files,
            "sha256": {name: sha256_text(text) for name, text in files.items()}}
    traits = candidate.extra.get("traits")
    return {**line, "traits": traits} if isinstance(traits, dict) else line


def append_line(path: Path, data: dict[str, Any]) -> None:
    """Append one JSON line and sync it; on failure cut the file back to where it was."""
    line = (json.dumps(data, ensure_ascii=False) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        try:
            if os.write(fd, line) != len(line):
                raise OSError("short write")
            os.fsync(fd)
        except OSError as error:
            os.ftruncate(fd, size)
            raise DataError(f"could not write {path}: {error}; the {path.name} lines before "
                            "this one are whole; free some space and run again") from error
    finally:
        os.close(fd)


def _spec_path(candidate: Candidate, work: Path) -> Path:
    """Where the candidate's spec lies: the template's own file, or a fresh folder in work."""
    path = candidate.extra.get("spec_path")
    return path if isinstance(path, Path) else candidate.write(work / candidate.entry)


def _first_line(message: str) -> str:
    """A message's first line, cut short (the summary names many of them)."""
    return (message.splitlines() or [""])[0][:300]


def _vouched(candidate: Candidate) -> bool | None:
    """Whether the builder vouches for the candidate's code running here: the generator's and
    the shipped templates', yes; a user's or a kept proposal's (extra["vouched"] None) only as
    app.isolation.trust decides (inside the sandbox, or content the user trusted)."""
    vouched = candidate.extra.get("vouched", True)
    return vouched if vouched is None else bool(vouched)


@dataclass
class Builder:
    """Judges candidates and appends the ones that pass."""

    out: Path
    guard: Guard
    engine: Engine
    backend: str = "cpu"
    summary: Summary = field(default_factory=Summary)

    def refuse(self, candidate: Candidate) -> str:
        """Why the guard keeps this candidate out ('' when it does not), counted."""
        path = candidate.extra.get("spec_path")
        spec_text = str(candidate.extra.get("spec_text", "")) or candidate.spec_text()
        folder = path.parent if isinstance(path, Path) else None
        why = self.guard.refuse(candidate.entry, candidate.description, candidate.kernel,
                                spec_text, folder)
        if not why and isinstance(path, Path) and self.guard.heldout.holds(path):
            why = "lies in a held-out task's folder"
        if why:
            self.summary.refused_heldout += 1
            self.summary.refusals.append(f"{candidate.entry}: {why}")
            if "KernelBench" in why:
                self.summary.refused_kernelbench += 1
        return why

    def judge(self, candidate: Candidate, work: Path) -> tuple[str, Candidate]:
        """('' when the candidate may enter, else why not (and counts it); the candidate with
        its kernel in the form a proposal's answer takes, which is what is verified)."""
        why = self.refuse(candidate)
        if why:
            return why, candidate
        test = compiler_dependent(candidate.kernel)
        if test:
            self.summary.compiler_dependent += 1
            return (f"it tests which compiler reads it ({test}): code no verification "
                    "compiles"), candidate
        canonical = _canonical(candidate, _spec_path(candidate, work), work)
        if canonical is None:
            self.summary.not_canonical += 1
            return "its kernel cannot start as a proposal's answer does", candidate
        candidate, spec = canonical
        vouched = _vouched(candidate)
        verdict = verify(spec, VerifyOptions(backend=self.backend, trusted=vouched), self.engine)
        if verdict.status != Status.PASSED:
            self.summary.failed_verify += 1
            return f"verification: {verdict.status}: {_first_line(verdict.message)}", candidate
        checked = check_spec(spec, vouched=vouched)
        if checked.status != Strength.STRONG:
            self.summary.weak_spec += 1
            return f"spec-check: {checked.status}: {_first_line(checked.message)}", candidate
        return "", candidate

    def take(self, candidate: Candidate, work: Path) -> str:
        """Judge one candidate and write it when it passes; the verdict in words."""
        source = source_of(candidate.family)
        self.summary.count(source, "tried")
        refused_before = self.summary.refused_heldout
        why, candidate = self.judge(candidate, work)
        if why:
            refused = self.summary.refused_heldout > refused_before
            self.summary.count(source, "refused" if refused else "dropped")
            self.summary.dropped.append(f"{source} {candidate.entry}: {why}")
            return why
        append_line(self.out / DATA_NAME, record(candidate))
        self.summary.written += 1
        self.summary.families[candidate.family] += 1
        self.summary.count(source, "written")
        return "passed"

    def skip(self, skipped: Skipped) -> None:
        """Count and name something a source could not read."""
        self.summary.count(skipped.source, "unreadable")
        self.summary.unreadable.append(f"{skipped.source} {skipped.name}: {skipped.why}")


def _canonical(candidate: Candidate, spec_path: Path, work: Path) -> tuple[Candidate, Spec] | None:
    """The candidate with its kernel in canonical form (compact.canonical_kernel) and the spec
    that verifies that very text; None when the kernel cannot take the form. A spec found in
    place (a template, a user's folder, a kept proposal) is copied first, to a folder of its
    own: those folders are never written to."""
    spec = load_spec(spec_path)
    kernel = canonical_kernel(spec, candidate.kernel)
    if kernel is None:
        return None
    if kernel == candidate.kernel:
        return candidate, spec
    if "spec_path" in candidate.extra:
        folder = Path(tempfile.mkdtemp(prefix=f"{entry_name(candidate.entry)}-", dir=work))
        shutil.copytree(spec_path.parent, folder, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".*", "__pycache__"))
        spec = load_spec(folder / spec_path.name)
    atomic_write_text(spec.source_path, kernel)
    return replace(candidate, kernel=kernel), spec


def build(out: Path, wanted: int, sources: Iterable[Candidate | Skipped], guard: Guard,
          say: Say = print, backend: str = "cpu") -> Summary:
    """Append up to `wanted` passing examples from sources to out/train.jsonl; the summary (also
    written to out/summary.json, on Ctrl+C too)."""
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="teach-", dir=out))
    started = time.monotonic()
    with Engine() as engine:
        builder = Builder(out, guard, engine, backend)
        try:
            _loop(builder, wanted, sources, work, say, started)
        except KeyboardInterrupt:
            builder.summary.cancelled = True
        finally:
            shutil.rmtree(work, ignore_errors=True)
            builder.summary.seconds = time.monotonic() - started
            _write_summary(out, builder.summary)
    return builder.summary


def _write_summary(out: Path, summary: Summary) -> None:
    """summary.json beside the data; on a full disk the run's own message says more than a
    second error would, so a failure here is left unsaid (the summary is printed anyway)."""
    try:
        atomic_write_text(out / SUMMARY_NAME, json.dumps(summary.as_dict(), indent=1) + "\n")
    except OSError:
        pass


def _loop(builder: Builder, wanted: int, sources: Iterable[Candidate | Skipped], work: Path,
          say: Say, started: float) -> None:
    """Take candidates until enough passed or too many were tried; what a source could not
    read is counted and named (not a try)."""
    tried = 0
    for candidate in sources:
        if builder.summary.written >= wanted or tried >= wanted * TRIES_PER_EXAMPLE:
            break
        if isinstance(candidate, Skipped):
            builder.skip(candidate)
            say(f"{candidate.source} {candidate.name}: not read: {candidate.why}")
            continue
        tried += 1
        try:
            verdict = builder.take(candidate, work)
        except OSError as error:  # its files could not be written where it is judged: a full
            raise DataError(f"could not write the example {candidate.entry} in {work}: "  # disk
                            f"{error}; the {DATA_NAME} lines written so far are whole; free "
                            "some space and run again") from None
        done = builder.summary.written
        rate = (time.monotonic() - started) / max(done, 1)
        say(f"[{done}/{wanted}] {candidate.family} {candidate.entry}: {verdict}; "
            f"about {rate * (wanted - done):.0f} s left")
