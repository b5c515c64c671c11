"""Candidates verified while the model writes the next ones: a few threads, each holding one warm
verification Engine (its worker processes stay up between candidates).

Each candidate is compiled first (the compiler's own sandboxed child and cache, as for
`kernel-studio compile`): most candidates of a small model do not compile, and saying so needs
no reference process and no worker. What compiles goes through verify, whose compile of the same
source for the same architecture is then a cache hit.

Every candidate goes through the normal verify path (app.engine.verify.verifier.verify_file),
so the sandbox and the trust rule of that path apply to model-written kernels as to any other,
and so do its fresh seeds (VerifyOptions.random_seeds): each candidate also runs on a seed drawn
when it is verified, so a kernel that carries the spec's seed inputs cannot pass.
Where no sandbox can be had, the trust rule refuses a freshly written folder, and rightly: the
kernel is code of unknown intent. It is vouched for (`vouch_for`) only where its host code can
never run and the rest is the user's own: on a GPU (device code makes no system calls; NVRTC
compiles no host code) with the user's trusted spec and reference. On the CPU backend without a
sandbox its verdict is "unverified".
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from app.compile import compile_file
from app.engine.verify.results import Status, Verdict
from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.verifier import verify_file
from app.engine.worker import backends
from app.isolation import sandbox, trust
from app.spec.model import Spec, SpecError, load_spec


def vouch_for(original: Spec, backend: str) -> bool | None:
    """VerifyOptions.trusted for candidates written from `original`: None (the trust rule
    decides; with a sandbox everything runs inside it), or True when no sandbox can be had, the
    candidates run on a GPU (their host code never runs) and the user's spec is trusted."""
    if sandbox.available()[0]:
        return None
    on_gpu = backends.choose(backend)[0] == "pycuda"
    return True if on_gpu and trust.is_trusted(original) else None


def default_workers(on_gpu: bool) -> int:
    """Verification threads: one on the CPU (the model has the other cores); on a GPU machine,
    where the model hardly needs the CPU, every core but two, at most 16. On an H200 with 16
    cores a verification took about 2 s (compile, reference and worker processes), so
    verification, not the model, sets the pace of an evaluation there."""
    cores = len(os.sched_getaffinity(0))
    return max(1, min(16, cores - 2)) if on_gpu else 1


def compile_error(spec_path: Path) -> Verdict | None:
    """A compile_error verdict when the candidate's kernel does not compile (for this
    machine's GPU, or sm_90 without one, as verify compiles); None when it compiles or when its
    spec cannot be read (verify then says why)."""
    started = time.perf_counter()
    try:
        spec = load_spec(spec_path)
    except SpecError:
        return None
    result = compile_file(spec.source_path, options=list(spec.options), backend=spec.compiler,
                          entries=spec.entries)
    if result.ok or result.stage != "compile":
        return None
    verdict = Verdict(Status.COMPILE_ERROR, result.message or "the kernel did not compile",
                      diagnostics=[vars(d) for d in result.diagnostics],
                      spec_path=str(spec_path))
    verdict.seconds = time.perf_counter() - started
    return verdict


class VerifyPool:
    """A small pool of verification threads, each with its own warm Engine."""

    def __init__(self, options: VerifyOptions, workers: int = 1,
                 cancel: threading.Event | None = None) -> None:
        """Start nothing yet: each thread makes its Engine on its first candidate."""
        self.options = options
        self.cancel = cancel or threading.Event()
        self._local = threading.local()
        self._engines: list[Engine] = []
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=max(1, workers),
                                            thread_name_prefix="kernel-studio-verify")

    def _engine(self) -> Engine:
        """This thread's Engine."""
        engine: Engine | None = getattr(self._local, "engine", None)
        if engine is None:
            # Candidates come in fresh folders, so no reference could ever be used again: keep
            # none warm (else every pool thread would hold idle reference processes).
            engine = Engine(warm_references=0)
            self._local.engine = engine
            with self._lock:
                self._engines.append(engine)
        return engine

    def _verify(self, spec_path: Path, trusted: bool | None) -> Verdict:
        """Compile, then verify one candidate on this thread's Engine."""
        if self.cancel.is_set():
            return Verdict(Status.CANCELLED, "stopped before it was verified")
        failed = compile_error(spec_path)
        if failed is not None:
            return failed
        options = replace(self.options, trusted=trusted)
        return verify_file(spec_path, options, self._engine(), self.cancel)

    def submit(self, spec_path: Path, trusted: bool | None = None) -> Future[Verdict]:
        """Verify a candidate's spec in the background; its Verdict comes in the future."""
        return self._executor.submit(self._verify, spec_path, trusted)

    def close(self) -> None:
        """Wait for the candidates in progress (Stop cancels them), then stop every worker."""
        self._executor.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            for engine in self._engines:
                engine.close()
            self._engines.clear()

    def __enter__(self) -> VerifyPool:
        """Use as a context manager."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close on exit."""
        self.close()
