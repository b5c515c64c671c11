"""The forward-timing process: `python -P -m app.engine.bench.forward_child PROBLEM SCRATCH`,
started by app.engine.bench.torch_forward (inside the sandbox, with the GPU's device nodes,
where one can be had; else only for a folder the user trusted).

It reads one ForwardRequest on stdin, loads the KernelBench problem file (someone else's code),
builds its Model (get_init_inputs, or the task's recorded init), puts the inputs on the GPU (the
kernel's own bench inputs when forward's parameters are named as the spec's inputs, else the
problem's get_inputs()), and times forward, eager and under torch.compile, with the sampling loop
every backend uses (app.engine.worker.backends.sampler): warm-up, then per sample the L2 flushed
(cold mode), a spin kernel that keeps the GPU busy while the host queues the call, and one
CUDA event pair around the call. The two forms are sampled interleaved (ABAB...). Whatever the
problem does wrong becomes a reply that says so; the parent decides what it means.
"""

from __future__ import annotations

import importlib.util
import inspect
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from app.base import codec
from app.engine.bench.forward_messages import (
    COMPILE,
    EAGER,
    ForwardReply,
    ForwardRequest,
    InputFile,
    VariantSamples,
)
from app.engine.verify.reference_child import die_with_parent
from app.engine.worker.backends.sampler import run_sampling
from app.engine.worker.timing import TimingMode, TimingPlan
from app.isolation import offline

MIB = 1 << 20
DEVICE = "cuda"
REQUEST_LIMIT = 1 << 20
# The spin covers the host's time to queue one forward with a margin, within these bounds
# (a forward is many launches, so the ceiling is far above the one-kernel timer's).
SPIN_FLOOR_NS = 20_000
SPIN_CEILING_NS = 50_000_000
SPIN_MARGIN = 3.0
CALIBRATION_CYCLES = 2_000_000
MESSAGE_LIMIT = 400
VISIBLE_VARIABLE = "KERNEL_STUDIO_CUDA_VISIBLE_DEVICES"
TORCH_DTYPES = ("float32", "float16", "bfloat16", "float64", "int8", "uint8", "int16",
                "int32", "int64", "bool")


class Refused(Exception):
    """What the problem (or this machine) did wrong, in words for the user."""


def _short(error: BaseException) -> str:
    """An exception as one bounded line."""
    text = " ".join(str(error).split()) or type(error).__name__
    return f"{type(error).__name__}: {text}"[:MESSAGE_LIMIT]


def _where(error: BaseException, path: Path) -> str:
    """' (problem.py line N)' for the last frame inside the problem file, when there is one."""
    frames = [f for f in _frames(error) if f[0] == str(path)]
    return f" ({path.name} line {frames[-1][1]})" if frames else ""


def _frames(error: BaseException) -> list[tuple[str, int]]:
    """(file, line) of every frame of an exception's traceback."""
    found, tb = [], error.__traceback__
    while tb is not None:
        found.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    return found


def load_problem(path: Path) -> ModuleType:
    """The problem file as a module (Refused when it cannot be loaded)."""
    spec = importlib.util.spec_from_file_location("kernelbench_problem", path)
    if spec is None or spec.loader is None:
        raise Refused(f"{path.name} cannot be loaded as Python")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except BaseException as error:  # noqa: BLE001 - the problem's failure is reported
        raise Refused(f"{path.name} failed to load: {_short(error)}{_where(error, path)}") \
            from None
    if not callable(getattr(module, "Model", None)):
        raise Refused(f"{path.name} defines no class Model")
    return module


def _guarded(path: Path, doing: str, action: Callable[[], Any]) -> Any:
    """Run a step of the problem's code; Refused naming the step when it raises."""
    try:
        return action()
    except BaseException as error:  # noqa: BLE001 - see _guarded's callers
        raise Refused(f"the problem raised {_short(error)}{_where(error, path)} while "
                      f"{doing}") from None


def _torch_dtype(torch: Any, name: str) -> Any:
    """The torch dtype of a spec dtype name."""
    if name not in TORCH_DTYPES:
        raise Refused(f"an input of dtype {name} cannot be given to PyTorch")
    return getattr(torch, name)


def read_input(torch: Any, item: InputFile, scratch: Path) -> Any:
    """One input file as a tensor on the GPU (its size checked against its shape first)."""
    dtype = _torch_dtype(torch, item.dtype)
    path = scratch / Path(item.file).name
    data = bytearray(path.read_bytes())
    wanted = math.prod(item.shape) * torch.empty((), dtype=dtype).element_size()
    if len(data) != wanted:
        raise Refused(f"the input file of {item.name} holds {len(data)} bytes, not {wanted}")
    if not data:
        return torch.empty(item.shape, dtype=dtype, device=DEVICE)
    return torch.frombuffer(data, dtype=dtype).reshape(item.shape).to(DEVICE)


def _parameters(model: Any) -> list[str] | None:
    """forward's parameter names, or None when it takes *args or **kwargs."""
    try:
        parameters = inspect.signature(model.forward).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters):
        return None
    return [p.name for p in parameters]


def forward_inputs(torch: Any, module: ModuleType, model: Any, request: ForwardRequest,
                   scratch: Path, path: Path) -> tuple[list[Any], str]:
    """The forward's inputs on the GPU, and where they came from: the kernel's bench inputs
    when every forward parameter is one of them, else the problem's get_inputs()."""
    files = {item.name: item for item in request.inputs}
    names = _parameters(model)
    if names is not None and names and all(n in files for n in names):
        return [read_input(torch, files[n], scratch) for n in names], \
            "the kernel's bench inputs (seed 0)"
    if not callable(getattr(module, "get_inputs", None)):
        raise Refused(f"forward's parameters {names} are not the spec's inputs and "
                      f"{path.name} has no get_inputs()")
    torch.manual_seed(request.seed)
    made = _guarded(path, "running get_inputs()", module.get_inputs)
    moved = [x.to(DEVICE) if isinstance(x, torch.Tensor) else x for x in made]
    return moved, f"the problem's get_inputs() (seed {request.seed})"


def build_model(torch: Any, module: ModuleType, request: ForwardRequest, path: Path) -> Any:
    """The Model on the GPU, built as KernelBench builds it: seeded, with get_init_inputs()
    (or the task's recorded init when the problem has none)."""
    init: list[Any] = list(request.recorded_init or [])
    if callable(getattr(module, "get_init_inputs", None)):
        torch.manual_seed(request.seed)
        init = list(_guarded(path, "running get_init_inputs()", module.get_init_inputs))
    torch.manual_seed(request.seed)
    model = _guarded(path, "building the Model", lambda: module.Model(*init))
    return _guarded(path, "moving the Model to the GPU", lambda: model.to(DEVICE).eval())


def compiled_call(torch: Any, model: Any, inputs: list[Any]) -> tuple[Callable[[], Any] | None,
                                                                      str]:
    """forward under torch.compile (inductor, default mode, as KernelBench's baseline), run
    once so that compiling happens here and not in a timed sample; or None and why not."""
    try:
        torch._dynamo.reset()
        compiled = torch.compile(model)
        compiled(*inputs)
        torch.cuda.synchronize()
    except Exception as error:  # noqa: BLE001 - a failed compile is reported; eager goes on
        return None, _short(error)
    return (lambda: compiled(*inputs)), ""


def flush_bytes(l2_bytes: int | None) -> int:
    """Twice the L2 (64 MiB when unknown), whole MiB: as the pycuda timer flushes."""
    twice = 2 * l2_bytes if l2_bytes else 64 * MIB
    return -(-twice // MIB) * MIB


class TorchTimer:
    """The sampling loop's Timer (backends.sampler) over calls of the forward."""

    def __init__(self, torch: Any, calls: list[Callable[[], Any]], plan: TimingPlan) -> None:
        """The flush buffers (cold mode), the events, and the spin's calibration."""
        self.torch = torch
        self.calls = calls
        self.l2_bytes = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", None)
        self.flush_bytes = flush_bytes(self.l2_bytes) if plan.mode == TimingMode.COLD else 0
        if self.flush_bytes:
            self.write_buffer = torch.empty(self.flush_bytes, dtype=torch.uint8, device=DEVICE)
            self.read_buffer = torch.zeros(self.flush_bytes // 4, device=DEVICE)
            self.sink = torch.zeros((), device=DEVICE)
        self.flushes = 0
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)
        self.sleep: Callable[[int], None] | None = getattr(torch.cuda, "_sleep", None)
        self.cycles_per_ms = self._calibrate() if self.sleep is not None else None
        self.enqueue_ns: list[list[float]] = [[] for _ in calls]
        self.spin_ns: int | None = None

    def _calibrate(self) -> float | None:
        """GPU clock cycles per millisecond of the spin kernel, measured."""
        assert self.sleep is not None
        self.sleep(1000)
        self.torch.cuda.synchronize()
        self.start.record()
        self.sleep(CALIBRATION_CYCLES)
        self.end.record()
        self.end.synchronize()
        elapsed = float(self.start.elapsed_time(self.end))
        return CALIBRATION_CYCLES / elapsed if elapsed > 0 else None

    def launch(self, variant: int) -> None:
        """One untimed call (warm-up), noting how long the host takes to queue it."""
        started = time.perf_counter_ns()
        self.calls[variant]()
        self.enqueue_ns[variant].append(float(time.perf_counter_ns() - started))
        self.torch.cuda.synchronize()

    def _spin_time(self) -> int:
        """How long the spin runs: a margin over the slowest form's usual enqueue time."""
        if self.spin_ns is None:
            typical = [t for times in self.enqueue_ns for t in (times[1:] or times)] or [0.0]
            wanted = SPIN_MARGIN * float(np.percentile(typical, 90)) + SPIN_FLOOR_NS
            self.spin_ns = int(min(max(wanted, SPIN_FLOOR_NS), SPIN_CEILING_NS))
        return self.spin_ns

    def prepare_sample(self, variant: int) -> None:
        """Flush L2 (write one buffer, read another), then start the spin."""
        if self.flush_bytes:
            self.write_buffer.fill_(self.flushes & 0xFF)
            self.flushes += 1
            self.torch.sum(self.read_buffer, dim=0, out=self.sink)
        if self.sleep is not None and self.cycles_per_ms:
            self.sleep(int(self._spin_time() / 1e6 * self.cycles_per_ms))

    def timed_launch(self, variant: int) -> float:
        """One call between two events; milliseconds."""
        self.start.record()
        self.calls[variant]()
        self.end.record()
        self.end.synchronize()
        return float(self.start.elapsed_time(self.end))

    def launch_split(self, variant: int) -> list[float]:
        """A forward is timed whole: no parts (the sampler asks only under --per-launch)."""
        return []

    def snapshot(self, variant: int) -> None:
        """Nothing to keep: the forward's outputs are not checked here."""

    def clock_mhz(self, during: bool) -> float | None:
        """No clock reading from PyTorch."""
        return None

    def facts(self) -> dict[str, Any]:
        """How the timing was done."""
        return {"timer": "CUDA events around each call, one pair per sample",
                "l2_bytes": self.l2_bytes, "flush_bytes": self.flush_bytes,
                "flush": "write then read" if self.flush_bytes else "none (hot)",
                "spin": "torch.cuda._sleep" if self.cycles_per_ms else "none",
                "spin_us": self.spin_ns / 1000.0 if self.spin_ns else None}

    def enqueue_us(self, variant: int) -> float | None:
        """The median host time to queue one call of a form, in microseconds."""
        times = self.enqueue_ns[variant][1:] or self.enqueue_ns[variant]
        return float(np.median(times)) / 1000.0 if times else None


def _device_facts(torch: Any) -> dict[str, Any]:
    """The GPU and the library versions."""
    return {"device": torch.cuda.get_device_name(0), "torch": str(torch.__version__),
            "torch_cuda": str(torch.version.cuda)}


def _once(torch: Any, model: Any, inputs: list[Any]) -> None:
    """One forward, waited for (so that an error of its kernels shows here)."""
    model(*inputs)
    torch.cuda.synchronize()


def serve(path: Path, scratch: Path, request: ForwardRequest) -> ForwardReply:
    """Build, warm up and time the forward; the reply says what was measured."""
    try:
        import torch
    except ImportError as error:
        raise Refused(f"PyTorch cannot be imported here: {error}") from None
    plan = TimingPlan.from_message(request.plan)
    module = load_problem(path)
    if not torch.cuda.is_available():
        raise Refused(f"torch {torch.__version__} sees no CUDA device here (CUDA "
                      f"{torch.version.cuda or 'not built in'}): the forward needs a GPU")
    with torch.no_grad():
        model = build_model(torch, module, request, path)
        inputs, source = forward_inputs(torch, module, model, request, scratch, path)
        _guarded(path, "running forward", lambda: _once(torch, model, inputs))
        calls, names = [lambda: model(*inputs)], [EAGER]
        compile_error = "not asked for"
        if request.compile:
            compiled, compile_error = compiled_call(torch, model, inputs)
            if compiled is not None:
                calls.append(compiled)
                names.append(COMPILE)
        timer = TorchTimer(torch, calls, plan)
        outcome = _guarded(path, "timing forward", lambda: run_sampling(timer, len(calls), plan))
    variants = [VariantSamples(name, list(outcome.samples_ms[i]), outcome.warmup_launches[i],
                               timer.enqueue_us(i)) for i, name in enumerate(names)]
    facts = {**_device_facts(torch), **timer.facts(), "inputs": source, "mode": plan.mode}
    return ForwardReply(True, variants=variants, compile_error=compile_error,
                        stop_reason=str(outcome.stop_reason), sampling_ms=outcome.sampling_ms,
                        facts=facts)


def answer(path: Path, scratch: Path, text: bytes) -> ForwardReply:
    """The reply to one request, whatever happens."""
    try:
        request = codec.loads(ForwardRequest, text, "forward request")
        return serve(path, scratch, request)
    except Refused as refused:
        return ForwardReply(False, str(refused))
    except codec.CodecError as error:
        return ForwardReply(False, f"the request could not be read: {error}")
    except BaseException as error:  # noqa: BLE001 - a reply, never a traceback
        return ForwardReply(False, f"timing the forward failed: {_short(error)}"
                                   f"{_where(error, path)}")


def main(argv: list[str] | None = None) -> int:
    """Entry point: PROBLEM SCRATCH. The reply goes to a private copy of stdout; whatever the
    problem prints goes to stderr."""
    die_with_parent()
    offline.enforce()  # the problem is code from elsewhere: no socket leaves this process
    path, scratch = (Path(a) for a in (argv if argv is not None else sys.argv[1:]))
    visible = os.environ.get(VISIBLE_VARIABLE)
    if visible is not None:  # the sandbox passes only our own variables
        os.environ["CUDA_VISIBLE_DEVICES"] = visible
    # torch.compile's caches go to the scratch folder (removed afterwards), never to a cache
    # shared with other runs; and getpass.getuser(), which inductor asks, finds no passwd
    # entry inside a sandbox.
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(scratch / "inductor")
    os.environ["TRITON_CACHE_DIR"] = str(scratch / "triton")
    os.environ.setdefault("USER", "kernel-studio")
    sys.pycache_prefix = str(scratch / "pycache")
    sys.dont_write_bytecode = True
    channel = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    reply = answer(path, scratch, sys.stdin.buffer.read(REQUEST_LIMIT))
    channel.write((codec.dumps(reply) + "\n").encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
