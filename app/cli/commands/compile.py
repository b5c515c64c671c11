"""`kernel-studio compile FILE`: compile a kernel without a GPU and show its diagnostics,
resources, PTX or SASS. Exit 0 compiled, 1 compile errors (or a timeout, a memory cap, a crash),
2 bad input, options or includes, 3 no compiler could run."""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict
from typing import Any

from app.base import settings
from app.cli import flags
from app.compile import (
    CompileResult,
    KernelResources,
    SassError,
    compile_file,
    occupancy,
    ptx_function,
    sass_listing,
)
from app.compile.options import ALLOWED_HELP

EXIT_BY_STAGE = {None: 0, "compile": 1, "timeout": 1, "memory": 1, "crash": 1, "input": 2,
                 "options": 2, "includes": 2, "backend": 3}
COLUMNS = [("registers", "regs"), ("shared_static_bytes", "smem"), ("constant_bytes", "cmem"),
           ("local_bytes", "lmem"), ("stack_frame_bytes", "stack"),
           ("spill_stores_bytes", "spill st"), ("spill_loads_bytes", "spill ld"),
           ("max_threads_per_block", "max threads")]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """FILE, --arch, --option, one of --ptx/--sass/--resources, --json and the limits."""
    parser.epilog = ALLOWED_HELP + ". Give options as --option=VALUE, e.g. --option=-O3."
    parser.add_argument("file", help="the .cu file")
    parser.add_argument("--arch", type=flags.arch,
                        help="target architecture, e.g. sm_90 (default: this machine's GPU, "
                             "else sm_90)")
    parser.add_argument("--option", action="append", default=[], metavar="OPT",
                        help="a compiler option from the allowlist (repeatable)")
    show = parser.add_mutually_exclusive_group()
    show.add_argument("--ptx", action="store_true", help="print the PTX")
    show.add_argument("--sass", action="store_true", help="print SASS with source lines")
    show.add_argument("--resources", action="store_true", help="print resources per kernel")
    parser.add_argument("--kernel", help="only this kernel (its name, lowered symbol or "
                                         "template instantiation)")
    parser.add_argument("--entry", action="append", default=[], metavar="NAME",
                        help="a template instantiation to build, e.g. --entry 'scale<float, 4>' "
                             "(repeatable; its lowered name is shown)")
    parser.add_argument("--block", type=flags.block_threads,
                        help="threads per block (1 to 1024): adds theoretical occupancy")
    parser.add_argument("--dynamic-shared", type=flags.shared_bytes, default=0, metavar="BYTES",
                        help="dynamic shared memory per block, for occupancy")
    flags.add_compiler(parser, "the compiler", flag="--backend",
                       default=str(settings.COMPILER.default))
    flags.add_timeout(parser, "seconds the compiler may take", default=30.0)
    parser.add_argument("--no-cache", action="store_true", help="compile even when cached")
    flags.add_json(parser, "the result")


def run(args: argparse.Namespace) -> int:
    """Compile, print what was asked for, return the exit code for the result."""
    result = compile_file(args.file, arch=args.arch, options=args.option, backend=args.backend,
                          timeout=args.timeout, use_cache=not args.no_cache,
                          entries=_entries(args))
    try:
        kernels = _selected(result, args.kernel)
    except LookupError as error:
        print(f"kernel-studio compile: {error}", file=sys.stderr)
        return 2
    try:
        if args.json:
            print(json.dumps(_as_json(result, kernels, args), indent=2))
        else:
            _print_text(result, kernels, args)
        sys.stdout.flush()
    except BrokenPipeError:  # `| head` closed the pipe: not an error of the compile
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - stop the flush at exit failing too
    return EXIT_BY_STAGE.get(result.stage, 3)


def _entries(args: argparse.Namespace) -> list[str]:
    """The entries to instantiate: every --entry, and --kernel when it is a template's."""
    kernel = [args.kernel] if args.kernel and "<" in args.kernel else []
    return [*args.entry, *kernel]


def _selected(result: CompileResult, wanted: str | None) -> list[KernelResources]:
    """The kernels to show: all, or the one `wanted` names (LookupError when none does)."""
    if wanted is None or not result.ok:
        return list(result.kernels)
    symbol = wanted if result.kernel(wanted) else result.kernel_symbol(wanted)
    kernel = result.kernel(symbol) if symbol else None
    if kernel is None:
        names = ", ".join(k.name for k in result.kernels) or "none"
        raise LookupError(f"no single kernel named {wanted!r} (kernels: {names})")
    return [kernel]


def _occupancy(kernel: KernelResources, result: CompileResult,
               args: argparse.Namespace) -> dict[str, Any] | None:
    """Occupancy at --block, as a dict (or its error), None without --block."""
    if not args.block:
        return None
    try:
        return asdict(occupancy(kernel, args.block, args.dynamic_shared, result.arch))
    except ValueError as error:
        return {"error": str(error)}


def _as_json(result: CompileResult, kernels: list[KernelResources],
             args: argparse.Namespace) -> dict[str, Any]:
    """The result, plus the PTX, SASS or occupancy that was asked for."""
    data = result.to_json()
    data.pop("ptx", None)
    data["exit_code"] = EXIT_BY_STAGE.get(result.stage, 3)
    if args.ptx:
        data["ptx"] = result.ptx if args.kernel is None else ptx_function(result, kernels[0].name)
    if args.sass and result.ok:
        data["sass"] = {k.name: [asdict(line) for line in _sass_or_empty(result, k.name)]
                        for k in kernels}
    if args.block:
        data["occupancy"] = {k.name: _occupancy(k, result, args) for k in kernels}
    return data


def _sass_or_empty(result: CompileResult, symbol: str) -> list[Any]:
    """The SASS listing, or empty with a note on stderr."""
    try:
        return sass_listing(result, symbol)
    except SassError as error:
        print(f"kernel-studio compile: no SASS for {symbol}: {error}", file=sys.stderr)
        return []


def _print_text(result: CompileResult, kernels: list[KernelResources],
                args: argparse.Namespace) -> None:
    """Diagnostics on stderr as file:line:col: severity: message; then what was asked for."""
    for diagnostic in result.diagnostics:
        print(diagnostic.format(), file=sys.stderr)
    if not result.ok:
        print(f"kernel-studio compile: {result.message}", file=sys.stderr)
        return
    if args.ptx:
        print(result.ptx if args.kernel is None else ptx_function(result, kernels[0].name))
    elif args.sass:
        _print_sass(result, kernels)
    elif args.resources or args.block:
        _print_resources(result, kernels, args)
    else:
        print(_summary(result))


def _summary(result: CompileResult) -> str:
    """One line: what compiled, with what, how fast, which kernels."""
    cached = ", cached" if result.cached else ""
    names = ", ".join(k.name for k in result.kernels) or "no kernels"
    lowered = "".join(f"; {entry} is {symbol}" for entry, symbol in result.lowered.items())
    return (f"compiled {result.filename} for {result.arch} with {result.compiler or result.backend}"
            f" in {result.seconds * 1000:.0f} ms{cached}: {names}{lowered}")


def _print_resources(result: CompileResult, kernels: list[KernelResources],
                     args: argparse.Namespace) -> None:
    """A table: one row per kernel, bytes unless named otherwise."""
    headers = ["kernel", *(label for _, label in COLUMNS)] + (["occupancy"] if args.block else [])
    rows = [headers]
    for kernel in kernels:
        row = [kernel.name, *(str(getattr(kernel, key)) for key, _ in COLUMNS)]
        if args.block:
            row.append(_occupancy_text(_occupancy(kernel, result, args)))
        rows.append(row)
    widths = [max(len(row[i]) for row in rows) for i in range(len(headers))]
    for row in rows:
        print("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                        for i, (cell, w) in enumerate(zip(row, widths, strict=True))))
    print(_summary(result))


def _occupancy_text(value: dict[str, Any] | None) -> str:
    """'75% (registers)' or the reason there is no figure."""
    if not value or "error" in value:
        return f"n/a: {value['error']}" if value else "n/a"
    return f"{value['occupancy'] * 100:.0f}% ({value['limiter']})"


def _print_sass(result: CompileResult, kernels: list[KernelResources]) -> None:
    """Each kernel's SASS, instructions tagged with file:line."""
    for kernel in kernels:
        print(f"// {kernel.name}")
        for line in _sass_or_empty(result, kernel.name):
            where = f"  // {line.file}:{line.line}" if line.file else ""
            label = line.text.endswith(":")
            text = line.text if label else f"    /*{line.offset:04x}*/ {line.text}"
            print(f"{text:<60}{where}")
