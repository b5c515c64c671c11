"""Model files' headers as read before any weights load (app.assist.model.modelfiles): any
safetensors or GGUF bytes are accepted or refused (ModelRefused) quickly."""

from __future__ import annotations

import json
import struct
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.assist.errors import ModelRefused
from app.assist.model.modelfiles import check_gguf, check_safetensors
from tests.fuzz.bounds import bounded, grows_linearly

DTYPES = ["F32", "F16", "BF16", "I8", "U8", "I64", "BOOL", "F8_E4M3", "X"]
ENTRY = st.fixed_dictionaries({
    "dtype": st.sampled_from(DTYPES),
    "shape": st.lists(st.integers(-2, 2**40), max_size=5) | st.just("x"),
    "data_offsets": st.lists(st.integers(-1, 2**33), min_size=0, max_size=3)})
HEADERS = st.dictionaries(st.text(max_size=10), ENTRY | st.integers() | st.text(max_size=5),
                          max_size=5)


def _on_file(check: Callable[[Path], None]) -> Callable[[bytes], None]:
    """`check` run on a file holding the given bytes."""
    def run(data: bytes) -> None:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "model.bin"
            path.write_bytes(data)
            check(path)
    return run


def safetensors(header: object, data: bytes = b"\0" * 64) -> bytes:
    """A safetensors file: the header's length, the JSON header, the data."""
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data


def gguf(tensors: int, metadata: list[tuple[str, int, bytes]], tail: bytes = b"") -> bytes:
    """A GGUF v3 file with these counts, metadata (key, type, encoded value) and trailing bytes."""
    out = b"GGUF" + struct.pack("<IQQ", 3, tensors, len(metadata))
    for key, kind, value in metadata:
        out += struct.pack("<Q", len(key)) + key.encode() + struct.pack("<I", kind) + value
    return out + tail


@given(HEADERS)
def test_any_safetensors_header_is_accepted_or_refused(header: dict[str, object]) -> None:
    """Tensor entries of any shape, dtype and offsets."""
    bounded(_on_file(check_safetensors), safetensors(header), (ModelRefused,))


@given(st.binary(max_size=200))
def test_any_bytes_are_refused_as_either_format(data: bytes) -> None:
    """Raw bytes, with and without each format's magic."""
    bounded(_on_file(check_safetensors), data, (ModelRefused,))
    bounded(_on_file(check_gguf), b"GGUF" + data, (ModelRefused,))
    bounded(_on_file(check_gguf), data, (ModelRefused,))


@given(st.integers(0, 2**64 - 1), st.lists(st.tuples(
    st.text(max_size=6), st.integers(0, 13), st.binary(max_size=24)), max_size=4),
    st.binary(max_size=64))
def test_any_gguf_table_is_accepted_or_refused(tensors: int,
                                               metadata: list[tuple[str, int, bytes]],
                                               tail: bytes) -> None:
    """Counts, types and values of any kind in the metadata table."""
    bounded(_on_file(check_gguf), gguf(tensors, metadata, tail), (ModelRefused,))


@pytest.mark.parametrize(("check", "make"), [
    (check_safetensors, lambda k: safetensors({"w": {"dtype": "F32", "shape": [2**60] * k,
                                                     "data_offsets": [0, 8]}})),
    (check_safetensors, lambda k: safetensors({f"w{i}": {"dtype": "F32", "shape": [1],
                                                         "data_offsets": [4 * i, 4 * i + 4]}
                                               for i in range(k)}, b"\0" * 4 * k)),
    (check_safetensors, lambda k: safetensors({"x" * k: {"dtype": "X"}})),
    (check_gguf, lambda k: gguf(0, [("a", 9, struct.pack("<IQ", 8, k) +
                                     struct.pack("<Q", 1) * k)])),
], ids=["long-shape", "many-tensors", "long-name", "string-array"])
def test_the_work_grows_linearly(check: Callable[[Path], None], make: object) -> None:
    """A header 4 times larger costs about 4 times more; names in messages are cut short."""
    grows_linearly(_on_file(check), make, 3000, (ModelRefused,))  # type: ignore[arg-type]
    message = bounded(_on_file(check), make(20_000), (ModelRefused,)).message  # type: ignore[operator]
    assert len(message) < 600
