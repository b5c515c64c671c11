"""Verification under compute-sanitizer: buffers at their exact size (guard zones would hide
out-of-bounds reads from memcheck, as seen on an H200), one seed per case, and the sanitizer's
report turned into findings. Without a sanitizer the verdict is "unverified", never "passed"."""

from __future__ import annotations

import shutil
import threading
from dataclasses import replace

from app.engine.verify import sanitizer
from app.engine.verify.results import Status, Verdict
from app.engine.verify.runs import Engine, Progress, VerifyOptions, verify_with
from app.engine.worker import backends
from app.engine.worker.client import WorkerHandle
from app.isolation import sandbox
from app.spec.model import Spec

# Sanitizers slow kernels down by one to two orders of magnitude.
SLOWDOWN = 50.0
UNDECIDABLE = ("timeout", "crash", "unverified", "cancelled", "launch_error")


def verify_sanitized(spec: Spec, options: VerifyOptions, engine: Engine,
                     cancel: threading.Event | None, progress: Progress) -> Verdict:
    """Run every case once under the chosen sanitizer tool."""
    tool = options.sanitize or ""
    if tool not in sanitizer.TOOLS:
        return Verdict(Status.UNVERIFIED, f"unknown sanitizer tool {tool!r}; use one of "
                       f"{', '.join(sanitizer.TOOLS)}")
    backend, reason = backends.choose(options.backend)
    if backend != "pycuda":
        why = reason or f"the {backend} backend has no sanitizer"
        return Verdict(Status.UNVERIFIED, f"--sanitize needs an NVIDIA GPU: {why}")
    if sanitizer.executable() is None:
        return Verdict(Status.UNVERIFIED, "compute-sanitizer not found (install the CUDA toolkit); "
                       "nothing was checked")
    # The report goes to a private folder made for it, which no sandbox can reach (the
    # engine's session folders can be written by a cpu worker's kernels): the sanitizer then
    # never writes through a planted link, and nothing planted is read back as its report.
    private = sandbox.private_folder(f"ks-sanitizer-{tool}-")
    log = private / f"sanitizer-{tool}.log"
    handle = WorkerHandle(backend, wrapper=sanitizer.wrapper(tool, log), log_dir=engine.folder)
    # initcheck can only see reads of memory nothing wrote: leave the outputs uninitialized.
    quick = replace(options, seeds=1, only_seeds=None, extra_seeds=(),
                    timeout=options.timeout * SLOWDOWN, sanitize=None,
                    uninitialized_outputs=tool == "initcheck")
    try:
        try:
            verdict = verify_with(spec, quick, handle, handle.folder, 0, cancel, progress,
                                  engine.references)
        finally:
            handle.close()  # the sanitizer writes its summary when the worker exits
        return _judge(verdict, tool, sandbox.read_log(log))
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _judge(verdict: Verdict, tool: str, report: str) -> Verdict:
    """Merge the sanitizer's findings into the verdict of the plain checks."""
    findings = sanitizer.parse_report(tool, report)
    verdict.sanitizer = [f.to_json() for f in findings]
    summary = sanitizer.summary_line(report)
    if findings:
        first = findings[0]
        verdict.status = Status.SANITIZER
        verdict.message = (f"{tool}: {len(findings)} report(s); first: {first.kind} in "
                           f"{first.kernel or 'the kernel'} at {first.location or '?'}"
                           + (f" ({summary})" if summary else ""))
    elif verdict.status == Status.PASSED and not summary:
        verdict.status = Status.UNVERIFIED
        verdict.message = f"compute-sanitizer {tool} produced no summary; nothing is claimed"
    elif verdict.status == Status.PASSED:
        verdict.message = f"{verdict.message}; {tool}: {summary}"
    return verdict
