"""One timed case: inputs and expected outputs for each variant, the worker's `bench` request,
the checks of the first and last timed samples against the reference (GPU MODE style: a kernel
cannot be fast by skipping work after its first launch), and the figures.

A variant of a spec of several launches is the sequence of its launches on buffers they share
(one file per buffer, named by every launch that takes it): a sample is the whole sequence, and
its bytes and flops ([bench]) are the sequence's. Per-launch times, when asked, come with it."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from app.base import codec
from app.engine.bench.reports import BenchPoint, Comparison, LaunchTiming, VariantTiming
from app.engine.bench.roofline import Flag, speedup_flag, throttle_flag, throughput
from app.engine.bench.stats import bootstrap_ratio, summarize
from app.engine.verify import buffers
from app.engine.verify.reference import expected_outputs
from app.engine.verify.results import RunResult, Status
from app.engine.verify.runs import (
    Prepared,
    RunContext,
    VerifyOptions,
    check_images,
    fault_status,
    run_status,
)
from app.engine.worker.client import WorkerFault, WorkerHandle
from app.engine.worker.protocol import (
    Argument,
    BenchRequest,
    BenchVariant,
    BufferItem,
    KernelRef,
    Launch,
    ScalarItem,
)
from app.engine.worker.timing import TimingPlan
from app.spec import expr
from app.spec.cases import Resolved, ResolvedLaunch, resolve
from app.spec.model import Case, LaunchSpec, Spec

Array = np.ndarray[Any, Any]
BENCH_SEED = 0
# Timed samples rotate between input sets of different seeds, each in its own buffers, and the
# checks cover every set: a kernel that remembers a result (by pointer, or not at all) and
# replays it gets the other set's answer wrong.
INPUT_SEEDS = (BENCH_SEED, BENCH_SEED + 1)
TRANSFER_SECONDS_PER_GIB = 4.0
SLACK_SECONDS = 30.0


@dataclass
class Variant:
    """A spec ready to be timed: its name in reports, the compiled kernel, the reference."""

    name: str
    spec: Spec
    prepared: Prepared
    reference: Callable[..., Any]


@dataclass
class Staged:
    """One variant at one case: its data on disk and its part of the bench request."""

    variant: Variant
    resolved: Resolved
    inputs: dict[str, Array]
    expected: dict[str, Array]
    last_paths: dict[str, Path]
    first_paths: dict[str, Path]
    request: BenchVariant
    salt: bytes
    seed: int = BENCH_SEED

    def files(self) -> list[Path]:
        """Every file this staging wrote (or the worker will)."""
        return [*self.last_paths.values(), *self.first_paths.values()]


@dataclass
class PointContext:
    """What every case of one bench shares."""

    handle: WorkerHandle
    folder: Path
    plan: TimingPlan
    options: VerifyOptions
    helpers_path: Path | None
    cancel: threading.Event | None
    per_launch: bool = False


def evaluate_optional(text: str | None, case: Case) -> float | None:
    """A [bench] bytes or flops expression for a case; None when absent or not computable."""
    if not text:
        return None
    try:
        return float(expr.evaluate(text, case))
    except expr.ExprError:
        return None


def stage_sets(variants: list[Variant], case: Case, folder: Path) -> list[list[Staged]]:
    """Every variant staged once per input seed: result[variant][set]."""
    return [[stage(v, case, folder, i, seed) for seed in INPUT_SEEDS]
            for i, v in enumerate(variants)]


def stage(variant: Variant, case: Case, folder: Path, index: int,
          seed: int = BENCH_SEED) -> Staged:
    """Inputs (seeded), the reference's expected outputs, and the buffer files of a variant.

    Raises CaseError for an impossible case and ReferenceError for a failing reference."""
    spec = variant.spec
    resolved = resolve(spec, case)
    inputs = buffers.generate_inputs(spec, resolved, seed, 0)
    expected = expected_outputs(variant.reference, spec, resolved, inputs)
    last: dict[str, Path] = {}
    first: dict[str, Path] = {}
    salt = buffers.new_salt()
    for arg in spec.args:  # one file per buffer, whichever launches take it
        if arg.is_buffer:
            last[arg.name] = folder / f"bench-{index}-{seed}-{arg.name}.bin"
            first[arg.name] = folder / f"bench-{index}-{seed}-{arg.name}.first.bin"
            buffers.image_for(arg, resolved, inputs, buffers.GUARD_BYTES, salt).tofile(
                last[arg.name])
    launches = tuple(_launch(variant, resolved, launch, shape, last, first)
                     for launch, shape in zip(spec.launches, resolved.launch_shapes(),
                                              strict=True))
    request = BenchVariant.of_launches(launches)
    return Staged(variant, resolved, inputs, expected, last, first, request, salt, seed)


def _launch(variant: Variant, resolved: Resolved, launch: LaunchSpec, shape: ResolvedLaunch,
            last: dict[str, Path], first: dict[str, Path]) -> Launch:
    """One launch of a variant's sequence: its kernel, shape and arguments, each buffer the
    file every launch naming it shares."""
    items: list[Argument] = []
    for arg in variant.spec.launch_args(launch):
        if arg.is_buffer:
            items.append(BufferItem(str(last[arg.name]), buffers.GUARD_BYTES, arg.dtype,
                                    first=str(first[arg.name])))
        else:
            items.append(ScalarItem(resolved.scalars[arg.name], arg.dtype))
    prepared = variant.prepared
    kernel = KernelRef(prepared.symbol_of(launch.entry), launch.entry,
                       cubin_path=str(prepared.cubin_path) if prepared.cubin_path else None)
    return Launch.of(kernel, shape.grid, shape.block, shape.shared_bytes, tuple(items))


def same_inputs(sets: list[list[Staged]]) -> bool:
    """Whether every variant got byte-identical inputs under the same names, set by set."""
    return all(_same_inputs([variant[k] for variant in sets]) for k in range(len(sets[0])))


def _same_inputs(staged: list[Staged]) -> bool:
    """Whether these stagings (one per variant) hold byte-identical inputs."""
    base = staged[0].inputs
    for other in staged[1:]:
        if set(other.inputs) != set(base) or any(
                base[k].dtype != other.inputs[k].dtype or base[k].shape != other.inputs[k].shape
                or not np.array_equal(base[k].view(np.uint8), other.inputs[k].view(np.uint8))
                for k in base):
            return False
    return True


def slot_plan(plan: TimingPlan) -> TimingPlan:
    """The plan for one launch slot: each variant's budget and sample bounds shared among its
    input sets, so rotating inputs costs no extra time."""
    sets = len(INPUT_SEEDS)
    return replace(plan, budget_ms=plan.budget_ms / sets,
                   min_samples=max(1, math.ceil(plan.min_samples / sets)),
                   max_samples=max(1, math.ceil(plan.max_samples / sets)))


def request_timeout(ctx: PointContext, staged: list[Staged]) -> float:
    """Seconds the parent waits for a bench reply before it kills the worker: the plan's time,
    and a launch time limit for every launch of the warm-up and of the last samples."""
    count = len(staged)
    launches = sum(len(s.request.launches) for s in staged)
    gib = sum(s.resolved.nbytes(s.variant.spec) for s in staged) / 2**30
    return (ctx.plan.hard_limit_ms(count) + ctx.plan.warmup_ms * count) / 1000.0 + \
        (2 * launches + 2) * ctx.options.timeout + 3 * TRANSFER_SECONDS_PER_GIB * gib + \
        SLACK_SECONDS


def send(ctx: PointContext, staged: list[Staged]) -> dict[str, Any]:
    """Send the bench request; a reply, or {"ok": False, "status", "message"} on a fault."""
    request = BenchRequest(tuple(s.request for s in staged), slot_plan(ctx.plan),
                           str(ctx.helpers_path) if ctx.helpers_path else None, ctx.per_launch)
    try:
        worker = ctx.handle.ensure()
        reply = worker.request(codec.to_object(request), request_timeout(ctx, staged), ctx.cancel)
    except WorkerFault as fault:
        return {"ok": False, "status": fault_status(fault.kind), "message": str(fault)}
    if not reply.get("ok"):
        return {"ok": False, "status": fault_status(str(reply.get("error"))),
                "message": str(reply.get("message"))}
    return reply


def _checks(ctx: PointContext, staged: Staged) -> list[Any]:
    """The first and the last timed launches, checked like any verification run."""
    variant = staged.variant
    run_ctx = RunContext(variant.spec, ctx.options, ctx.handle, variant.prepared, ctx.folder,
                         buffers.GUARD_BYTES, variant.reference, ctx.cancel)
    results = []
    timed = "timed launch" if len(variant.spec.launches) == 1 else "timed run of the sequence"
    for when, paths in (("first", staged.first_paths), ("last", staged.last_paths)):
        label = f"{when} {timed} on the inputs of seed {staged.seed}"
        if not all(p.exists() for p in paths.values()):
            results.append(RunResult(staged.resolved.case, staged.seed, Status.UNVERIFIED,
                                     f"{label}: the worker wrote no images to check"))
            continue
        findings = check_images(run_ctx, staged.resolved, staged.inputs, staged.expected, paths,
                                staged.salt)
        status = run_status(findings)
        message = f"{label}: " + ("matches the reference" if status == Status.PASSED else
                                  findings[0].message)
        results.append(RunResult(staged.resolved.case, staged.seed, status, message, findings))
    return results


def _launch_timings(spec: Spec, parts: list[list[float]]) -> list[LaunchTiming]:
    """Each launch's part of the samples, with its summary (none when not asked for)."""
    return [LaunchTiming(launch.entry, list(samples), summarize(samples) if samples else None)
            for launch, samples in zip(spec.launches, parts, strict=False)]


def _variant_timing(ctx: PointContext, sets: list[Staged], samples: list[float],
                    reply: dict[str, Any], index: int,
                    parts: list[list[float]]) -> VariantTiming:
    """Samples, summary, rates and checks (of every input set) of one variant; `parts`: each
    launch's samples (per-launch timing), else empty."""
    staged = sets[0]
    spec, case = staged.variant.spec, staged.resolved.case
    checks = [check for one in sets for check in _checks(ctx, one)]
    failing = next((c for c in checks if not c.passed), None)
    stats = summarize(samples) if samples else None
    bytes_moved = evaluate_optional(spec.bench_bytes, case)
    flops = evaluate_optional(spec.bench_flops, case)
    rate = throughput(stats.median, bytes_moved, flops) if stats else throughput(0, None, None)
    return VariantTiming(
        name=staged.variant.name, spec_path=str(spec.path or ""), case=dict(case),
        status=Status.TIMED if failing is None else failing.status,
        message="" if failing is None else failing.message, samples_ms=list(samples),
        stats=stats, stop_reason=str(reply.get("stop_reason", "")),
        warmup_launches=int(reply.get("warmup_launches", [0] * (index + 1))[index]),
        bytes=bytes_moved, flops=flops, gbps=rate.gbps, gflops=rate.gflops,
        intensity=rate.intensity, checks=checks,
        sequence=[launch.entry for launch in spec.launches] if len(spec.launches) > 1 else [],
        launches=_launch_timings(spec, parts))


def compare(variants: list[VariantTiming], inputs_match: bool, seed: int) -> Comparison | None:
    """A against B (the baseline) when two variants were timed."""
    if len(variants) != 2 or not variants[0].samples_ms or not variants[1].samples_ms:
        return None
    interval = bootstrap_ratio(variants[0].samples_ms, variants[1].samples_ms, seed=seed)
    return Comparison(variants[0].name, variants[1].name, interval.ratio, interval.low,
                      interval.high, interval.level, interval.no_difference, inputs_match)


def _point_flags(clocks: dict[str, Any], comparison: Comparison | None) -> list[Flag]:
    """Throttling during the case, and a suspicious speedup over the baseline."""
    flags = [throttle_flag(clocks.get("start_mhz"), clocks.get("end_mhz"),
                           clocks.get("min_mhz"))]
    if comparison is not None:
        flags.append(speedup_flag(comparison.speedup))
    return [f for f in flags if f is not None]


@dataclass(frozen=True)
class PointFault:
    """A case that could not be timed: the status for the report and why."""

    status: Status
    message: str


def _merged(samples: list[list[float]], variants: int) -> list[list[float]]:
    """Each variant's samples over all its input sets, in the order they were taken (the
    worker numbers the launches set by set: slot = set * variants + variant)."""
    merged: list[list[float]] = []
    for variant in range(variants):
        slots = samples[variant::variants]
        merged.append([s[r] for r in range(max(map(len, slots))) for s in slots if r < len(s)])
    return merged


def _merged_parts(parts: list[list[list[float]]], variants: int) -> list[list[list[float]]]:
    """Each variant's per-launch samples over all its input sets (parts[slot][launch]), merged
    as _merged merges the samples; empty lists when the reply has none."""
    if not parts:
        return [[] for _ in range(variants)]
    launches = [max((len(p) for p in parts[v::variants]), default=0) for v in range(variants)]
    by_launch = [_merged([p[k] if k < len(p) else [] for p in parts], variants)
                 for k in range(max(launches, default=0))]
    return [[by_launch[k][v] for k in range(launches[v])] for v in range(variants)]


def time_point(ctx: PointContext, sets: list[list[Staged]],
               seed: int = 0) -> tuple[BenchPoint, dict[str, Any]] | PointFault:
    """Time the staged variants together, rotating between their input sets: the point and
    the device facts the worker reported, or a PointFault."""
    slots = [variant[k] for k in range(len(sets[0])) for variant in sets]
    reply = send(ctx, slots)
    if not reply.get("ok"):
        return PointFault(Status(reply["status"]), str(reply["message"]))
    samples = [list(map(float, s)) for s in reply.get("samples_ms", [])]
    if len(samples) != len(slots):
        return PointFault(Status.CRASH, "the worker's reply has no samples for some variants")
    merged = _merged(samples, len(sets))
    parts = [[list(map(float, launch)) for launch in slot] for slot in reply.get("launch_ms", [])]
    if ctx.per_launch and len(parts) != len(slots):
        return PointFault(Status.CRASH, "the worker's reply has no per-launch times for some "
                          "variants")
    merged_parts = _merged_parts(parts, len(sets))
    variants = [_variant_timing(ctx, s, merged[i], reply, i, merged_parts[i])
                for i, s in enumerate(sets)]
    comparison = compare(variants, same_inputs(sets), seed)
    clocks = dict(reply.get("clocks", {}))
    clocks["source"] = dict(reply.get("facts", {})).get("clock_source")
    order = [int(v) % len(sets) for v in reply.get("order", [])]
    point = BenchPoint(case=dict(sets[0][0].resolved.case), variants=variants,
                       order=order, comparison=comparison,
                       clocks=clocks, flags=_point_flags(clocks, comparison),
                       sampling_ms=float(reply.get("sampling_ms", 0.0)))
    return point, dict(reply.get("facts", {}))


def bytes_needed(specs: list[Spec], case: Case) -> int:
    """Space the files of one case need: every image twice (after the last and the first
    timed launch) for each input set, guard zones included."""
    total = 0
    for spec in specs:
        try:
            total += resolve(spec, case).nbytes(spec)
        except ValueError:
            continue
        total += 2 * buffers.GUARD_BYTES * len(spec.args)
    return 2 * len(INPUT_SEEDS) * total
