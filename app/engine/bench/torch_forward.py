"""Timing a KernelBench problem's own PyTorch forward on a GPU, eager and under torch.compile,
on the same inputs as the kernel's bench case (KernelBench's baselines), so that a kernel's
speedup over each can be set beside the figures KernelBench publishes.

The problem file (problem.py beside the task's spec) is someone else's code: it runs only in a
process of its own (app.engine.bench.forward_child), inside the sandbox with the GPU's device
nodes where a sandbox can be had, else only when the trust rule allows it (app.isolation.trust),
exactly as the task's reference does during verify. Without a GPU nothing runs: the timing is
refused with the reason, as bench refuses the CPU backend.

Method: the same as the kernel's timer (app.engine.worker.backends.pycuda_timer, through the same
sampling loop): warm-up, then per sample L2 flushed (cold mode), a spin kernel covering the
host's time to queue the call, one CUDA event pair around the whole forward. The speedup is the
ratio of medians (the forward's over the kernel's) with its seeded bootstrap interval
(app.engine.bench.stats). KernelBench itself times with events around the call without a spin
and takes means; see docs in the README's KernelBench part.
"""

from __future__ import annotations

import ast
import glob
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from app.base import codec
from app.base.paths import ROOT
from app.engine.bench.forward_messages import (
    COMPILE,
    EAGER,
    ForwardReply,
    ForwardRequest,
    InputFile,
)
from app.engine.bench.reports import format_ms
from app.engine.bench.stats import RatioInterval, Stats, bootstrap_ratio, summarize
from app.engine.verify import buffers
from app.engine.verify.results import Status, exit_code_for
from app.engine.worker import backends
from app.engine.worker.timing import TimingPlan
from app.isolation import sandbox, trust
from app.spec.cases import CaseError, resolve
from app.spec.model import Case, Spec

PROBLEM_FILE = "problem.py"
# Building the Model, torch.compile (tens of seconds for a large graph) and the sampling.
FORWARD_TIMEOUT_S = 900.0
CPU_SECONDS = 7200
REPLY_LIMIT = 16 << 20
STDERR_TAIL = 800
GIB = 1 << 30
# The kernel's bench draws its first input set with this seed (app.engine.bench.points).
INPUT_SEED = 0
NO_GPU = ("timing PyTorch's forward needs an NVIDIA GPU: the CPU backend runs kernels for "
          "correctness only, and KernelBench's baselines are GPU times")
NOT_KERNELBENCH = ("{spec} is not a task imported from KernelBench (no problem.py beside it): "
                   "make one with `kernel-studio import kernelbench PROBLEM.py --out tasks/`")


@dataclass(frozen=True)
class ForwardOptions:
    """Where and how to time the forward."""

    backend: str = "auto"
    plan: TimingPlan = field(default_factory=TimingPlan)
    compile: bool = True
    # None: app.isolation.trust decides; True: the caller vouches for the task's folder.
    trusted: bool | None = None
    timeout: float = FORWARD_TIMEOUT_S


@dataclass(frozen=True)
class FormTiming:
    """One form of the forward (eager or compile): every sample and their summary."""

    name: str
    samples_ms: list[float]
    stats: Stats
    warmup_launches: int = 0
    enqueue_us: float | None = None


@dataclass
class ForwardTiming:
    """What timing the forward found: status "timed" with the forms timed (eager first), or
    the reason nothing was timed; `compile_error` says why torch.compile was left out."""

    status: Status
    message: str
    case: dict[str, int | float] = field(default_factory=dict)
    forms: list[FormTiming] = field(default_factory=list)
    compile_error: str = ""
    stop_reason: str = ""
    sampling_ms: float = 0.0
    sandboxed: bool = False
    facts: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def exit_code(self) -> int:
        """0 timed, 2 not a KernelBench task or the problem failed, 3 no GPU or not trusted."""
        return exit_code_for(self.status, Status.TIMED)

    def form(self, name: str) -> FormTiming | None:
        """The form of that name, when it was timed."""
        return next((f for f in self.forms if f.name == name), None)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data, with every sample."""
        return codec.to_object(self)

    def describe(self) -> str:
        """The timing for people."""
        if self.status != Status.TIMED:
            return f"PyTorch forward not timed: {self.message}"
        lines = [f"PyTorch forward on {self.facts.get('device', 'the GPU')} (torch "
                 f"{self.facts.get('torch', '?')}), inputs: {self.facts.get('inputs', '?')}"]
        for form in self.forms:
            s = form.stats
            lines.append(f"  {form.name:<8} median {format_ms(s.median)} (p10..p90 "
                         f"{format_ms(s.p10)}..{format_ms(s.p90)}), {s.count} samples")
        if self.form(COMPILE) is None:
            lines.append(f"  torch.compile not timed ({self.compile_error}): eager only")
        return "\n".join(lines)


@dataclass(frozen=True)
class Speedup:
    """The kernel's speedup over one form of the forward: the forward's median time over the
    kernel's, with the bootstrap interval of that ratio."""

    baseline: str
    speedup: float
    low: float
    high: float
    level: float

    @classmethod
    def of(cls, baseline: str, interval: RatioInterval) -> Speedup:
        """From bootstrap_ratio(forward samples, kernel samples)."""
        return cls(baseline, interval.ratio, interval.low, interval.high, interval.level)

    def describe(self) -> str:
        """'3.21x over eager (95% CI 3.18..3.25)'."""
        words = "torch.compile" if self.baseline == COMPILE else "eager PyTorch"
        return (f"speedup over {words}: {self.speedup:.3g}x ({self.level:.0%} CI "
                f"{self.low:.3g}..{self.high:.3g})")


def speedups(kernel_ms: list[float], forward: ForwardTiming, seed: int = 0) -> list[Speedup]:
    """The kernel's speedup over every form of the forward that was timed."""
    if not kernel_ms or forward.status != Status.TIMED:
        return []
    return [Speedup.of(f.name, bootstrap_ratio(f.samples_ms, kernel_ms, seed=seed))
            for f in forward.forms]


def problem_file(spec: Spec) -> Path | None:
    """The KernelBench problem beside a task's spec, when there is one."""
    path = spec.base_dir / PROBLEM_FILE
    return path if path.is_file() else None


def recorded_init(spec: Spec) -> list[Any] | None:
    """The init inputs the task's reference records (`INIT_INPUTS = [...]`), read as a
    literal without running anything; None when it records none."""
    try:
        tree = ast.parse(spec.reference_path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return None
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] \
                == ["INIT_INPUTS"]:
            try:
                value = ast.literal_eval(node.value)
            except (ValueError, SyntaxError, TypeError):
                return None
            return list(value) if isinstance(value, list | tuple) else None
    return None


def gpu_refusal(backend: str) -> str | None:
    """Why the forward cannot be timed on this machine with this backend, or None."""
    if backend == "cpu":
        return NO_GPU
    if backend not in ("auto", "pycuda"):
        return f"{NO_GPU} (the backend {backend!r} is not a GPU)"
    chosen, reason = backends.choose("pycuda")
    return None if chosen else f"{NO_GPU} ({reason})"


def gpu_devices() -> list[str]:
    """The GPU's device nodes a sandboxed forward needs (the driver's /dev/nvidia*)."""
    return sorted(glob.glob("/dev/nvidia*"))


def _write_inputs(spec: Spec, case: Case, scratch: Path) -> list[InputFile]:
    """The kernel's first bench input set at this case, as raw files (CaseError when the
    case cannot be resolved)."""
    resolved = resolve(spec, case)
    inputs = buffers.generate_inputs(spec, resolved, INPUT_SEED, 0)
    dtypes = {arg.name: arg.dtype for arg in spec.args}
    files = []
    for index, (name, array) in enumerate(inputs.items()):
        file = f"in-{index}.bin"
        sandbox.write_shared(scratch / file, array)
        files.append(InputFile(name, file, dtypes[name], [int(n) for n in array.shape]))
    return files


def _environment() -> dict[str, str]:
    """The child's environment: ours for Python, CUDA_VISIBLE_DEVICES under a name the sandbox
    passes on (the child sets it back), so the forward runs on the kernel's GPU."""
    env = sandbox.python_environment(os.environ, ROOT)
    if "CUDA_VISIBLE_DEVICES" in os.environ:
        env["KERNEL_STUDIO_CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
    return env


def child_command(problem: Path, scratch: Path, env: dict[str, str],
                  sandboxed: bool) -> list[str]:
    """The child's command line: inside a sandbox that reads Python and the task's folder,
    writes only its scratch folder and may open the GPU, when `sandboxed`."""
    command = sandbox.python_command("-m", "app.engine.bench.forward_child", str(problem),
                                     str(scratch))
    if not sandboxed:
        return command
    # torch.compile starts compile workers with threads of their own, and keeps its caches
    # (in the scratch folder) in files of some size.
    limits = sandbox.Limits(data=sandbox.memory_share(), cpu_seconds=CPU_SECONDS,
                            file_size=4 * GIB, open_files=4096, processes=4096)
    box = sandbox.Sandbox(read_only=[*sandbox.python_paths(), problem.parent.resolve()],
                          writable=[scratch], limits=limits, cwd=scratch, env=env,
                          tmp_bytes=4 * GIB, devices=gpu_devices())
    return box.command(command)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Kill the child's whole session."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
    process.wait()


def _tail(stream: IO[bytes]) -> str:
    """The end of what the child printed."""
    stream.seek(0)
    text = stream.read()[-STDERR_TAIL:].decode("utf-8", "replace").strip()
    return f": {text}" if text else ""


def run_child(command: list[str], request: ForwardRequest, env: dict[str, str], cwd: Path,
              timeout: float, sandboxed: bool) -> ForwardReply:
    """Start the child, send the request, wait for its reply within the time limit."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=out, stderr=err,
                                   start_new_session=True, env=env, cwd=str(cwd))
        try:
            process.communicate((codec.dumps(request) + "\n").encode(), timeout=timeout)
        except subprocess.TimeoutExpired:
            _stop(process)
            return ForwardReply(False, f"timing the forward took more than {timeout:g} s and "
                                       "was stopped")
        out.seek(0)
        lines = out.read(REPLY_LIMIT).decode("utf-8", "replace").strip().splitlines()
        if lines:
            try:
                return codec.loads(ForwardReply, lines[-1], "forward reply")
            except codec.CodecError as error:
                return ForwardReply(False, f"the forward's process sent garbage: {error}")
        code = sandbox.exit_status(process.returncode) if sandboxed else process.returncode
        how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
        return ForwardReply(False, f"the forward's process ended ({how}) without a reply"
                                   f"{_tail(err)}")


def _timing(reply: ForwardReply, case: Case, sandboxed: bool) -> ForwardTiming:
    """The report of a reply."""
    if not reply.ok:
        return ForwardTiming(Status.REFERENCE_ERROR, reply.message, dict(case),
                             sandboxed=sandboxed)
    forms = [FormTiming(v.name, list(v.samples_ms), summarize(v.samples_ms), v.warmup_launches,
                        v.enqueue_us) for v in reply.variants if v.samples_ms]
    if not forms or forms[0].name != EAGER:
        return ForwardTiming(Status.REFERENCE_ERROR, "the forward's process timed nothing",
                             dict(case), sandboxed=sandboxed)
    return ForwardTiming(Status.TIMED, "timed", dict(case), forms, reply.compile_error,
                         reply.stop_reason, reply.sampling_ms, sandboxed, dict(reply.facts))


def _refusal(spec: Spec, options: ForwardOptions) -> ForwardTiming | None:
    """Why nothing may run, before anything does: not a KernelBench task, no GPU, not trusted."""
    if problem_file(spec) is None:
        name = spec.path.name if spec.path else str(spec.base_dir)
        return ForwardTiming(Status.SPEC_ERROR, NOT_KERNELBENCH.format(spec=name))
    refused = gpu_refusal(options.backend)
    if refused:
        return ForwardTiming(Status.UNVERIFIED, refused)
    decision = trust.decide(spec, options.trusted)
    if decision.refusal:
        return ForwardTiming(Status.UNVERIFIED, decision.refusal)
    return None


def time_forward(spec: Spec, case: Case | None = None,
                 options: ForwardOptions | None = None) -> ForwardTiming:
    """Time the task's problem forward at `case` (by default the spec's [bench] case); never
    raises for what the problem does."""
    options = options or ForwardOptions()
    started = time.perf_counter()
    chosen = dict(case if case is not None else spec.bench_case)
    report = _refusal(spec, options) or _measure(spec, chosen, options)
    report.case = chosen
    report.seconds = time.perf_counter() - started
    return report


def _measure(spec: Spec, case: Case, options: ForwardOptions) -> ForwardTiming:
    """Write the inputs, run the child, read its reply."""
    problem = problem_file(spec)
    assert problem is not None  # _refusal checked
    sandboxed = sandbox.available()[0]
    scratch = Path(tempfile.mkdtemp(prefix="ks-forward-"))
    try:
        try:
            files = _write_inputs(spec, case, scratch)
        except CaseError as error:
            return ForwardTiming(Status.SPEC_ERROR, str(error))
        request = ForwardRequest(files, options.plan.to_message(), options.compile,
                                 recorded_init(spec))
        env = _environment()
        command = child_command(problem, scratch, env, sandboxed)
        reply = run_child(command, request, env, scratch, options.timeout, sandboxed)
        return _timing(reply, case, sandboxed)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
