"""The runs of a verification: compile, then every case and seed in a worker, each judged by
app.engine.verify.checks (docs/spec.md, "What a verdict means"). The reference runs on the host,
in a process of its own (app.engine.verify.reference). The entry points (verify, verify_file)
are app.engine.verify.verifier."""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from app.base import codec, settings
from app.compile import compile_file
from app.engine.verify import buffers, checks, memory
from app.engine.verify import outside as outside_words
from app.engine.verify.ahead import Ahead
from app.engine.verify.buffers import Start, start_for
from app.engine.verify.reference import (
    Reference,
    ReferenceError,
    expected_outputs,
    load_reference,
)
from app.engine.verify.results import (
    FINDING_PRIORITY,
    STOPPING,
    Finding,
    RunResult,
    Status,
    Verdict,
    overall_status,
)
from app.engine.verify.seeds import DEFAULT_RANDOM_SEEDS, draw_seeds, plan_runs
from app.engine.verify.warm import MAX_WARM, ReferencePool, Staged
from app.engine.worker.backends.cpu import build as cpu_build
from app.engine.worker.backends.cpu import faults
from app.engine.worker.client import WorkerFault, WorkerHandle
from app.engine.worker.protocol import (
    Argument,
    BufferItem,
    Edge,
    Failure,
    FaultKind,
    HelloReply,
    KernelRef,
    Launch,
    LoadRequest,
    RunReply,
    RunRequest,
    ScalarItem,
)
from app.isolation import sandbox, trust
from app.spec.cases import CaseError, Resolved, resolve_each
from app.spec.dtypes import lookup
from app.spec.model import Case, LaunchSpec, Spec, entry_name

Progress = Callable[[str, float], None]
# The least time a load gets (the CPU backend reads the library's imports, then loads it).
MIN_LOAD_S = 1.0
# Copying buffers to and from a device is not the kernel's time: allow for it on top.
TRANSFER_SECONDS_PER_GIB = 2.0
# The next run is staged during a run only when its estimated peak (app.engine.verify.memory)
# is at most this: two runs' inputs and expected values are then held at once.
AHEAD_BYTES = 256 << 20


@dataclass
class VerifyOptions:
    """How to verify: backend, which cases and seeds, the time limit, a sanitizer."""

    backend: str = "auto"
    seeds: int | None = None
    cases: list[Case] | None = None
    timeout: float = settings.TIME_LIMIT_S
    sanitize: str | None = None
    arch: str | None = None
    # None: app.isolation.trust decides; True: the caller vouches for the spec; False: only
    # sandboxed.
    trusted: bool | None = None
    rtol: float | None = None
    atol: float | None = None
    # Leave `out` buffers uninitialized on the device (for compute-sanitizer initcheck).
    uninitialized_outputs: bool = False
    # Exactly these seeds instead of the spec's (a replay), or these after the spec's.
    only_seeds: tuple[int, ...] | None = None
    # "nvrtc" or "nvcc" (--compiler); None: the spec's [kernel].compiler.
    compiler: str | None = None
    extra_seeds: tuple[int, ...] = ()
    # Seeds to draw from the OS's randomness when the verification starts, run after the
    # spec's (app.engine.verify.seeds: the spec's seeds give inputs a kernel could recognise);
    # 0 for runs that repeat exactly. Ignored by a replay (only_seeds).
    random_seeds: int = DEFAULT_RANDOM_SEEDS
    # The seeds drawn so far (with_fresh_seeds), run after extra_seeds.
    fresh_seeds: tuple[int, ...] = ()

    def seed_list(self, spec: Spec) -> list[int]:
        """The seeds every case runs with."""
        if self.only_seeds:
            return list(self.only_seeds)
        return (list(range(self.seeds or spec.seeds)) + list(self.extra_seeds)
                + list(self.fresh_seeds))

    def with_fresh_seeds(self, spec_seeds: int) -> VerifyOptions:
        """These options with their random_seeds drawn now (fresh_seeds) and none left to
        draw; `spec_seeds`: the spec's own count, which the draw completes (seeds.draw_seeds).
        verify_with calls it, so no caller can run without fresh seeds unless it asks."""
        if self.only_seeds or self.random_seeds <= 0:
            return replace(self, random_seeds=0)
        before = list(range(self.seeds or spec_seeds)) + list(self.extra_seeds)
        drawn = draw_seeds(self.random_seeds, before + list(self.fresh_seeds))
        return replace(self, random_seeds=0, fresh_seeds=self.fresh_seeds + drawn)


@dataclass
class Prepared:
    """A kernel ready to run: what the worker needs to load it. `symbol` is the first entry's
    lowered name; `symbols` has every entry's (a spec of several launches may have several)."""

    symbol: str
    cubin_path: Path | None
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    symbols: dict[str, str] = field(default_factory=dict)

    def symbol_of(self, entry: str) -> str:
        """The lowered name of one entry (the first's when only it is known)."""
        return self.symbols.get(entry, self.symbol)


class Engine:
    """Warm workers, warm references (app.engine.verify.warm) and a private folder for buffer
    files, kept across verifications."""

    def __init__(self, warm_references: int = MAX_WARM) -> None:
        """Create the private folder (in memory where /dev/shm exists). `warm_references`: how
        many references to keep loaded between verifications (0: none, each starts afresh)."""
        shm = Path("/dev/shm")
        base = str(shm) if shm.is_dir() and shm.stat().st_mode & 0o002 else None
        self.folder = Path(tempfile.mkdtemp(prefix="kernel-studio-", dir=base))
        self.handles: dict[tuple[str, tuple[str, ...]], WorkerHandle] = {}
        self.references = ReferencePool(warm_references)

    def handle(self, backend: str, wrapper: tuple[str, ...] = ()) -> WorkerHandle:
        """The worker handle for a backend (and wrapper such as a sanitizer)."""
        key = (backend, wrapper)
        if key not in self.handles:
            self.handles[key] = WorkerHandle(backend, wrapper=wrapper, log_dir=self.folder)
        return self.handles[key]

    def close(self) -> None:
        """Stop every worker and remove the folder."""
        for handle in self.handles.values():
            handle.close()
        self.handles.clear()
        self.references.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> Engine:
        """Use as a context manager."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close on exit."""
        self.close()


def compile_for(spec: Spec, arch: str | None, folder: Path,
                compiler: str | None = None) -> Prepared | Verdict:
    """Compile the kernel with the real compiler (diagnostics on every backend): `compiler`,
    else the spec's."""
    result = compile_file(spec.source_path, arch=arch, options=list(spec.options),
                          backend=compiler or spec.compiler, entries=spec.entries)
    diagnostics = [vars(d) for d in result.diagnostics]
    if not result.ok or result.cubin is None:
        message = result.message or "the kernel did not compile"
        return Verdict(Status.COMPILE_ERROR, message, diagnostics=diagnostics)
    symbols: dict[str, str] = {}
    for entry in spec.entries:
        symbol = result.kernel_symbol(entry)
        if symbol is None:
            return Verdict(Status.COMPILE_ERROR, f"no __global__ function named {entry!r} in "
                           f"{spec.source}", diagnostics=diagnostics)
        symbols[entry] = symbol
    cubin_path = folder / f"{hashlib.sha256(result.cubin).hexdigest()[:16]}.cubin"
    sandbox.write_shared(cubin_path, result.cubin)  # a CPU worker may write this folder too
    return Prepared(symbols[spec.entry], cubin_path, diagnostics, symbols)


def load_requests(spec: Spec, prepared: Prepared) -> dict[str, LoadRequest]:
    """The `load` request of each entry of the spec's launches."""
    return {entry: load_request(spec, prepared, entry) for entry in spec.entries}


def load_request(spec: Spec, prepared: Prepared, entry: str | None = None) -> LoadRequest:
    """The `load` request of one entry (the first launch's by default): where the worker finds
    the kernel, under a module name that changes with the request and with the source's bytes
    (an edited source is another module)."""
    entry = entry or spec.entry
    kernel = codec.replace(source_ref(spec, entry), symbol=prepared.symbol_of(entry),
                           cubin_path=str(prepared.cubin_path) if prepared.cubin_path else None)
    digest = hashlib.sha256(json.dumps(codec.to_object(LoadRequest.of(kernel)),
                                       sort_keys=True).encode())
    digest.update(spec.source_path.read_bytes())
    return LoadRequest.of(codec.replace(kernel, module=digest.hexdigest()[:32]))


def source_ref(spec: Spec, entry: str) -> KernelRef:
    """Where an entry's source is (the CPU backend builds from it), before any compile."""
    return KernelRef("", entry, source_path=str(spec.source_path), source_dir=str(spec.base_dir),
                     options=tuple(spec.options))


def arg_items(spec: Spec, resolved: Resolved, images: dict[str, Path], guard: int,
              uninitialized_outputs: bool = False, edge: Edge = Edge.GUARDS,
              launch: LaunchSpec | None = None) -> tuple[Argument, ...]:
    """The arguments of a launch (the first by default), in parameter order (`edge`:
    protocol.Edge; `uninitialized_outputs`: leave `out` buffers uninitialized on the device,
    which only a run's first launch may: later ones need what earlier ones wrote)."""
    items: list[Argument] = []
    for arg in spec.launch_args(launch or spec.launches[0]):
        if arg.is_buffer:
            items.append(BufferItem(str(images[arg.name]), guard, arg.dtype,
                                    upload=not (uninitialized_outputs and arg.kind == "out"),
                                    edge=edge))
        else:
            items.append(ScalarItem(resolved.scalars[arg.name], arg.dtype))
    return tuple(items)


@dataclass
class RunContext:
    """What every run of one verification shares."""

    spec: Spec
    options: VerifyOptions
    handle: WorkerHandle
    prepared: Prepared
    folder: Path
    guard: int
    reference: Callable[..., Any]
    cancel: threading.Event | None
    # Where the reference came from: its answers for earlier runs may be remembered there.
    references: ReferencePool | None = None
    # Each entry's load request (as sent, with its key), made once for all the runs: the
    # module name hashes the source file, which must not be read again at every run.
    loads: dict[str, tuple[str, dict[str, Any], LoadRequest]] = field(default_factory=dict)


# What a worker's fault means for the run that met it.
FAULT_STATUS = {FaultKind.DEVICE: Status.CRASH, FaultKind.INTERNAL: Status.CRASH,
                FaultKind.LOAD: Status.LAUNCH_ERROR, FaultKind.BAD_REQUEST: Status.LAUNCH_ERROR,
                FaultKind.UNSUPPORTED: Status.UNVERIFIED}


def fault_status(kind: str) -> Status:
    """What a fault means for a run: a worker's fault kind (FaultKind), or the client's
    (timeout, crash, cancelled; a worker that could not start decides nothing)."""
    if kind in FaultKind.__members__.values():
        return FAULT_STATUS[FaultKind(kind)]
    if kind in Status.__members__.values():
        return Status(kind)
    return Status.UNVERIFIED


def _fault_result(case: Case, seed: int, kind: str, message: str) -> RunResult:
    """A run that ended without images to check."""
    return RunResult(case, seed, fault_status(kind), message)


def _ensure_loaded(ctx: RunContext) -> dict[str, KernelRef]:
    """A live worker with every entry of the kernel loaded (a fresh worker after any fault),
    and what a run names each entry's module by. The worker may be warm from starting
    (verify_with asks it for its device) or from an earlier spec, so what counts is whether this
    process has loaded this kernel, not whether it is new."""
    worker = ctx.handle.ensure()
    if not ctx.loads:
        for entry, request in load_requests(ctx.spec, ctx.prepared).items():
            message = codec.to_object(request)
            ctx.loads[entry] = json.dumps(message, sort_keys=True), message, request
    loaded: dict[str, KernelRef] = {}
    for entry, (key, message, request) in ctx.loads.items():
        if key not in worker.loaded:
            # Loading runs a library's constructors (CPU backend): it counts as kernel time.
            reply = worker.request(message, max(ctx.options.timeout, MIN_LOAD_S), ctx.cancel)
            if not reply.get("ok"):
                failure = codec.from_data(Failure, reply, "worker failure")
                raise WorkerFault(failure.kind, failure.message)
            worker.loaded.add(key)
        # A run names the loaded module only; the worker has the kernel's files already.
        loaded[entry] = KernelRef(request.symbol, request.entry, request.module)
    return loaded


def stage(ctx: RunContext, index: int, resolved: Resolved, seed: int) -> Staged:
    """A run's inputs, and the reference's outputs for them: remembered from an earlier
    verification with the same warm reference (app.engine.verify.warm), or made now."""
    pool, reference = ctx.references, ctx.reference
    key = _run_key(ctx.spec, index, resolved, seed)
    if pool is not None and isinstance(reference, Reference):
        remembered = pool.recall(reference, key)
        if remembered is not None:
            return remembered
    inputs = buffers.generate_inputs(ctx.spec, resolved, seed, index)
    staged = inputs, expected_outputs(reference, ctx.spec, resolved, inputs)
    if pool is not None and isinstance(reference, Reference):
        pool.remember(reference, key, staged)
    return staged


def _run_key(spec: Spec, index: int, resolved: Resolved, seed: int) -> str:
    """Everything a run's inputs and expected outputs depend on, besides the reference (its
    file and folder key its pool entry): the arguments, the case's shapes and scalars, the
    case's position and the seed."""
    args = [(a.name, a.kind, a.dtype, a.init) for a in spec.args]
    return repr((args, sorted(resolved.shapes.items()), sorted(resolved.scalars.items()),
                 index, seed))


def run_one(ctx: RunContext, index: int, resolved: Resolved, seed: int,
            staged: Callable[[], Staged] | None = None, edge: Edge = Edge.GUARDS,
            descending: bool = False, start: Start | None = None) -> RunResult:
    """One case and seed: inputs and reference (`staged`, perhaps computed ahead), launch,
    checks; `edge` places the buffers' data against inaccessible memory and `descending` runs
    each block's threads in descending order (CPU backend); `start`: what the outputs hold
    before the launch (the seed's own by default: buffers.start_for)."""
    start = start or start_for(seed)
    return replace(_run_one(ctx, index, resolved, seed, staged, edge, descending, start),
                   start=str(start))


def _run_one(ctx: RunContext, index: int, resolved: Resolved, seed: int,
             staged: Callable[[], Staged] | None, edge: Edge, descending: bool,
             start: Start) -> RunResult:
    """run_one, before the run is labelled with its start."""
    spec, case = ctx.spec, resolved.case
    inputs, expected = staged() if staged else stage(ctx, index, resolved, seed)
    paths: dict[str, Path] = {}
    salt = buffers.new_salt()
    for arg in spec.args:
        if arg.is_buffer:
            paths[arg.name] = ctx.folder / f"buffer-{arg.name}.bin"
            # Never through a link a sandboxed worker may have left there (app.isolation.sandbox).
            sandbox.write_shared(paths[arg.name], buffers.image_parts(
                arg, resolved, inputs, ctx.guard, salt, start))
    launched = _launch_all(ctx, resolved, paths, edge, descending)
    if isinstance(launched, tuple):
        return _fault_result(case, seed, *launched)
    try:
        findings = check_images(ctx, resolved, inputs, expected, paths, salt)
    except OSError as error:  # a buffer file the worker replaced (sandbox.read_shared)
        return _fault_result(case, seed, "crash", str(error))
    return RunResult(case, seed, run_status(findings), "", findings, launched)


def _launch_all(ctx: RunContext, resolved: Resolved, paths: dict[str, Path], edge: Edge,
                descending: bool) -> float | tuple[str, str]:
    """Every launch of one run, in order, on the buffer files the worker rewrites after each
    (so a launch sees what the ones before it wrote): their seconds together, or the fault
    kind and message of the launch that failed, naming it when there are several."""
    spec, seconds = ctx.spec, 0.0
    limit = ctx.options.timeout + TRANSFER_SECONDS_PER_GIB * resolved.nbytes(spec) / 2**30
    labels = launch_names(spec)
    try:
        kernels = _ensure_loaded(ctx)
    except WorkerFault as fault:
        return fault.kind, str(fault)
    for index, (launch, shape) in enumerate(zip(spec.launches, resolved.launch_shapes(),
                                                strict=True)):
        items = arg_items(spec, resolved, paths, ctx.guard,
                          ctx.options.uninitialized_outputs and index == 0, edge, launch)
        kernel = kernels[launch.entry]
        try:
            request = RunRequest.of(Launch.of(kernel, shape.grid, shape.block,
                                              shape.shared_bytes, items, descending))
            assert ctx.handle.worker is not None
            reply = ctx.handle.worker.request(codec.to_object(request), limit, ctx.cancel)
        except WorkerFault as fault:
            return fault.kind, labels[index] + str(fault)
        if not reply.get("ok"):
            failure = codec.from_data(Failure, reply, "worker failure")
            return failure.kind, labels[index] + failure.message
        seconds += codec.from_data(RunReply, reply, "run reply").seconds
    return seconds


def launch_names(spec: Spec) -> list[str]:
    """What a fault's message starts with to say which launch met it: nothing for a spec of
    one launch, else `launch 2 of 3 (finish): `."""
    count = len(spec.launches)
    if count == 1:
        return [""]
    return [f"launch {i + 1} of {count} ({entry_name(launch.entry)}): "
            for i, launch in enumerate(spec.launches)]


def check_images(ctx: RunContext, resolved: Resolved, inputs: dict[str, Any],
                 expected: dict[str, Any], paths: dict[str, Path],
                 salt: bytes) -> list[Finding]:
    """Every check of docs/spec.md on the images the worker wrote back (made with `salt`)."""
    findings: list[Finding] = []
    for arg in ctx.spec.args:
        if not arg.is_buffer:
            continue
        size = 2 * ctx.guard + math.prod(resolved.shapes[arg.name]) * lookup(arg.dtype).itemsize
        image = np.frombuffer(sandbox.read_shared(paths[arg.name], size), dtype=np.uint8)
        data = buffers.data_of(image, arg, resolved, ctx.guard)
        guard_finding = checks.check_guards(arg.name, image, ctx.guard, data.nbytes,
                                            buffers.expected_guards(arg, ctx.guard, salt),
                                            lookup(arg.dtype).itemsize)
        if guard_finding:
            findings.append(guard_finding)
        if arg.kind == "in":
            changed = checks.check_unchanged(arg.name, inputs[arg.name], data)
            if changed:
                findings.append(changed)
        elif arg.is_output:  # scratch is never compared: only its guard zones count
            rtol = ctx.options.rtol if ctx.options.rtol is not None else ctx.spec.rtol
            atol = ctx.options.atol if ctx.options.atol is not None else ctx.spec.atol
            findings += checks.check_output(arg.name, data, expected[arg.name], arg.dtype,
                                             rtol, atol)
    return findings


def run_status(findings: list[Finding]) -> Status:
    """The most telling finding names the run's status."""
    kinds = {f.kind for f in findings}
    return next((k for k in FINDING_PRIORITY if k in kinds), Status.PASSED)


def _resolve_all(spec: Spec) -> list[Resolved] | Verdict:
    """Every case resolved, or a spec_error verdict naming the case."""
    try:
        return resolve_each(spec, list(spec.cases))
    except CaseError as error:
        return Verdict(Status.SPEC_ERROR, str(error))


def _reference(spec: Spec, references: ReferencePool | None) -> Reference:
    """The spec's reference in a process of its own, sandboxed where a sandbox can be had:
    warm from the pool when one is given, else started now (it loads while the caller goes
    on; wait() says whether it could)."""
    if references is None:
        return load_reference(spec.reference_path, spec.base_dir, wait=False)
    return references.get(spec.reference_path, spec.base_dir, spec.source_path)


def verify_with(spec: Spec, options: VerifyOptions, handle: WorkerHandle, folder: Path,
                guard: int, cancel: threading.Event | None, progress: Progress,
                references: ReferencePool | None = None) -> Verdict:
    """Verify on one worker handle with a given guard size (0 under a sanitizer); the
    reference comes warm from `references` when given (an Engine's), else starts afresh."""
    options = options.with_fresh_seeds(spec.seeds)
    verdict = _verify_trusted(spec, options, handle, folder, guard, cancel, progress,
                              references)
    verdict.seeds = options.seed_list(spec)
    verdict.fresh_seeds = [s for s in verdict.seeds if s in options.fresh_seeds]
    return verdict


def _verify_trusted(spec: Spec, options: VerifyOptions, handle: WorkerHandle, folder: Path,
                    guard: int, cancel: threading.Event | None, progress: Progress,
                    references: ReferencePool | None) -> Verdict:
    """verify_with once its seeds are drawn: what app.isolation.trust allows, then the runs."""
    decision = trust.decide(spec, options.trusted)  # app.isolation.trust: what may run, and where
    if decision.refusal:
        return Verdict(Status.UNVERIFIED, decision.refusal)
    resolved = _resolve_all(spec)
    if isinstance(resolved, Verdict):
        return resolved
    try:
        reference = _reference(spec, references)
    except ReferenceError as error:
        return Verdict(Status.REFERENCE_ERROR, str(error))
    healthy = False
    try:
        verdict = _verify_loaded(spec, options, handle, folder, guard, cancel, progress,
                                 resolved, reference, references)
        healthy = verdict.status != Status.REFERENCE_ERROR
        return verdict
    finally:
        if references is None:
            reference.close()
        else:
            references.done(reference, healthy)


def _verify_loaded(spec: Spec, options: VerifyOptions, handle: WorkerHandle, folder: Path,
                   guard: int, cancel: threading.Event | None, progress: Progress,
                   resolved: list[Resolved], reference: Reference,
                   references: ReferencePool | None) -> Verdict:
    """verify_with once the reference is loading: worker, compile, every run."""
    started = _start_and_compile(spec, options, handle, folder, guard, progress, resolved)
    if isinstance(started, Verdict):
        return started
    device, prepared = started
    try:
        reference.wait()  # it loaded while the worker started (or was warm already)
    except ReferenceError as error:
        return Verdict(Status.REFERENCE_ERROR, str(error))
    ctx = RunContext(spec, options, handle, prepared, folder, guard, reference, cancel,
                     references)
    runs = _run_all(ctx, resolved, progress)
    if isinstance(runs, Verdict):
        runs.backend, runs.device = handle.backend, device
        return runs
    if overall_status(runs) == Status.PASSED and handle.backend == "cpu" and guard:
        progress("checking the edges of every buffer", 0.99)
        failed = edge_runs(ctx, resolved, runs[0].seed)
        runs += [failed] if failed else []
    elif overall_status(runs) == Status.GUARD_ZONE and handle.backend == "cpu" and guard:
        progress("finding the thread and line that wrote outside the buffer", 0.99)
        runs = locate_guard_zone(ctx, resolved, runs)
    status = overall_status(runs)
    return Verdict(status, _summary(status, runs), handle.backend, device,
                   runs=runs, diagnostics=prepared.diagnostics,
                   emulated=device.get("kind") == "emulation")


def _start_and_compile(spec: Spec, options: VerifyOptions, handle: WorkerHandle, folder: Path,
                       guard: int, progress: Progress,
                       resolved: list[Resolved]) -> tuple[dict[str, Any], Prepared] | Verdict:
    """A live worker, its device, and the kernel compiled for it; or the verdict saying why
    not (a case too big for this machine is refused before anything is compiled or run)."""
    progress("starting the worker" + (" (the first time, the CPU emulation runtime is "
                                      "built too: a few seconds)"
                                      if handle.backend == "cpu" else ""), 0.0)
    try:
        worker = handle.ensure(readable=spec.base_dir)  # a sandbox's view is fixed at start
    except WorkerFault as fault:
        return Verdict(Status.UNVERIFIED, str(fault), backend=handle.backend)
    device = codec.from_data(HelloReply, worker.info, "hello reply").device
    progress("compiling the kernel", 0.02)
    ahead = _build_ahead(spec) if handle.backend == "cpu" else None
    try:
        prepared = memory.refusal(spec, resolved, device, folder, guard) or \
            _prepare(spec, options, handle.backend, device, folder)
    finally:
        if ahead is not None:
            ahead.join()
    if isinstance(prepared, Verdict):
        prepared.backend, prepared.device = handle.backend, device
        return prepared
    return device, prepared


def _build_ahead(spec: Spec) -> threading.Thread:
    """Start building the CPU backend's library of each entry while the GPU compiler checks
    the kernel. Why: each waits on a process of its own (the host compiler; NVRTC's child), so
    on two cores they overlap, and an edit's verify waits for the longer instead of both. The
    load builds again where this failed or is not done; it finds the library this built, and
    reports any failure where it always has."""

    def build_each() -> None:
        for entry in spec.entries:
            try:
                cpu_build.prebuild(codec.to_object(LoadRequest.of(source_ref(spec, entry))))
            except Exception:  # noqa: BLE001 - the load builds again and reports it
                return

    thread = threading.Thread(target=build_each, name="cpu-build-ahead", daemon=True)
    thread.start()
    return thread


def _prepare(spec: Spec, options: VerifyOptions, backend: str, device: dict[str, Any],
             folder: Path) -> Prepared | Verdict:
    """Compile for the device's arch (the selftest backend runs named behaviours instead)."""
    if backend == "selftest":
        return Prepared(spec.entry, None)
    arch = device.get("arch") if device.get("kind") == "gpu" else options.arch
    return compile_for(spec, arch, folder, options.compiler)


def _run_all(ctx: RunContext, resolved: list[Resolved],
             progress: Progress) -> list[RunResult] | Verdict:
    """Every case and seed; stops early after a timeout, crash or cancel. The next run's
    inputs and expected values are staged while a run's kernel executes (app.engine.verify
    .ahead), when two cases' worth of them fit comfortably in memory."""
    # Every case sees zero-filled outputs and the poison at least once (seeds.plan_runs); a
    # replay (only_seeds) runs exactly its seeds, each with the start it had.
    cover = not ctx.options.only_seeds and not ctx.options.uninitialized_outputs
    plan = plan_runs(ctx.options.seed_list(ctx.spec), cover)
    tasks = [(index, case, seed, start) for index, case in enumerate(resolved)
             for seed, start in plan]
    ahead = Ahead([partial(stage, ctx, index, case, seed) for index, case, seed, _ in tasks],
                  lambda k: memory.need(ctx.spec, tasks[k][1], ctx.guard).host <= AHEAD_BYTES)
    progress("loading the kernel into the worker" + (" (the CPU backend builds it on first use)"
                                                     if ctx.handle.backend == "cpu" else ""),
             0.05)
    try:
        return _run_tasks(ctx, tasks, ahead, len(plan), progress)
    finally:
        ahead.close(partial(_interrupt, ctx.reference))


def _run_tasks(ctx: RunContext, tasks: list[tuple[int, Resolved, int, Start]],
               ahead: Ahead[Staged], per_case: int,
               progress: Progress) -> list[RunResult] | Verdict:
    """The runs of _run_all, in order."""
    runs: list[RunResult] = []
    for position, (index, case, seed, start) in enumerate(tasks):
        progress(f"case {index + 1}/{len(tasks) // per_case}, seed "
                 f"{position % per_case + 1}/{per_case}", position / len(tasks))
        try:
            run = memory.guarded(partial(run_one, ctx, index, case, seed,
                                         partial(ahead.take, position), start=start),
                                 case.case, seed)
        except ReferenceError as error:
            return Verdict(Status.REFERENCE_ERROR, f"case {case.case} seed {seed}: {error}")
        runs.append(run)
        if run.status in STOPPING:
            return runs
    progress("done", 1.0)
    return runs


# How the CPU runtime describes a fault outside a buffer's memory.
OUTSIDE_A_BUFFER = ("bytes past the end of the allocation", "bytes before the allocation")
RACE = ("with the threads of each block run in descending order (a GPU promises no order), the "
        "kernel failed: a race between its threads, such as a shared value read without "
        "__syncthreads() after another thread wrote it")


def edge_runs(ctx: RunContext, resolved: list[Resolved], seed: int) -> RunResult | None:
    """Every case once more with each buffer's data placed against inaccessible memory at its
    end, and once at its start with each block's threads in descending order; the first run
    that fails, or None. Why: a kernel that reads just past a buffer and writes the same bytes
    back leaves the guard zones as they were, so it passes every check above, but faults here;
    a race whose writer thread runs first in the usual order passes there."""
    for index, case in enumerate(resolved):
        failure = _end_failure(ctx, index, case, seed) or \
            _start_failure(ctx, index, case, seed)
        if failure is not None:
            return failure
    return None


def _edge_run(ctx: RunContext, index: int, case: Resolved, seed: int, edge: Edge,
              descending: bool = False) -> RunResult:
    """One edge run of a case."""
    return memory.guarded(partial(run_one, ctx, index, case, seed, None, edge, descending),
                          case.case, seed)


def _end_failure(ctx: RunContext, index: int, case: Resolved, seed: int) -> RunResult | None:
    """The data exactly at its end, where a read one byte past it faults; only when that run
    failed some other way (a vector load refused at an alignment of one element, say) the data's
    end rounded up to 16 bytes, which keeps the start aligned for vector loads. Where the exact
    run passes, the rounded one could only find what an access into its few extra bytes finds
    (none faults there) or a path taken only at 16-byte alignment, which the usual runs take
    (their data are page-aligned): one run instead of two for most kernels."""
    exact = _edge_run(ctx, index, case, seed, Edge.EXACT)
    if exact.passed:
        return None
    failure = _edge_failure(ctx, case, exact, Edge.EXACT)
    if failure is not None:
        return failure
    end = _edge_run(ctx, index, case, seed, Edge.END)
    return None if end.passed else _edge_failure(ctx, case, end, Edge.END)


def _start_failure(ctx: RunContext, index: int, case: Resolved, seed: int) -> RunResult | None:
    """The data at its start, with each block's threads in descending order: two checks in one
    run, told apart by how it fails. With the start placed so, an access before it can only
    fault (the data keeps the usual run's alignment and guard zone after its end), so any other
    failure is the order's."""
    run = _edge_run(ctx, index, case, seed, Edge.START, descending=True)
    if run.passed:
        return None
    if run.status == Status.CRASH and any(t in run.message for t in OUTSIDE_A_BUFFER):
        return _edge_failure(ctx, case, run, Edge.START)
    return replace(run, message=RACE + (f": {run.message}" if run.message else ""))


def _edge_failure(ctx: RunContext, case: Resolved, run: RunResult,
                  edge: Edge) -> RunResult | None:
    """A failed edge run; a fault there is an access outside a buffer (a guard_zone verdict)
    that wrote back what it read. An "exact" run counts only for such a fault: its data is
    aligned to its element alone, and a vector load a GPU's alignment allows may fault."""
    outside = run.status == Status.CRASH and any(t in run.message for t in OUTSIDE_A_BUFFER)
    if edge == "exact" and not outside:
        return None
    if run.status != Status.CRASH:
        return run
    where = outside_words.where(run.message, ctx.spec, case, ctx.guard, edge) if outside \
        else None
    if where is not None:  # one sentence saying who and where, then why only this run saw it
        return replace(run, status=Status.GUARD_ZONE, message=(
            f"{where}. It left the guard zone as it was (it wrote back what it read, or only "
            f"read it), so the usual runs passed; with every buffer placed against "
            f"inaccessible memory, the access faulted"))
    side = "before the start" if edge == "start" else "past the end"
    return replace(run, status=Status.GUARD_ZONE, message=(
        f"the kernel accessed memory {side} of a buffer: it left the guard zone as it was "
        f"(it wrote back what it read, or only read it), but with the buffer placed against "
        f"inaccessible memory there it faulted: {faults.without_pc(run.message)}"))


def locate_guard_zone(ctx: RunContext, resolved: list[Resolved],
                      runs: list[RunResult]) -> list[RunResult]:
    """The runs, the first guard_zone one naming the thread and source line of the first
    access outside a buffer (CPU backend): its case and seed again, with every buffer placed
    against inaccessible memory on the side whose guard zone changed, where that access
    faults. Unchanged when the repeat does not fault so."""
    first = next(k for k, r in enumerate(runs) if r.status == Status.GUARD_ZONE)
    run = runs[first]
    index = next((k for k, c in enumerate(resolved) if c.case == run.case), None)
    finding = next((f for f in run.findings if f.kind == Status.GUARD_ZONE), None)
    if index is None or finding is None:
        return runs
    edge = Edge.EXACT if finding.first_indices else Edge.START  # past the end: indices listed
    start = Start(run.start) if run.start in Start.__members__.values() else None
    repeat = memory.guarded(partial(run_one, ctx, index, resolved[index], run.seed, None, edge,
                                    start=start), run.case, run.seed)
    where = outside_words.where(repeat.message, ctx.spec, resolved[index], ctx.guard, edge) \
        if repeat.status == Status.CRASH else None
    if where is None:
        return runs
    located = replace(run, message=f"{where} (the first access outside a buffer, found by "
                                   f"running this case again with every buffer placed against "
                                   f"inaccessible memory)")
    return [*runs[:first], located, *runs[first + 1:]]


def _interrupt(reference: Callable[..., Any]) -> None:
    """Stop a reference process that is still computing outputs nobody will check."""
    if isinstance(reference, Reference):
        reference.interrupt()


def _summary(status: str, runs: list[RunResult]) -> str:
    """One line for the verdict."""
    if status == Status.PASSED:
        return f"all {len(runs)} runs passed"
    first = next(r for r in runs if not r.passed)
    detail = first.message or (first.findings[0].message if first.findings else "")
    return f"{first.title()}" + (f": {detail}" if detail else "")
