"""What crosses the pipe between app.engine.bench.torch_forward and its child process
(app.engine.bench.forward_child), which times a KernelBench problem's PyTorch forward: one
request in, one reply out, typed records through app.base.codec. Nothing here imports torch."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The forward's two forms, in the words reports and JSON keep.
EAGER = "eager"
COMPILE = "compile"


@dataclass(frozen=True)
class InputFile:
    """One input the parent drew (the kernel's own bench inputs): raw bytes in the scratch
    folder, C order."""

    name: str
    file: str
    dtype: str
    shape: list[int]


@dataclass(frozen=True)
class ForwardRequest:
    """What to time: the inputs, the timing plan (TimingPlan.to_message's fields), whether to
    try torch.compile, the init inputs the task recorded (used when the problem has no
    get_init_inputs), and the seed set before building the Model and drawing inputs."""

    inputs: list[InputFile]
    plan: dict[str, Any]
    compile: bool = True
    recorded_init: list[Any] | None = None
    seed: int = 42


@dataclass(frozen=True)
class VariantSamples:
    """One form of the forward: every sample (ms), its warm-up, and how long the host took to
    queue one call (median over the warm-up, microseconds)."""

    name: str
    samples_ms: list[float]
    warmup_launches: int = 0
    enqueue_us: float | None = None


@dataclass(frozen=True)
class ForwardReply:
    """The child's answer: ok with the samples of each form (eager first), or a message saying
    what went wrong; `compile_error` says why torch.compile could not be timed."""

    ok: bool
    message: str = ""
    variants: list[VariantSamples] = field(default_factory=list)
    compile_error: str = ""
    stop_reason: str = ""
    sampling_ms: float = 0.0
    facts: dict[str, Any] = field(default_factory=dict)
