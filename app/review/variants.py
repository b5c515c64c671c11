"""The variants of one task: specs whose kernels take the same arguments, each with a short name
that tells it apart from the others."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.spec.model import Arg, Spec, SpecError, load_spec

# Fields of an argument that must agree between variants: together they decide what the kernel
# receives (the same inputs need the same inits; the same outputs the same shapes and types).
ARG_FIELDS = ("name", "kind", "dtype", "shape", "init", "value")
MAX_VARIANTS = 16


class VariantError(ValueError):
    """Variants that cannot be compared (a bad spec, different argument lists, a bad baseline);
    the message says which and how they differ."""


@dataclass(frozen=True)
class Variant:
    """One spec to compare, under a name unique among the variants."""

    name: str
    spec: Spec

    @property
    def path(self) -> Path:
        """The spec file."""
        return self.spec.path or self.spec.base_dir


def _arg_text(arg: Arg, field_name: str) -> str:
    """One field of an argument as text for a message."""
    value = getattr(arg, field_name)
    if value is None:
        return "(none)"
    if isinstance(value, tuple):
        return "[" + ", ".join(value) + "]"
    return str(value)


def task_args(spec: Spec) -> list[Arg]:
    """The arguments that make the task: every buffer but scratch, and the scalars, in order.
    A variant's scratch buffers are its own business (a two-pass reduction has one, a
    one-pass one none); it gets the same inputs as long as these agree."""
    return [a for a in spec.args if not a.is_scratch]


def argument_differences(base: Spec, other: Spec) -> list[str]:
    """How `other`'s arguments differ from `base`'s, one sentence each (none: they match): the
    buffers in order, and the scalars that both have by name (a variant of several launches
    may pass a few of its own, such as a block count)."""
    mine_all, theirs_all = task_args(base), task_args(other)
    mine = [a for a in mine_all if a.is_buffer]
    theirs = [a for a in theirs_all if a.is_buffer]
    found = []
    if len(mine) != len(theirs):
        found.append(f"{len(theirs)} buffers instead of {len(mine)} "
                     f"({', '.join(a.name for a in theirs)} vs {', '.join(a.name for a in mine)})")
    scalars = {a.name: a for a in theirs_all if not a.is_buffer}
    pairs = list(zip(mine, theirs, strict=False))
    pairs += [(a, scalars[a.name]) for a in mine_all if not a.is_buffer and a.name in scalars]
    for ours, their in pairs:
        for name in ARG_FIELDS:
            if getattr(ours, name) != getattr(their, name):
                found.append(f"argument {mine_all.index(ours) + 1} ({ours.name}): {name} is "
                             f"{_arg_text(their, name)} instead of {_arg_text(ours, name)}")
    return found


def same_task(paths: list[Path]) -> list[bool]:
    """For each spec, whether its kernel takes the same arguments as the first one's (the first
    is True; a spec that cannot be read is False): the ones that can be compared with it."""
    if not paths:
        return []
    try:
        base = load_spec(paths[0])
    except (SpecError, OSError):
        return [False] * len(paths)
    found = [True]
    for path in paths[1:]:
        try:
            found.append(not argument_differences(base, load_spec(path)))
        except (SpecError, OSError):
            found.append(False)
    return found


def unique_names(paths: list[Path]) -> list[str]:
    """A short name per spec: its file stem, with its folder when stems repeat, and a number
    when even that repeats."""
    stems = [p.stem for p in paths]
    names = [s if stems.count(s) == 1 else f"{p.parent.name}/{s}" for s, p in zip(stems, paths,
                                                                                   strict=True)]
    return [n if names.count(n) == 1 else f"{n} #{i + 1}" for i, n in enumerate(names)]


def load_variants(paths: list[Path | str]) -> list[Variant]:
    """Every spec loaded and checked against the first (VariantError saying what is wrong)."""
    if len(paths) < 2:
        raise VariantError("compare needs at least two specs (A.toml B.toml ...)")
    if len(paths) > MAX_VARIANTS:
        raise VariantError(f"compare takes at most {MAX_VARIANTS} specs at once")
    specs = []
    for path in paths:
        try:
            specs.append(load_spec(path))
        except SpecError as error:
            raise VariantError(str(error)) from None
    names = unique_names([s.path or Path(str(p)) for s, p in zip(specs, paths, strict=True)])
    check_arguments(specs, names)
    return [Variant(n, s) for n, s in zip(names, specs, strict=True)]


def check_arguments(specs: list[Spec], names: list[str] | None = None) -> None:
    """VariantError when any spec's argument list differs from the first's, naming each
    difference; `names` tell the specs apart (two files may share a name)."""
    labels = names or [_label(spec) for spec in specs]
    base = specs[0]
    problems = []
    for spec, label in zip(specs[1:], labels[1:], strict=True):
        differences = argument_differences(base, spec)
        if differences:
            problems.append(f"{label} does not take the arguments of {labels[0]}: "
                            + "; ".join(differences))
    if problems:
        raise VariantError("\n".join(problems) + "\nvariants of one task must take the same "
                           "buffers, in the same order, with the same types and shapes "
                           "(scratch buffers and scalars of their own aside)")


def _label(spec: Spec) -> str:
    """A spec's file name for messages."""
    return (spec.path or spec.base_dir).name


def pick_baseline(variants: list[Variant], wanted: str | None) -> Variant:
    """The baseline: the variant named (by name, file stem, file name or path), else the
    first. VariantError when `wanted` names none of them."""
    if not wanted:
        return variants[0]
    for variant in variants:
        path = variant.path
        if wanted in (variant.name, path.stem, path.name, str(path)):
            return variant
        try:
            if Path(wanted).resolve() == path.resolve():
                return variant
        except OSError:
            continue
    names = ", ".join(v.name for v in variants)
    raise VariantError(f"--baseline {wanted!r} is none of the variants ({names})")
