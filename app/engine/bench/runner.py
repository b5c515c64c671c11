"""Timing kernels (`kernel-studio bench`): verify, then time in a worker with CUDA events, check
the first and last timed samples, and report the figures against the device's peaks. A spec of
several launches is timed as its whole sequence, and each launch too with `per_launch`.

`bench_file(path, options)` is the entry point for the CLI and the GUI (app/jobs/server.py). It
never raises for a kernel's misbehaviour: every outcome is a BenchReport with a status.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from app.base import codec, paths, settings
from app.compile import compile_file
from app.engine.bench.assemble import assemble, finish_points
from app.engine.bench.peaks import (
    COPY_ELEMENTS,
    COPY_SPEC,
    DevicePeaks,
    derived_peaks,
    load_cached,
    store,
)
from app.engine.bench.points import (
    INPUT_SEEDS,
    PointContext,
    PointFault,
    Variant,
    bytes_needed,
    stage_sets,
    time_point,
)
from app.engine.bench.reports import BenchPoint, BenchReport
from app.engine.verify import buffers, memory
from app.engine.verify.reference import ReferenceError, load_reference
from app.engine.verify.results import Status
from app.engine.verify.runs import Engine, Prepared, VerifyOptions, compile_for, verify_with
from app.engine.worker import backends
from app.engine.worker.client import WorkerFault, WorkerHandle
from app.engine.worker.protocol import HelloReply
from app.engine.worker.timing import PlanError, TimingMode, TimingPlan
from app.isolation import trust
from app.spec.cases import CaseError, resolve_each
from app.spec.model import Case, Spec, SpecError, load_spec

Progress = Callable[[str, float], None]
HELPERS_SOURCE = paths.RESOURCES / "bench" / "helpers.cu"
# Backends whose times are not a GPU's are refused, except the one that tests the machinery.
TEST_BACKENDS = ("selftest",)
NO_GPU_HELP = ("timing needs an NVIDIA GPU with pycuda; the CPU emulator runs kernels for "
               "correctness only and its times say nothing about a GPU")


# The options the GUI sets; the job process keeps the defaults for the rest.
MESSAGE_FIELDS = ("mode", "budget_ms", "sweep", "vs", "case")


@dataclass
class BenchOptions:
    """How to time: backend, plan, case or sweep, baseline, verification, peaks."""

    backend: str = "auto"
    # The plan's fields, flat for the CLI and the GUI; their defaults are the plan's own.
    mode: TimingMode = TimingPlan.mode
    budget_ms: float = TimingPlan.budget_ms
    min_samples: int = TimingPlan.min_samples
    max_samples: int = TimingPlan.max_samples
    rse_target: float = TimingPlan.rse_target
    warmup_ms: float = TimingPlan.warmup_ms
    case: Case | None = None
    sweep: tuple[str, list[int | float]] | None = None
    vs: str | Path | None = None
    verify_first: bool = True
    timeout: float = settings.TIME_LIMIT_S
    arch: str | None = None
    # None: app.isolation.trust decides; True: the caller vouches for the specs (as VerifyOptions).
    trusted: bool | None = None
    peaks: bool = True
    remeasure_peaks: bool = False
    seed: int = 0
    limit_ms: float | None = TimingPlan.limit_ms
    # "nvrtc" or "nvcc" (--compiler); None: each spec's [kernel].compiler.
    compiler: str | None = None
    # Also time each launch of a sequence (--per-launch): an event between launches.
    per_launch: bool = False

    def plan(self) -> TimingPlan:
        """The timing plan these options ask for (raises PlanError)."""
        return TimingPlan(mode=self.mode, budget_ms=self.budget_ms, min_samples=self.min_samples,
                          max_samples=self.max_samples, rse_target=self.rse_target,
                          warmup_ms=self.warmup_ms, limit_ms=self.limit_ms)

    def to_message(self) -> dict[str, Any]:
        """The fields the GUI sets (MESSAGE_FIELDS), as JSON for its job process."""
        data: dict[str, Any] = {name: getattr(self, name) for name in MESSAGE_FIELDS}
        if self.sweep is not None:
            data["sweep"] = [str(self.sweep[0]), list(self.sweep[1])]
        if self.vs is not None:
            data["vs"] = str(self.vs)
        return data

    @classmethod
    def from_message(cls, data: dict[str, Any], backend: str = "auto") -> BenchOptions:
        """Options from to_message's JSON; the defaults for everything else."""
        unknown = set(data) - set(MESSAGE_FIELDS)
        if unknown:
            raise ValueError(f"unknown bench options: {', '.join(sorted(unknown))}")
        fields: dict[str, Any] = {k: v for k, v in data.items() if v is not None}
        if "sweep" in fields:
            variable, values = fields["sweep"]
            fields["sweep"] = (str(variable), list(values))
        if "vs" in fields:
            fields["vs"] = Path(fields["vs"])
        return cls(backend=backend, **fields)


def _name(spec: Spec, taken: list[str]) -> str:
    """A short, unique name for a variant: the spec's file stem (the folder's too if needed)."""
    path = spec.path or Path(spec.source)
    for candidate in (path.stem, f"{path.parent.name}/{path.stem}"):
        if candidate not in taken:
            return candidate
    return f"{path.stem} #{len(taken) + 1}"


def cases_for(spec: Spec, options: BenchOptions) -> list[Case]:
    """The cases to time: the bench case (or --case), once per sweep value when sweeping."""
    base = dict(options.case if options.case is not None else spec.bench_case)
    if not base and not options.sweep:
        raise CaseError("the spec has no [bench] case: add one ([bench] case = { n = ... }) "
                        "or give --case")
    if not options.sweep:
        return [base]
    variable, values = options.sweep
    return [{**base, variable: value} for value in values]


def _choose_backend(options: BenchOptions) -> str | BenchReport:
    """The backend to time on, or a refusal (exit 3) saying why not."""
    if options.backend in TEST_BACKENDS:
        return options.backend
    if options.backend == "cpu":
        return BenchReport(Status.UNVERIFIED, f"not timed: {NO_GPU_HELP}")
    chosen, reason = backends.choose("pycuda" if options.backend == "auto" else options.backend)
    if chosen is None:
        return BenchReport(Status.UNVERIFIED, f"not timed: {NO_GPU_HELP} ({reason})")
    return chosen


@contextmanager
def work_folder(engine: Engine, needed: int) -> Iterator[Path]:
    """The engine's private folder when it has room for the buffer files (it may be a small
    /dev/shm), else a private folder in the temporary directory, removed afterwards."""
    try:
        free = shutil.disk_usage(engine.folder).free
    except OSError:
        free = 0
    if free > needed * 1.1 + 64 * 2**20:
        yield engine.folder
        return
    folder = Path(tempfile.mkdtemp(prefix="kernel-studio-bench-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _prepare(spec: Spec, backend: str, device: dict[str, Any], options: BenchOptions,
             folder: Path) -> Prepared | BenchReport:
    """Compile for the device's arch (the selftest backend runs named behaviours instead)."""
    if backend in TEST_BACKENDS:  # each entry names a behaviour of the backend
        return Prepared(spec.entry, None, symbols={entry: entry for entry in spec.entries})
    arch = device.get("arch") if device.get("kind") == "gpu" else options.arch
    prepared = compile_for(spec, arch, folder, options.compiler)
    if isinstance(prepared, Prepared):
        return prepared
    return BenchReport(prepared.status, f"{spec.source}: {prepared.message}")


def _helpers(backend: str, device: dict[str, Any], folder: Path) -> tuple[Path | None, str]:
    """The helper kernels' cubin for this device, or None and why (timing goes on without)."""
    if backend in TEST_BACKENDS or device.get("kind") != "gpu":
        return None, "not needed"
    try:
        result = compile_file(HELPERS_SOURCE, arch=device.get("arch"), options=[])
    except Exception as error:  # noqa: BLE001 - the helpers are optional; say why they are off
        return None, f"could not build them: {type(error).__name__}: {error}"
    if not result.ok or result.cubin is None:
        return None, f"could not build them: {result.message}"
    path = folder / "timing-helpers.cubin"
    path.write_bytes(result.cubin)
    return path, "built"


def _scaled(progress: Progress, prefix: str, part: float) -> Progress:
    """A progress callback that prefixes the text and scales the fraction."""
    def report(text: str, fraction: float) -> None:
        """Forward one progress step."""
        progress(f"{prefix}: {text}", part * fraction)
    return report


def _verify_all(variants: list[Variant], options: BenchOptions, handle: WorkerHandle,
                folder: Path, cancel: threading.Event | None,
                progress: Progress) -> list[dict[str, Any]] | BenchReport:
    """Verify every variant first; a report when one does not pass."""
    summaries = []
    verify_options = VerifyOptions(backend=handle.backend, timeout=options.timeout,
                                   arch=options.arch, trusted=options.trusted,
                                   compiler=options.compiler)
    for variant in variants:
        verdict = verify_with(variant.spec, verify_options, handle, folder, buffers.GUARD_BYTES,
                              cancel, _scaled(progress, f"verifying {variant.name}", 0.3))
        # `run` requests name only the kernel's symbol, and A/B variants often share one (two
        # `vector_add`s): each spec is verified in a worker of its own.
        handle.close()
        summaries.append({"spec": str(variant.spec.path or variant.name),
                          "status": verdict.status, "message": verdict.message,
                          "runs": len(verdict.runs), "fresh_seeds": verdict.fresh_seeds})
        if not verdict.passed:
            return BenchReport(verdict.status, f"{variant.name} did not pass verification, so "
                               f"it was not timed: {verdict.message}", verification=summaries)
    return summaries


def _refusal(spec: Spec, options: BenchOptions, device: dict[str, Any],
             folder: Path) -> BenchReport | None:
    """Why this spec cannot be timed here before anything of it runs: the trust rule (as for
    verify), or cases this machine cannot hold (each is staged twice, two input sets)."""
    decision = trust.decide(spec, options.trusted)
    if decision.refusal:
        return BenchReport(Status.UNVERIFIED, decision.refusal)
    try:
        resolved = resolve_each(spec, list(cases_for(spec, options)))
    except CaseError as error:
        return BenchReport(Status.SPEC_ERROR, str(error))
    verdict = memory.refusal(spec, resolved * len(INPUT_SEEDS), device, folder,
                             buffers.GUARD_BYTES)
    return BenchReport(verdict.status, verdict.message) if verdict is not None else None


def close_references(variants: list[Variant]) -> None:
    """Stop the reference processes of the variants."""
    for variant in variants:
        close = getattr(variant.reference, "close", None)
        if close is not None:
            close()


def _variants(specs: list[Spec], options: BenchOptions, backend: str, device: dict[str, Any],
              folder: Path) -> list[Variant] | BenchReport:
    """Compile every spec and load its reference."""
    variants: list[Variant] = []
    for spec in specs:
        refused = _refusal(spec, options, device, folder)
        if refused is not None:
            close_references(variants)
            return refused
        prepared = _prepare(spec, backend, device, options, folder)
        if isinstance(prepared, BenchReport):
            close_references(variants)
            return prepared
        try:  # in a process of its own, sandboxed where a sandbox can be had
            reference = load_reference(spec.reference_path, spec.base_dir)
        except ReferenceError as error:
            close_references(variants)
            return BenchReport(Status.REFERENCE_ERROR, str(error))
        variants.append(Variant(_name(spec, [v.name for v in variants]), spec, prepared,
                                reference))
    return variants


@dataclass
class _Run:
    """What one bench run carries from step to step."""

    specs: list[Spec]
    options: BenchOptions
    engine: Engine
    cancel: threading.Event | None
    progress: Progress
    handle: WorkerHandle | None = None
    device: dict[str, Any] = field(default_factory=dict)
    backend: str = ""


def _time_cases(run: _Run, variants: list[Variant], cases: list[Case], plan: TimingPlan,
                helpers: Path | None) -> tuple[list[tuple[BenchPoint, dict[str, Any]]],
                                               BenchReport | None]:
    """Every case in turn (each size of a sweep); stops at the first fault."""
    assert run.handle is not None
    done: list[tuple[BenchPoint, dict[str, Any]]] = []
    verify_options = VerifyOptions(backend=run.backend, timeout=run.options.timeout)
    for number, case in enumerate(cases):
        run.progress(f"timing case {number + 1}/{len(cases)}", 0.3 + 0.6 * number / len(cases))
        with work_folder(run.engine, bytes_needed(run.specs, case)) as folder:
            ctx = PointContext(run.handle, folder, plan, verify_options, helpers, run.cancel,
                               run.options.per_launch)
            try:
                staged = stage_sets(variants, case, folder)
            except CaseError as error:
                return done, BenchReport(Status.SPEC_ERROR, str(error))
            except ReferenceError as error:
                return done, BenchReport(Status.REFERENCE_ERROR, str(error))
            outcome = time_point(ctx, staged, run.options.seed)
            for item in (one for sets in staged for one in sets):
                for path in item.files():
                    path.unlink(missing_ok=True)
        if isinstance(outcome, PointFault):
            return done, BenchReport(outcome.status, f"case {case}: {outcome.message}")
        done.append(outcome)
    return done, None


def measure_copy_peak(run: _Run, helpers: Path | None) -> tuple[float | None, str]:
    """GB/s of the float4 copy kernel (cold, 2 x 256 MiB), and how it was measured."""
    try:
        spec = load_spec(COPY_SPEC)
    except SpecError as error:
        return None, f"the copy kernel's spec is broken: {error}"
    options = replace(run.options, budget_ms=1000.0, mode=TimingMode.COLD, case=None, sweep=None,
                      verify_first=False, min_samples=10)
    variants = _variants([spec], options, run.backend, run.device, run.engine.folder)
    if isinstance(variants, BenchReport):
        return None, f"the copy kernel could not be prepared: {variants.message}"
    copy_run = replace(run, specs=[spec], options=options)
    try:
        timed, fault = _time_cases(copy_run, variants, [{"n": COPY_ELEMENTS}], options.plan(),
                                   helpers)
    finally:
        close_references(variants)
    if fault is not None:
        return None, f"the copy kernel could not be timed: {fault.message}"
    copy = timed[0][0].variants[0]
    if copy.status != Status.TIMED or copy.gbps is None or copy.stats is None:
        return None, f"the copy kernel failed its checks: {copy.message}"
    return copy.gbps, (f"float4 copy of {COPY_ELEMENTS * 4 // 2**20} MiB each way, cold, "
                       f"median of {copy.stats.count} samples")


def _peaks(run: _Run, facts: dict[str, Any], helpers: Path | None) -> DevicePeaks:
    """The device's peaks: cached by UUID, else measured once with the copy kernel."""
    derived = derived_peaks(run.device, facts)
    if run.device.get("kind") != "gpu" or not run.options.peaks:
        return derived
    cached = None if run.options.remeasure_peaks else load_cached(derived.uuid)
    if cached is not None:
        return cached
    run.progress("measuring the device's copy bandwidth (once per device)", 0.92)
    gbps, note = measure_copy_peak(run, helpers)
    derived.copy_gbps, derived.copy_note = gbps, note
    if gbps:
        store(derived)
    return derived


def _bench(run: _Run) -> BenchReport:
    """The steps of bench(), each of which may end it with a report."""
    try:
        plan = run.options.plan()
        cases = cases_for(run.specs[0], run.options)
    except (PlanError, CaseError) as error:
        return BenchReport(Status.SPEC_ERROR, str(error))
    backend = _choose_backend(run.options)
    if isinstance(backend, BenchReport):
        return backend
    run.backend, run.handle = backend, run.engine.handle(backend)
    run.progress("starting the worker", 0.0)
    try:
        run.device = codec.from_data(HelloReply, run.handle.ensure().info, "hello reply").device
    except WorkerFault as fault:
        return BenchReport(Status.UNVERIFIED, f"not timed: {fault}", backend=backend)
    if run.device.get("kind") != "gpu" and backend not in TEST_BACKENDS:
        return BenchReport(Status.UNVERIFIED, f"not timed: {NO_GPU_HELP}", backend=backend)
    variants = _variants(run.specs, run.options, backend, run.device, run.engine.folder)
    if isinstance(variants, BenchReport):
        return variants
    try:
        return _verify_and_time(run, variants, plan, cases)
    finally:
        close_references(variants)


def _verify_and_time(run: _Run, variants: list[Variant], plan: TimingPlan,
                     cases: list[Case]) -> BenchReport:
    """Verify the variants (unless told not to), time every case, assemble the report."""
    assert run.handle is not None  # _bench started the worker
    verification: list[dict[str, Any]] = []
    if run.options.verify_first:
        checked = _verify_all(variants, run.options, run.handle, run.engine.folder, run.cancel,
                              run.progress)
        if isinstance(checked, BenchReport):
            return checked
        verification = checked
    helpers, helpers_note = _helpers(run.backend, run.device, run.engine.folder)
    timed, failed = _time_cases(run, variants, cases, plan, helpers)
    if failed is not None:
        failed.verification = verification
        return failed
    peaks = _peaks(run, timed[0][1], helpers)
    points = finish_points(timed, peaks, plan)
    return assemble(run.backend, run.device, points, [f for _, f in timed], peaks, verification,
                    helpers_note, run.options.sweep[0] if run.options.sweep else None)


def bench(specs: list[Spec], options: BenchOptions | None = None, engine: Engine | None = None,
          cancel: threading.Event | None = None, progress: Progress | None = None) -> BenchReport:
    """Time one spec, or A against B (specs[1] is the baseline); never raises for a kernel."""
    options = options or BenchOptions()
    own_engine = engine is None
    engine = engine or Engine()
    started = time.perf_counter()
    run = _Run(specs, options, engine, cancel, progress or (lambda _t, _f: None))
    try:
        report = _bench(run)
    finally:
        if own_engine:
            engine.close()
    if cancel is not None and cancel.is_set():
        report = replace(report, status=Status.CANCELLED, message="cancelled by the user")
    report.seconds = time.perf_counter() - started
    report.mode = options.mode
    return report


def bench_file(path: Path | str, options: BenchOptions | None = None, backend: str | None = None,
               cancel: threading.Event | None = None, progress: Progress | None = None,
               engine: Engine | None = None) -> BenchReport:
    """bench() for spec files (options.vs names the baseline); a bad spec is a report."""
    options = options or BenchOptions()
    if backend is not None:
        options = replace(options, backend=backend)
    specs = []
    for item in [path, options.vs] if options.vs else [path]:
        try:
            specs.append(load_spec(item))
        except SpecError as error:
            return BenchReport(Status.SPEC_ERROR, str(error))
    return bench(specs, options, engine, cancel, progress)
