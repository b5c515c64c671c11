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


def argument_differences(base: Spec, other: Spec) -> list[str]:
    """How `other`'s argument list differs from `base`'s, one sentence each (none: they match)."""
    found = []
    if len(base.args) != len(other.args):
        found.append(f"{len(other.args)} arguments instead of {len(base.args)} "
                     f"({', '.join(a.name for a in other.args)} vs "
                     f"{', '.join(a.name for a in base.args)})")
    for index, (mine, theirs) in enumerate(zip(base.args, other.args, strict=False)):
        for name in ARG_FIELDS:
            if getattr(mine, name) != getattr(theirs, name):
                found.append(f"argument {index + 1} ({mine.name}): {name} is "
                             f"{_arg_text(theirs, name)} instead of {_arg_text(mine, name)}")
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
                           "arguments, in the same order, with the same types and shapes")


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
