"""Verify a spec: the entry points of verification, choosing between a plain run on the best
backend and a run under compute-sanitizer (app.engine.verify.sanitized)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from app.engine.verify import buffers
from app.engine.verify.results import Status, Verdict
from app.engine.verify.runs import Engine, Progress, VerifyOptions, verify_with
from app.engine.verify.sanitized import verify_sanitized
from app.engine.worker import backends
from app.spec.model import Spec, SpecError, load_spec


def verify(spec: Spec, options: VerifyOptions | None = None, engine: Engine | None = None,
           cancel: threading.Event | None = None, progress: Progress | None = None) -> Verdict:
    """Verify a spec; never raises for a kernel's misbehaviour."""
    options = options or VerifyOptions()
    own_engine = engine is None
    engine = engine or Engine()
    started = time.perf_counter()
    try:
        verdict = _verify(spec, options, engine, cancel, progress or (lambda _t, _f: None))
    finally:
        if own_engine:
            engine.close()
    verdict.seconds = time.perf_counter() - started
    verdict.spec_path = str(spec.path or "")
    return verdict


def _verify(spec: Spec, options: VerifyOptions, engine: Engine,
            cancel: threading.Event | None, progress: Progress) -> Verdict:
    """The steps of verify(), each of which may end it with a verdict."""
    if options.cases:
        spec = spec.with_cases(options.cases)
    if options.sanitize:
        return verify_sanitized(spec, options, engine, cancel, progress)
    backend, reason = backends.choose(options.backend)
    if backend is None:
        return Verdict(Status.UNVERIFIED, reason)
    handle = engine.handle(backend)  # its own session folder: see app.engine.worker.client
    return verify_with(spec, options, handle, handle.folder, buffers.GUARD_BYTES, cancel,
                       progress, engine.references)


def verify_file(path: Path | str, options: VerifyOptions | None = None,
                engine: Engine | None = None, cancel: threading.Event | None = None,
                progress: Progress | None = None) -> Verdict:
    """verify() for a spec file; a bad spec is a spec_error verdict, not an exception."""
    try:
        spec = load_spec(path)
    except SpecError as error:
        return Verdict(Status.SPEC_ERROR, str(error), spec_path=str(path))
    return verify(spec, options, engine, cancel, progress)
