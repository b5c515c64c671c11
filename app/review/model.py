"""The results of review work as plain values: a variant's compile facts, timing rows with
intervals and ratios, a compare report, and a bundle check. They describe themselves as JSON and
parse it back, so the GUI receives typed objects from its review process. Nothing here imports
the engine's heavy parts: the GUI loads this at startup."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from app import __version__
from app.base import codec
from app.engine.verify.results import BAD_INPUT, FAILING, UNDECIDED, Status, Verdict

FORMAT = 1
MIX_CATEGORIES = ("memory", "arithmetic", "control", "other")


def duration(ms: float | None) -> str:
    """A duration given in milliseconds, in the unit that reads best ('-' when unknown)."""
    if ms is None:
        return "-"
    for limit, scale, unit in ((1000, 1e-3, "s"), (1, 1, "ms"), (1e-3, 1e3, "us")):
        if ms >= limit:
            return f"{ms * scale:.4g} {unit}"
    return f"{ms * 1e6:.4g} ns"


@dataclass
class CompileFacts:
    """One variant's compile: ok or why not, its resources, occupancy and instruction mix."""

    ok: bool
    message: str = ""
    arch: str = ""
    compiler: str = ""
    registers: int | None = None
    shared_static_bytes: int | None = None
    local_bytes: int | None = None
    spill_stores_bytes: int | None = None
    spill_loads_bytes: int | None = None
    block_size: int | None = None
    occupancy: float | None = None
    occupancy_limiter: str = ""
    instructions: int = 0
    mix: dict[str, int] = field(default_factory=dict)
    opcodes: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def mix_text(self) -> str:
        """'mem 12 · arith 40 · ctrl 5 · other 9'."""
        short = {"memory": "mem", "arithmetic": "arith", "control": "ctrl", "other": "other"}
        return " \u00b7 ".join(f"{short[c]} {self.mix.get(c, 0)}" for c in MIX_CATEGORIES) \
            if self.instructions else "-"


@dataclass
class LaunchRow:
    """One launch of a variant's sequence at one case (per-launch timing): its median with a
    95% interval, and its share of the sequence's median."""

    entry: str
    median_ms: float | None = None
    low_ms: float | None = None
    high_ms: float | None = None
    share: float | None = None


@dataclass
class TimingRow:
    """One variant at one timed case: its median with a 95% interval, and its time ratio to the
    baseline with the interval of that ratio (None where there is no baseline to divide by).
    For a spec of several launches the time is the whole sequence's (`sequence` names its
    launches' entries) and `launches` holds each one's part, when per-launch times were asked."""

    variant: str
    case: dict[str, int | float]
    status: str
    message: str = ""
    samples: int = 0
    median_ms: float | None = None
    low_ms: float | None = None
    high_ms: float | None = None
    ratio: float | None = None
    ratio_low: float | None = None
    ratio_high: float | None = None
    gbps: float | None = None
    sequence: list[str] = field(default_factory=list)
    launches: list[LaunchRow] = field(default_factory=list)

    def ratio_words(self) -> str:
        """'0.52x (0.50..0.55)', or '-' without a ratio."""
        if self.ratio is None:
            return "-"
        return f"{self.ratio:.3g}x ({self.ratio_low:.3g}..{self.ratio_high:.3g})"


# Reports of one-launch variants without per-launch times are written as they always were.
codec.shape(TimingRow, omit_empty=("sequence", "launches"))


@dataclass
class Timing:
    """What timing produced: rows, or why there are none, and where it ran."""

    # Defaults so that a report without timing (an empty table) still reads, as it did.
    status: str = ""
    note: str = ""
    rows: list[TimingRow] = field(default_factory=list)
    environment: dict[str, Any] = field(default_factory=dict)


codec.shape(Timing, order=("status", "note", "environment", "rows"))


@dataclass
class VariantResult:
    """One variant: where it is, its source, its compile and its verdict."""

    name: str
    spec_path: str
    source_name: str
    source: str
    compile: CompileFacts
    verdict: Verdict


def exit_code(statuses: list[Status], timing_status: str) -> int:
    """2 a bad spec or reference, 1 a kernel failed (verification or timing checks), 3 could
    not decide, 0 every variant passed (timed, where a GPU could time them)."""
    if any(s in BAD_INPUT for s in statuses):
        return 2
    if any(s in FAILING for s in statuses) or timing_status in FAILING:
        return 1
    if any(s in UNDECIDED for s in statuses):
        return 3
    return 0


@dataclass
class CompareReport:
    """Every variant's compile and verdict, the timing, and the baseline they are measured
    against."""

    baseline: str
    variants: list[VariantResult]
    timing: Timing
    cases: list[dict[str, int | float]] = field(default_factory=list)
    seeds: int = 0
    version: str = __version__

    @property
    def exit_code(self) -> int:
        """docs/spec.md's exit codes over every variant."""
        return exit_code([v.verdict.status for v in self.variants], self.timing.status)

    def variant(self, name: str) -> VariantResult:
        """The variant called `name`."""
        return next(v for v in self.variants if v.name == name)

    def summary(self) -> str:
        """One line: how many passed, and what timing said."""
        passed = [v.name for v in self.variants if v.verdict.passed]
        failed = [f"{v.name} ({v.verdict.status})" for v in self.variants if not v.verdict.passed]
        text = f"{len(passed)}/{len(self.variants)} variants passed"
        if failed:
            text += ": not " + ", ".join(failed)
        return text

    def to_json(self) -> dict[str, Any]:
        """Everything, JSON-ready (the codec's data, with the kind, summary and exit code)."""
        return codec.to_object(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CompareReport:
        """A report from to_json's data (from a compare process's --json, say); ValueError
        (a CodecError naming the field) when it is not one."""
        if data.get("kind") != "compare":
            raise ValueError("this is not a compare report")
        return codec.from_data(cls, data, "compare report")


def _compare_extras(report: CompareReport) -> dict[str, Any]:
    """What a compare report's JSON says beyond its fields."""
    return {"format": FORMAT, "kind": "compare", "summary": report.summary(),
            "exit_code": report.exit_code}


codec.shape(CompareReport, _compare_extras, ("format", "kind", "version", "baseline", "cases",
                                             "seeds", "variants", "timing", "summary",
                                             "exit_code"))


@dataclass(frozen=True)
class Item:
    """One claim beside what was obtained here; `differs` flags a difference, a note says
    why something could not be compared."""

    what: str
    claimed: str
    obtained: str
    differs: bool
    note: str = ""


@dataclass
class SpecCheck:
    """One bundled spec: what was claimed, what was obtained, and the items compared."""

    name: str
    member: str
    verdict: Verdict
    compile: CompileFacts
    timing: Timing
    claimed_status: str
    items: list[Item] = field(default_factory=list)

    @property
    def differences(self) -> list[Item]:
        """The items that differ."""
        return [i for i in self.items if i.differs]


def _spec_check_extras(check: SpecCheck) -> dict[str, Any]:
    """A spec check's JSON: the member as "spec", what was obtained in one table, and how many
    items differ."""
    return {"spec": check.member, "differences": len(check.differences),
            "obtained": {"verdict": check.verdict, "compile": check.compile,
                         "timing": check.timing}}


codec.shape(SpecCheck, _spec_check_extras, ("name", "spec", "claimed_status", "obtained",
                                             "items", "differences"))


@dataclass
class BundleCheck:
    """The whole re-check of a bundle."""

    path: str
    digest: str
    signer: str
    note: str
    made_in: dict[str, Any]
    here: dict[str, Any]
    specs: list[SpecCheck]
    files: dict[str, Any] = field(default_factory=dict)

    @property
    def claims_hold(self) -> bool:
        """Every claim was obtained again."""
        return not any(s.differences for s in self.specs)

    @property
    def exit_code(self) -> int:
        """2 a bundled spec or reference is unusable, 1 a claim differs or a kernel failed,
        3 something could not be obtained here, 0 every claim holds and every kernel passed."""
        statuses = [s.verdict.status for s in self.specs]
        if any(s in BAD_INPUT for s in statuses):
            return 2
        if not self.claims_hold or any(s in FAILING for s in statuses):
            return 1
        return 3 if any(s in UNDECIDED for s in statuses) else 0

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data (the codec's, in the shape `bundle verify --json` prints)."""
        return codec.to_object(self)


def _bundle_check_extras(check: BundleCheck) -> dict[str, Any]:
    """A bundle check's JSON beyond its fields: its kind, the path as "bundle", the signer
    (null when unsigned), whether the claims hold and the exit code."""
    return {"kind": "bundle-verify", "bundle": check.path, "signed_by": check.signer or None,
            "claims_hold": check.claims_hold, "exit_code": check.exit_code}


codec.shape(BundleCheck, _bundle_check_extras, (
    "kind", "bundle", "digest", "signed_by", "note", "claims_hold", "exit_code", "made_in",
    "here", "specs"))


class _Obtained(msgspec.Struct, frozen=True):
    """What a spec check obtained, as its JSON holds it."""

    verdict: Verdict
    compile: CompileFacts
    timing: Timing


class _SpecCheckData(msgspec.Struct, frozen=True):
    """A spec check as its JSON holds it (what is read back)."""

    name: str
    spec: str
    claimed_status: str
    obtained: _Obtained
    items: list[Item] = []

    def check(self) -> SpecCheck:
        """The spec check."""
        return SpecCheck(self.name, self.spec, self.obtained.verdict, self.obtained.compile,
                         self.obtained.timing, self.claimed_status, list(self.items))


class _BundleCheckData(msgspec.Struct, frozen=True):
    """A bundle check as `bundle verify --json` prints it (what is read back)."""

    bundle: str
    digest: str
    specs: list[_SpecCheckData]
    signed_by: str | None = None
    note: str | None = None
    made_in: dict[str, Any] = {}
    here: dict[str, Any] = {}


def check_from_json(data: dict[str, Any]) -> BundleCheck:
    """A BundleCheck from to_json's data (from a `bundle verify --json` process, say);
    ValueError (a CodecError naming the field) when the data is not one."""
    if data.get("kind") != "bundle-verify":
        raise ValueError("this is not a bundle check")
    read = codec.from_data(_BundleCheckData, data, "bundle check")
    return BundleCheck(read.bundle, read.digest, read.signed_by or "", read.note or "",
                       dict(read.made_in), dict(read.here), [s.check() for s in read.specs])
