"""`kernel-studio bundle create`: gather each spec's files (the spec, its kernel, its reference,
the headers its kernel includes from its folder, Python files beside the reference), obtain its
compile facts, verdict and (on a GPU) timing here, and write them all into one bundle."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.base import codec
from app.compile import OptionError
from app.compile.includes import scan
from app.review import audit
from app.review.bundle import (
    CLAIMS,
    SPECS_FOLDER,
    BundleError,
    Claim,
    Claims,
    claims_bytes,
    safe_name,
    write_bundle,
)
from app.review.compare import read_source
from app.review.environment import environment
from app.review.evaluate import RunOptions, time_specs, verify_on
from app.review.profile import compile_facts
from app.review.variants import Variant, unique_names
from app.spec.model import Spec

Progress = Callable[[str, float], None]
MAX_SPECS = 64


@dataclass
class Made:
    """What bundle create made: its digest and each spec's outcome."""

    path: Path
    digest: str
    results: list[Claim]
    signed: bool


def _relative(path: Path, folder: Path) -> str:
    """A file's name inside its spec's folder, with forward slashes."""
    return path.resolve().relative_to(folder.resolve()).as_posix()


def spec_files(spec: Spec) -> dict[str, Path]:
    """The files a spec needs, by their names inside its folder."""
    folder = spec.base_dir
    wanted = [spec.path or folder / "spec.toml", spec.source_path, spec.reference_path]
    wanted += sorted(p for p in folder.glob("*.py") if p.is_file())
    try:
        text = spec.source_path.read_text(encoding="utf-8", errors="replace")
        wanted += [h.path for h in scan(text, spec.source, folder)]
    except (OSError, OptionError):
        pass  # the compile says what is wrong with the includes
    files = {}
    for path in wanted:
        if path.is_file() and path.resolve().is_relative_to(folder.resolve()):
            files[_relative(path, folder)] = path
    return files


def _folder_name(index: int, spec: Spec) -> str:
    """specs/01-vector_add: a safe member folder per spec."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", spec.base_dir.resolve().name)[:60] or "spec"
    return f"{SPECS_FOLDER}/{index + 1:02d}-{name}"


def _members_of(index: int, spec: Spec) -> tuple[dict[str, bytes], str]:
    """A spec's members and the member name of its spec file (BundleError for a file that
    cannot be bundled)."""
    prefix = _folder_name(index, spec)
    members = {}
    for name, path in spec_files(spec).items():
        member = f"{prefix}/{name}"
        problem = safe_name(member)
        if problem:
            raise BundleError(f"{path} cannot go in a bundle: its name has {problem}; rename it")
        try:
            members[member] = path.read_bytes()
        except OSError as error:
            raise BundleError(f"cannot read {path}: {error.strerror}") from None
    spec_name = _relative(spec.path or spec.base_dir / "spec.toml", spec.base_dir)
    return members, f"{prefix}/{spec_name}"


def _claim(variant: Variant, member: str, options: RunOptions,
           progress: Progress) -> Claim:
    """Compile facts, verdict and timing of one spec, obtained now."""
    spec = variant.spec
    facts = compile_facts(spec, options.arch, options.compiler)
    verdict = verify_on(spec, list(spec.cases), spec.seeds, options, progress)
    named = [(variant.name, spec)] if verdict.passed else []
    timing = time_specs(named, None, options, progress)
    return Claim(spec=member, name=variant.name, source=spec.source,
                 source_text=read_source(variant), compile=codec.to_object(facts),
                 verdict=verdict.to_json(), timing=codec.to_object(timing),
                 cases=[dict(c) for c in spec.cases], seeds=spec.seeds)


def create_bundle(specs: list[Spec], output: Path, note: str, options: RunOptions,
                  progress: Progress | None = None) -> Made:
    """Obtain every spec's results here and write the bundle."""
    progress = progress or (lambda _t, _f: None)
    if not specs or len(specs) > MAX_SPECS:
        raise BundleError(f"a bundle holds from 1 to {MAX_SPECS} specs")
    names = unique_names([s.path or s.base_dir for s in specs])
    members: dict[str, bytes] = {}
    spec_members: list[str] = []
    results: list[Claim] = []
    for index, (name, spec) in enumerate(zip(names, specs, strict=True)):
        found, member = _members_of(index, spec)
        members.update(found)
        spec_members.append(member)
        progress(f"{name}: compiling, verifying, timing", index / len(specs))
        results.append(_claim(Variant(name, spec), member, options, progress))
    env = environment()
    members[CLAIMS] = claims_bytes(Claims(results=results, environment=env))
    digest = write_bundle(output, members, spec_members, note, env)
    return Made(output, digest, results, audit.load_private_key() is not None)
