"""`kernel-studio bundle verify`: after app.review.bundle has checked the bundle, unpack it into
a folder of its own, obtain every result again here (compile, verification on the claimed cases
and seeds, timing where a GPU is), and set each claim beside what was obtained, flagging every
difference.

Bundled kernels and references are code from elsewhere: verification runs them with
`trusted=None`, so app.isolation.trust decides (inside the sandbox, or not at all: "unverified").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.base import codec
from app.base.plaintext import printable
from app.engine.verify.results import UNDECIDED, RunResult, Verdict
from app.review.bundle import Bundle, BundleError, Claim
from app.review.environment import environment, gpu_names
from app.review.evaluate import RunOptions, time_specs, verify_on
from app.review.model import BundleCheck, CompileFacts, Item, SpecCheck, Timing
from app.review.profile import compile_facts
from app.review.text import case_text
from app.spec.model import Case, Spec, SpecError, load_spec

Progress = Callable[[str, float], None]
COMPILE_FIELDS = ("ok", "registers", "shared_static_bytes", "local_bytes", "spill_stores_bytes",
                  "spill_loads_bytes", "instructions")
# Times on another machine, or another day, move: a median within this factor of the claim
# agrees.
TIME_FACTOR = 1.25
# The seeds a claim's maker drew at random, checked again here: a few are enough.
MAX_CLAIMED_FRESH = 8


def _run_key(run: dict[str, Any] | RunResult) -> str:
    """(case, seed) of a run as a stable text."""
    case, seed = (run.case, run.seed) if isinstance(run, RunResult) else (run.get("case"),
                                                                          run.get("seed"))
    items = ", ".join(f"{k}={v}" for k, v in sorted(dict(case or {}).items()))
    return f"case {{{items}}} seed {seed}"


def _same(what: str, claimed: object, obtained: object, note: str = "") -> Item:
    """An item that differs when the two values do."""
    return Item(what, str(claimed), str(obtained), claimed != obtained, note)


def _verdict_items(claimed: dict[str, Any], verdict: Verdict) -> list[Item]:
    """The verdict and every run's status (a note when nothing could be decided here)."""
    if verdict.status in UNDECIDED:
        return [Item("verdict", str(claimed.get("status")), str(verdict.status), False,
                     "could not be checked here, which neither confirms nor contradicts it")]
    items = [_same("verdict", claimed.get("status"), str(verdict.status))]
    obtained = {_run_key(r): str(r.status) for r in verdict.runs}
    for run in claimed.get("runs") or []:
        key = _run_key(run)
        items.append(_same(key, run.get("status"), obtained.get(key, "not run")))
    return items


def _compile_items(claimed: dict[str, Any], facts: CompileFacts) -> list[Item]:
    """Resources, when both sides compiled for the same architecture with the same compiler."""
    if (claimed.get("arch"), claimed.get("compiler")) != (facts.arch, facts.compiler):
        return [Item("compile", f"{claimed.get('compiler')} for {claimed.get('arch')}",
                     f"{facts.compiler} for {facts.arch}", False,
                     "another architecture or compiler: resources not compared")]
    return [_same(f"compile: {name}", claimed.get(name), getattr(facts, name))
            for name in COMPILE_FIELDS]


def _timing_items(claimed: dict[str, Any], timing: Timing, same_gpu: bool) -> list[Item]:
    """Each claimed median beside the one obtained here."""
    rows = {str(r.case): r for r in timing.rows}
    items = []
    for row in claimed.get("rows") or []:
        what = f"median time at {case_text(dict(row.get('case') or {}))}"
        mine = rows.get(str(row.get("case")))
        before = row.get("median_ms")
        if not isinstance(before, int | float) or isinstance(before, bool) or not before > 0:
            before = None
        if mine is None or mine.median_ms is None or before is None:
            items.append(Item(what, f"{before} ms", "not timed", False,
                              f"not timed here ({timing.note})"))
            continue
        factor = mine.median_ms / before
        note = "" if same_gpu else "measured on another GPU"
        items.append(Item(what, f"{before:.4g} ms", f"{mine.median_ms:.4g} ms",
                          not 1 / TIME_FACTOR <= factor <= TIME_FACTOR, note))
    return items


def _spec_at(folder: Path, member: str, specs: list[str]) -> Spec:
    """The unpacked spec: only one of the bundle's own, inside `folder` (BundleError when it
    is another file or not a valid spec)."""
    root = folder.resolve()
    path = root.joinpath(*member.split("/")).resolve()
    if member not in specs or not path.is_relative_to(root) or not path.is_file():
        raise BundleError(f"a claim names the spec {printable(member, 80)!r}, which is not one of "
                          "the bundle's own specs; refused")
    try:
        return load_spec(path)
    except SpecError as error:
        raise BundleError(f"the bundled spec {member} is not valid: "
                          f"{printable(error, 2000)}") from None


@dataclass
class ClaimPlan:
    """What one claim is checked on here: the spec's own cases, with any the claim adds, and
    at least the spec's seeds, plus the seeds the claim drew when it was made (fresh seeds of
    this check are drawn by the engine on top); and how much of the spec the claim covers."""

    cases: list[Case]
    seeds: int
    claimed_fresh: tuple[int, ...]
    uncovered_cases: list[Case]
    claimed_seeds: int


def _same_case(one: Any, other: Any) -> bool:
    """Whether two cases give every variable the same value."""
    return dict(one) == dict(other)


def _check_cases(claim: Claim, spec: Spec, cases: list[Any]) -> None:
    """BundleError for a claimed case with a variable the spec does not know, or without one
    that every case of the spec defines (open_bundle has checked their types and limits)."""
    known = {key for case in spec.cases for key in case}
    needed = set.intersection(*(set(case) for case in spec.cases)) if spec.cases else set()
    for case in cases:
        unknown, missing = sorted(set(case) - known), sorted(needed - set(case))
        if unknown or missing:
            what = (f"a variable {unknown[0]!r} that the spec does not know" if unknown else
                    f"no value for {missing[0]!r}")
            raise BundleError(f"a claimed case of {claim.title} has {what}; refused")


def _claimed_fresh(claim: Claim, seeds: int) -> tuple[int, ...]:
    """The seeds of the claim's runs beyond its first `seeds` (those its maker drew at
    random), so they are checked here too; at most MAX_CLAIMED_FRESH, each a valid seed."""
    found: list[int] = []
    for run in claim.verdict.get("runs") or []:
        seed = run.get("seed") if isinstance(run, dict) else None
        if (isinstance(seed, int) and not isinstance(seed, bool) and seeds <= seed < 2**32
                and seed not in found):
            found.append(seed)
    return tuple(found[:MAX_CLAIMED_FRESH])


def _claim_options(claim: Claim, spec: Spec) -> ClaimPlan:
    """What the claim is checked on (ClaimPlan). The spec's own cases and seeds always run: a
    claim that names fewer (a maker who verified only {n=1}) covers less than the spec asks
    and is reported so, never taken as the whole truth. BundleError for unusable cases."""
    claimed_cases = list(claim.cases) if claim.cases else list(spec.cases)
    _check_cases(claim, spec, claimed_cases)
    claimed_seeds = claim.seeds if claim.seeds is not None and claim.seeds > 0 else spec.seeds
    extra = [c for c in claimed_cases if not any(_same_case(c, s) for s in spec.cases)]
    uncovered = [s for s in spec.cases if not any(_same_case(s, c) for c in claimed_cases)]
    run_seeds = max(claimed_seeds, spec.seeds)
    return ClaimPlan(list(spec.cases) + extra, run_seeds, _claimed_fresh(claim, run_seeds),
                     uncovered, claimed_seeds)


def _coverage_items(plan: ClaimPlan, spec: Spec) -> list[Item]:
    """A difference for each part of the spec the claim did not cover (cases, seeds)."""
    items = []
    if plan.uncovered_cases:
        total = len(spec.cases)
        covered = total - len(plan.uncovered_cases)
        missing = ", ".join(case_text(dict(c)) for c in plan.uncovered_cases[:8])
        items.append(Item("cases covered", f"{covered} of {total} of the spec's cases",
                          f"all {total} run here", True,
                          f"claim covers {covered} of {total} cases: it leaves out {missing}"))
    if plan.claimed_seeds < spec.seeds:
        items.append(Item("seeds covered", f"{plan.claimed_seeds} of {spec.seeds} seeds",
                          f"all {spec.seeds} run here", True,
                          f"claim covers {plan.claimed_seeds} of the spec's {spec.seeds} seeds"))
    return items


def _fresh_items(verdict: Verdict, claimed_status: str) -> list[Item]:
    """The seeds drawn here, which no maker could have known, and, for a claim of "passed"
    (which holds for every input, these included), each of their runs that failed."""
    if not verdict.fresh_seeds:
        return []
    fresh = ", ".join(map(str, verdict.fresh_seeds))
    items = [Item("fresh seeds", "(none: drawn here)", fresh, False,
                  f"seeds drawn at random for this check: {fresh}; replay one with "
                  f"kernel-studio verify SPEC --seed {verdict.fresh_seeds[0]}")]
    for run in verdict.runs:
        if claimed_status == "passed" and run.seed in verdict.fresh_seeds and not run.passed:
            items.append(Item(f"{_run_key(run)} (fresh seed)", "passed (claimed for any input)",
                              str(run.status), True, run.message[:300]))
    return items


def check_one(claim: Claim, folder: Path, options: RunOptions, same_gpu: bool,
              progress: Progress, specs: list[str]) -> SpecCheck:
    """Obtain one spec's results again and compare them with its claim."""
    member = claim.spec
    spec = _spec_at(folder, member, specs)
    plan = _claim_options(claim, spec)
    facts = compile_facts(spec, str(claim.compile.get("arch") or "") or options.arch,
                          options.compiler)
    # The engine draws this check's own fresh seeds (VerifyOptions.random_seeds).
    verdict = verify_on(spec, plan.cases, plan.seeds, options, progress,
                        extra_seeds=plan.claimed_fresh)
    name = claim.title
    claimed_timing = claim.timing
    wants_timing = bool(claimed_timing.get("rows")) and verdict.passed
    timing = time_specs([(name, spec)] if wants_timing else [], None, options, progress)
    claimed_verdict = claim.verdict
    check = SpecCheck(name, member, verdict, facts, timing, str(claimed_verdict.get("status")))
    check.items = (_coverage_items(plan, spec) + _verdict_items(claimed_verdict, verdict) +
                   _fresh_items(verdict, str(claimed_verdict.get("status"))) +
                   _compile_items(claim.compile, facts) +
                   _timing_items(claimed_timing, timing, same_gpu))
    return check


def verify_bundle(bundle: Bundle, folder: Path, options: RunOptions,
                  progress: Progress | None = None) -> BundleCheck:
    """Re-obtain every claim of an unpacked bundle (BundleError when its claims are unusable)."""
    progress = progress or (lambda _t, _f: None)
    claims = bundle.claims.results
    if not claims:
        raise BundleError("the bundle claims no results (claims.json has none): nothing to check")
    made_in = dict(bundle.claims.environment or bundle.manifest.environment)
    here = environment()
    same_gpu = bool(gpu_names(here)) and gpu_names(here)[:1] == gpu_names(made_in)[:1]
    for claim in claims:  # open_bundle checked them; every one again before any runs
        _claim_options(claim, _spec_at(folder, claim.spec, bundle.spec_members))
    specs = []
    for index, claim in enumerate(claims):
        progress(f"checking {printable(claim.title, 200)}", index / len(claims))
        specs.append(check_one(claim, folder, options, same_gpu, progress, bundle.spec_members))
    return BundleCheck(str(bundle.path), bundle.digest, bundle.signer, bundle.note, made_in,
                       here, specs, codec.to_object(bundle.manifest)["files"])


def describe_check(check: BundleCheck) -> str:
    """The re-check for the terminal: claims beside results, differences marked."""
    signed = f"signed by key {check.signer}" if check.signer else "not signed"
    lines = [f"bundle {check.path} (manifest SHA-256 {check.digest[:16]}..., {signed})",
             f"note: {check.note}" if check.note else "",
             "claims hold" if check.claims_hold else
             f"CLAIMS DIFFER: {sum(len(s.differences) for s in check.specs)} difference(s)"]
    for spec in check.specs:
        lines += ["", f"{spec.name}: claimed {spec.claimed_status}, obtained here "
                      f"{spec.verdict.status} ({spec.verdict.backend or 'no backend'})"]
        shown = [i for i in spec.items if i.differs or i.note]
        for item in shown:
            mark = "DIFFERS" if item.differs else "note"
            extra = f"  ({item.note})" if item.note else ""
            lines.append(f"  {mark:<7} {item.what}: claimed {item.claimed}, here "
                         f"{item.obtained}{extra}")
        agreeing = len(spec.items) - len(shown)
        lines.append(f"  same    {agreeing} item(s) (verdict, each run, compile facts, timing)")
        if not spec.verdict.passed:
            lines.append(f"  here: {spec.verdict.message}")
    # Everything from the bundle (note, names, claimed values) is printed with its control
    # characters escaped: no escape sequence of the maker's can rewrite what the reviewer sees.
    return "\n".join(printable(line) for line in lines if line is not None).strip()

