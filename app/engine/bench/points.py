"""One timed case: inputs and expected outputs for each variant, the worker's `bench` request,
the checks of the first and last timed launches against the reference (GPU MODE style: a kernel
cannot be fast by skipping work after its first launch), and the figures."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from app import expr
from app.cases import Resolved, resolve
from app.engine.bench.reports import BenchPoint, Comparison, VariantTiming
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
from app.engine.worker.protocol import BenchRequest, BufferItem, KernelRef, Launch, ScalarItem
from app.engine.worker.timing import TimingPlan
from app.spec import Case, Spec

Array = np.ndarray[Any, Any]
BENCH_SEED = 0
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
    launch: Launch
    salt: bytes

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


def evaluate_optional(text: str | None, case: Case) -> float | None:
    """A [bench] bytes or flops expression for a case; None when absent or not computable."""
    if not text:
        return None
    try:
        return float(expr.evaluate(text, case))
    except expr.ExprError:
        return None


def stage(variant: Variant, case: Case, folder: Path, index: int) -> Staged:
    """Inputs (seeded), the reference's expected outputs, and the buffer files of a variant.

    Raises CaseError for an impossible case and ReferenceError for a failing reference."""
    spec = variant.spec
    resolved = resolve(spec, case)
    inputs = buffers.generate_inputs(spec, resolved, BENCH_SEED, 0)
    expected = expected_outputs(variant.reference, spec, resolved, inputs)
    last: dict[str, Path] = {}
    first: dict[str, Path] = {}
    salt = buffers.new_salt()
    items: list[BufferItem | ScalarItem] = []
    for arg in spec.args:
        if not arg.is_buffer:
            items.append(ScalarItem(resolved.scalars[arg.name], arg.dtype))
            continue
        last[arg.name] = folder / f"bench-{index}-{arg.name}.bin"
        first[arg.name] = folder / f"bench-{index}-{arg.name}.first.bin"
        buffers.image_for(arg, resolved, inputs, buffers.GUARD_BYTES, salt).tofile(
            last[arg.name])
        items.append(BufferItem(str(last[arg.name]), buffers.GUARD_BYTES, arg.dtype,
                                first=str(first[arg.name])))
    prepared = variant.prepared
    kernel = KernelRef(prepared.symbol, spec.entry,
                       cubin_path=str(prepared.cubin_path) if prepared.cubin_path else None)
    launch = Launch(kernel, resolved.grid, resolved.block, resolved.shared_bytes, tuple(items))
    return Staged(variant, resolved, inputs, expected, last, first, launch, salt)


def same_inputs(staged: list[Staged]) -> bool:
    """Whether every variant got byte-identical inputs under the same names."""
    base = staged[0].inputs
    for other in staged[1:]:
        if set(other.inputs) != set(base) or any(
                base[k].dtype != other.inputs[k].dtype or base[k].shape != other.inputs[k].shape
                or not np.array_equal(base[k].view(np.uint8), other.inputs[k].view(np.uint8))
                for k in base):
            return False
    return True


def request_timeout(ctx: PointContext, staged: list[Staged]) -> float:
    """Seconds the parent waits for a bench reply before it kills the worker."""
    count = len(staged)
    gib = sum(s.resolved.nbytes(s.variant.spec) for s in staged) / 2**30
    return (ctx.plan.hard_limit_ms(count) + ctx.plan.warmup_ms * count) / 1000.0 + \
        (2 * count + 2) * ctx.options.timeout + 3 * TRANSFER_SECONDS_PER_GIB * gib + SLACK_SECONDS


def send(ctx: PointContext, staged: list[Staged]) -> dict[str, Any]:
    """Send the bench request; a reply, or {"ok": False, "status", "message"} on a fault."""
    request = BenchRequest(tuple(s.launch for s in staged), ctx.plan,
                           str(ctx.helpers_path) if ctx.helpers_path else None)
    try:
        worker = ctx.handle.ensure()
        reply = worker.request(request.to_message(), request_timeout(ctx, staged), ctx.cancel)
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
    for label, paths in (("first timed launch", staged.first_paths),
                         ("last timed launch", staged.last_paths)):
        if not all(p.exists() for p in paths.values()):
            results.append(RunResult(staged.resolved.case, BENCH_SEED, Status.UNVERIFIED,
                                     f"{label}: the worker wrote no images to check"))
            continue
        findings = check_images(run_ctx, staged.resolved, staged.inputs, staged.expected, paths,
                                staged.salt)
        status = run_status(findings)
        message = f"{label}: " + ("matches the reference" if status == Status.PASSED else
                                  findings[0].message)
        results.append(RunResult(staged.resolved.case, BENCH_SEED, status, message, findings))
    return results


def _variant_timing(ctx: PointContext, staged: Staged, samples: list[float],
                    reply: dict[str, Any], index: int) -> VariantTiming:
    """Samples, summary, rates and checks of one variant."""
    spec, case = staged.variant.spec, staged.resolved.case
    checks = _checks(ctx, staged)
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
        intensity=rate.intensity, checks=checks)


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


def time_point(ctx: PointContext, staged: list[Staged],
               seed: int = 0) -> tuple[BenchPoint, dict[str, Any]] | PointFault:
    """Time the staged variants together: the point and the device facts the worker reported,
    or a PointFault."""
    reply = send(ctx, staged)
    if not reply.get("ok"):
        return PointFault(Status(reply["status"]), str(reply["message"]))
    samples = [list(map(float, s)) for s in reply.get("samples_ms", [])]
    if len(samples) != len(staged):
        return PointFault(Status.CRASH, "the worker's reply has no samples for some variants")
    variants = [_variant_timing(ctx, s, samples[i], reply, i) for i, s in enumerate(staged)]
    comparison = compare(variants, same_inputs(staged), seed)
    clocks = dict(reply.get("clocks", {}))
    clocks["source"] = dict(reply.get("facts", {})).get("clock_source")
    point = BenchPoint(case=dict(staged[0].resolved.case), variants=variants,
                       order=[int(v) for v in reply.get("order", [])], comparison=comparison,
                       clocks=clocks, flags=_point_flags(clocks, comparison),
                       sampling_ms=float(reply.get("sampling_ms", 0.0)))
    return point, dict(reply.get("facts", {}))


def bytes_needed(specs: list[Spec], case: Case) -> int:
    """Space the files of one case need: every image twice (after the last and the first
    timed launch), guard zones included."""
    total = 0
    for spec in specs:
        try:
            total += resolve(spec, case).nbytes(spec)
        except ValueError:
            continue
        total += 2 * buffers.GUARD_BYTES * len(spec.args)
    return 2 * total
