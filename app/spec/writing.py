"""Writing a spec back to TOML, in the canonical layout of docs/spec.md, so that what the GUI
writes the CLI reads (parse_spec_text(spec_to_toml(spec)) equals spec)."""

from __future__ import annotations

import json
import math

from app.spec.model import Arg, Case, Spec


def _string(value: str) -> str:
    """A TOML basic string (JSON's escaping is valid TOML for basic strings)."""
    return json.dumps(value, ensure_ascii=False)


def _number(value: int | float) -> str:
    """A TOML number; floats keep a decimal point so they read back as floats."""
    if isinstance(value, float):
        if math.isinf(value) or math.isnan(value):
            return ("-" if value < 0 else "") + ("inf" if math.isinf(value) else "nan")
        text = repr(value)
        return text if any(ch in text for ch in ".en") else text + ".0"
    return str(value)


def _strings(values: tuple[str, ...]) -> str:
    """A TOML array of strings."""
    return "[" + ", ".join(_string(v) for v in values) + "]"


def _case(case: Case) -> str:
    """An inline table such as { n = 1000 }."""
    if not case:
        return "{}"
    return "{ " + ", ".join(f"{k} = {_number(v)}" for k, v in case.items()) + " }"


def _arg_lines(arg: Arg) -> list[str]:
    """One [[arg]] table."""
    lines = ["[[arg]]", f"name = {_string(arg.name)}", f"kind = {_string(arg.kind)}",
             f"dtype = {_string(arg.dtype)}"]
    if arg.is_buffer:
        lines.append(f"shape = {_strings(arg.shape)}")
        if arg.init is not None and arg.kind not in ("out", "scratch"):
            lines.append(f"init = {_string(arg.init)}")
    elif arg.value is not None:
        lines.append(f"value = {_string(arg.value)}")
    return lines + [""]


def _verify_lines(spec: Spec) -> list[str]:
    """The [verify] table."""
    lines = ["[verify]", "cases = [" + ", ".join(_case(c) for c in spec.cases) + "]",
             f"seeds = {spec.seeds}"]
    if spec.rtol is not None:
        lines.append(f"rtol = {_number(spec.rtol)}")
    if spec.atol is not None:
        lines.append(f"atol = {_number(spec.atol)}")
    return lines + [""]


def _bench_lines(spec: Spec) -> list[str]:
    """The [bench] table, when the spec has one."""
    if not (spec.bench_case or spec.bench_bytes or spec.bench_flops):
        return []
    lines = ["[bench]", f"case = {_case(spec.bench_case)}"]
    if spec.bench_bytes:
        lines.append(f"bytes = {_string(spec.bench_bytes)}")
    if spec.bench_flops:
        lines.append(f"flops = {_string(spec.bench_flops)}")
    return lines + [""]


def _launch_lines(spec: Spec) -> list[str]:
    """The [launch] table of a version 1 spec, or a version 2 spec's [[launch]] tables (each
    naming its entry and arguments)."""
    if not spec.launch_tables:
        return ["[launch]", f"grid = {_strings(spec.grid)}", f"block = {_strings(spec.block)}",
                f"shared_bytes = {_string(spec.shared_bytes)}", ""]
    lines: list[str] = []
    for launch in spec.launch_tables:
        lines += ["[[launch]]", f"entry = {_string(launch.entry)}",
                  f"args = {_strings(launch.args)}", f"grid = {_strings(launch.grid)}",
                  f"block = {_strings(launch.block)}",
                  f"shared_bytes = {_string(launch.shared_bytes)}", ""]
    return lines


def spec_to_toml(spec: Spec) -> str:
    """The spec as TOML text."""
    lines = ["[kernel]", f"source = {_string(spec.source)}"]
    if not spec.launch_tables:  # each [[launch]] names its own entry
        lines.append(f"entry = {_string(spec.entry)}")
    lines.append(f"options = {_strings(spec.options)}")
    if spec.compiler != "nvrtc":  # the default is left out, as the templates leave it out
        lines.append(f"compiler = {_string(spec.compiler)}")
    lines.append("")
    for arg in spec.args:
        lines += _arg_lines(arg)
    lines += _launch_lines(spec)
    lines += ["[reference]", f"python = {_string(spec.reference)}", ""]
    lines += _verify_lines(spec) + _bench_lines(spec)
    return "\n".join(lines).rstrip("\n") + "\n"
