"""Which library should be the one typed codec (issue 24): msgspec, cattrs or pydantic v2.

Each encodes a realistic verify reply to JSON bytes and decodes it back into typed records
(the shape of the worker's hello reply, run results with their findings and a failure, as in
app/engine/worker/protocol.py and app/engine/verify/results.py), N times; it prints the
microseconds per encode and per decode, and each library's import time (the median of fresh
processes, the interpreter's own start-up subtracted).

    python benchmarks/codec_choice.py [--iterations 2000] [--runs 20] [--imports 5]

Run it on an idle machine for figures worth quoting.
"""

# No `from __future__ import annotations`: the records are defined inside functions (so that
# each library is imported only when measured), and their annotations must be real objects.
import argparse
import dataclasses
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    """A run's verdict, as the verifier's vocabulary."""

    PASSED = "passed"
    WRONG = "wrong"
    FAULT = "fault"


class Kind(StrEnum):
    """A worker fault kind."""

    DEVICE = "device"
    INTERNAL = "internal"


def sample(runs: int) -> dict[str, Any]:
    """The reply as plain JSON data: hello facts, `runs` runs (every third one failing with
    two findings) and a failure."""
    def finding(i: int) -> dict[str, Any]:
        """One finding of a failed run."""
        return {"kind": "wrong", "buffer": f"out{i}", "message": "3 of 1024 values differ",
                "count": 3, "total": 1024, "first_indices": [[1], [17], [1023]],
                "expected": [1.0, 2.5, -3.25], "actual": [1.0, 2.75, 0.0],
                "max_abs_error": 3.25, "max_rel_error": 1.0}

    def run(i: int) -> dict[str, Any]:
        """One case and seed."""
        failed = i % 3 == 0
        return {"case": {"n": 1000 + i, "m": 7}, "seed": i, "status": "wrong" if failed
                else "passed", "message": "outputs differ" if failed else "",
                "findings": [finding(0), finding(1)] if failed else [], "seconds": 0.00125 * i,
                "start": "poison"}

    return {"backend": "cpu", "pid": 4242, "device": {"kind": "cpu", "name": "emulated",
                                                       "arch": "sm_90", "threads": 16},
            "seconds": 0.0421, "runs": [run(i) for i in range(runs)],
            "failure": {"kind": "device", "message": "illegal address", "fatal": True}}


def msgspec_case() -> tuple[Callable[[Any], bytes], Callable[[bytes], Any], type]:
    """Structs and msgspec.json's encoder and typed decoder."""
    import msgspec

    class Finding(msgspec.Struct, frozen=True):
        """One finding."""

        kind: Status
        buffer: str
        message: str
        count: int = 0
        total: int = 0
        first_indices: list[list[int]] = []
        expected: list[Any] = []
        actual: list[Any] = []
        max_abs_error: float | None = None
        max_rel_error: float | None = None

    class Run(msgspec.Struct, frozen=True):
        """One run."""

        case: dict[str, int | float]
        seed: int
        status: Status
        message: str = ""
        findings: list[Finding] = []
        seconds: float = 0.0
        start: str = ""

    class Failure(msgspec.Struct, frozen=True):
        """A fault."""

        kind: Kind
        message: str
        fatal: bool

    class Reply(msgspec.Struct, frozen=True):
        """The whole reply."""

        backend: str
        pid: int
        device: dict[str, Any]
        seconds: float
        runs: list[Run]
        failure: Failure | None = None

    encoder, decoder = msgspec.json.Encoder(), msgspec.json.Decoder(Reply)
    return encoder.encode, decoder.decode, Reply


def _dataclasses() -> type:
    """The reply as frozen dataclasses (for cattrs)."""
    field = dataclasses.field

    @dataclasses.dataclass(frozen=True)
    class Finding:
        """One finding."""

        kind: Status
        buffer: str
        message: str
        count: int = 0
        total: int = 0
        first_indices: list[list[int]] = field(default_factory=list)
        expected: list[Any] = field(default_factory=list)
        actual: list[Any] = field(default_factory=list)
        max_abs_error: float | None = None
        max_rel_error: float | None = None

    @dataclasses.dataclass(frozen=True)
    class Run:
        """One run."""

        case: dict[str, int | float]
        seed: int
        status: Status
        message: str = ""
        findings: list[Finding] = field(default_factory=list)
        seconds: float = 0.0
        start: str = ""

    @dataclasses.dataclass(frozen=True)
    class Failure:
        """A fault."""

        kind: Kind
        message: str
        fatal: bool

    @dataclasses.dataclass(frozen=True)
    class Reply:
        """The whole reply."""

        backend: str
        pid: int
        device: dict[str, Any]
        seconds: float
        runs: list[Run]
        failure: Failure | None = None

    return Reply


def _number(value: Any, _: type) -> int | float:
    """An int or a float as JSON gave it (refusing booleans and text)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {value!r}")
    return value


def cattrs_case() -> tuple[Callable[[Any], bytes], Callable[[bytes], Any], type]:
    """Dataclasses through cattrs' converter and the standard json module."""
    import cattrs

    reply = _dataclasses()
    converter = cattrs.Converter()
    # cattrs has no rule for a union of two scalars; a spec's case values are int or float.
    converter.register_structure_hook(int | float, _number)
    structure = converter.get_structure_hook(reply)

    def encode(value: Any) -> bytes:
        """Unstructure then dump."""
        return json.dumps(converter.unstructure(value), separators=(",", ":")).encode()

    def decode(data: bytes) -> Any:
        """Load then structure."""
        return structure(json.loads(data), reply)

    return encode, decode, reply


def pydantic_case() -> tuple[Callable[[Any], bytes], Callable[[bytes], Any], type]:
    """Pydantic v2 BaseModels with model_dump_json and model_validate_json."""
    import pydantic

    class Finding(pydantic.BaseModel, frozen=True):
        """One finding."""

        kind: Status
        buffer: str
        message: str
        count: int = 0
        total: int = 0
        first_indices: list[list[int]] = []
        expected: list[Any] = []
        actual: list[Any] = []
        max_abs_error: float | None = None
        max_rel_error: float | None = None

    class Run(pydantic.BaseModel, frozen=True):
        """One run."""

        case: dict[str, int | float]
        seed: int
        status: Status
        message: str = ""
        findings: list[Finding] = []
        seconds: float = 0.0
        start: str = ""

    class Failure(pydantic.BaseModel, frozen=True):
        """A fault."""

        kind: Kind
        message: str
        fatal: bool

    class Reply(pydantic.BaseModel, frozen=True):
        """The whole reply."""

        backend: str
        pid: int
        device: dict[str, Any]
        seconds: float
        runs: list[Run]
        failure: Failure | None = None

    adapter = pydantic.TypeAdapter(Reply)
    return adapter.dump_json, adapter.validate_json, Reply


CASES = {"msgspec": msgspec_case, "cattrs": cattrs_case, "pydantic": pydantic_case}
# What each case needs to have loaded before its first record class (pydantic's package import
# alone is lazy and loads almost nothing).
IMPORTS = {"msgspec": "import msgspec, msgspec.json",
           "cattrs": "import json, cattrs; cattrs.Converter()",
           "pydantic": "from pydantic import BaseModel, TypeAdapter"}


def per_call_us(function: Callable[[], Any], iterations: int) -> float:
    """Median over five batches of the microseconds one call takes."""
    batches = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(iterations // 5):
            function()
        batches.append((time.perf_counter() - started) / (iterations // 5) * 1e6)
    return statistics.median(batches)


def import_ms(statement: str, repeat: int) -> float:
    """The median milliseconds a fresh interpreter spends on `statement`, start-up excluded."""
    def once(code: str) -> float:
        """Wall time of one fresh interpreter running `code`."""
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return time.perf_counter() - started

    base = statistics.median(once("pass") for _ in range(repeat))
    return (statistics.median(once(statement) for _ in range(repeat)) - base) * 1e3


def measure(name: str, data: dict[str, Any], iterations: int) -> tuple[float, float, int]:
    """Encode and decode µs for one library, and the encoded size; checks that a round trip
    gives back the same JSON data."""
    encode, decode, _ = CASES[name]()
    raw = json.dumps(data).encode()
    value = decode(raw)
    if json.loads(encode(value)) != data:
        raise SystemExit(f"{name}: the round trip changed the data")
    return (per_call_us(lambda: encode(value), iterations),
            per_call_us(lambda: decode(raw), iterations), len(encode(value)))


def main() -> None:
    """Print a table: library, µs per encode, µs per decode, import ms."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--imports", type=int, default=5)
    args = parser.parse_args()
    data = sample(args.runs)
    print(f"a verify reply of {args.runs} runs, {len(json.dumps(data))} bytes of JSON; "
          f"{args.iterations} iterations")
    print(f"{'library':10} {'encode µs':>10} {'decode µs':>10} {'import ms':>10}")
    for name in CASES:
        encode_us, decode_us, _ = measure(name, data, args.iterations)
        imported = import_ms(IMPORTS[name], args.imports)
        print(f"{name:10} {encode_us:10.1f} {decode_us:10.1f} {imported:10.1f}")


if __name__ == "__main__":
    main()
