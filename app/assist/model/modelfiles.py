"""The structure of model files, checked before any library parses them: the links and file
kinds of a model folder, a safetensors file's header, a GGUF file's header and tensor table.

A truncated GGUF or a crafted safetensors header (a huge header length, text that is not JSON,
offsets past the end) used to end deep inside a parser as a traceback; each is now a
ModelRefused naming the file and what is wrong with it. The readers here are bounded: every
length is checked against the bytes that remain before anything is read or allocated.
"""

from __future__ import annotations

import json
import math
import mmap
import os
import stat
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from app.assist.errors import GenerationFailed, ModelRefused

# The manifest's own file name in a model folder (app.assist.model.manifest).
MANIFEST_NAME = "manifest.json"
# A model's LoRA adapters (app.assist.model.adapters) live below it, outside its manifest.
ADAPTERS_PREFIX = "adapters/"

T = TypeVar("T")
# safetensors' own limit for the JSON header.
MAX_SAFETENSORS_HEADER = 100 << 20
# Real tensors have a handful of dimensions; the product of a crafted shape of 100,000 took
# 28 s (each product longer than the last).
MAX_SAFETENSORS_DIMS = 16
# Bits per element of each safetensors dtype.
SAFETENSORS_BITS = {"BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8,
                    "I16": 16, "U16": 16, "F16": 16, "BF16": 16, "I32": 32, "U32": 32,
                    "F32": 32, "I64": 64, "U64": 64, "F64": 64, "C64": 64, "F4": 4,
                    "F6_E2M3": 6, "F6_E3M2": 6}
LINK_HINT = ("copy the files into the folder (kernel-studio model import copies them), so that "
             "the manifest covers everything that is loaded")


def refused(path: Path, problem: str, hint: str = "") -> ModelRefused:
    """The error for one model file."""
    return ModelRefused(f"{path}: {problem}; it was refused", path,
                        hint or "use a complete copy of the model from a trusted source")


# --- folders -----------------------------------------------------------------------------------


def check_links(folder: Path) -> None:
    """ModelRefused for a link that leads out of `folder`, or an entry that is neither a
    regular file nor a folder (a FIFO named model.safetensors would hang the loader)."""
    root = folder.resolve()
    for current, folders, files in os.walk(folder, followlinks=False):
        for name in [*folders, *files]:
            _check_entry(Path(current) / name, root)


def _check_entry(path: Path, root: Path) -> None:
    """One entry of a model folder."""
    if path.is_symlink():
        target = path.resolve()
        if not target.is_relative_to(root):
            raise refused(path, f"it is a link to {target}, outside the model folder", LINK_HINT)
    mode = path.stat().st_mode if path.exists() else 0
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise refused(path, "it is not a regular file (a broken link, a pipe or a device)")


# --- safetensors -------------------------------------------------------------------------------


def check_safetensors(path: Path) -> None:
    """A safetensors file whose header is JSON of sane size, naming known dtypes, and whose
    tensors lie inside the file without overlapping."""
    size = path.stat().st_size
    with open(path, "rb") as handle:
        prefix = handle.read(8)
        if len(prefix) < 8:
            raise refused(path, f"it has {size} bytes, too few for a safetensors header")
        length = struct.unpack("<Q", prefix)[0]
        if length > MAX_SAFETENSORS_HEADER or 8 + length > size:
            raise refused(path, f"its header claims {length} bytes (the file has {size}; "
                                f"safetensors allows at most {MAX_SAFETENSORS_HEADER})")
        header = _json_header(path, handle.read(length))
    _check_tensors(path, header, size - 8 - length)


def _json_header(path: Path, raw: bytes) -> dict[str, Any]:
    """The header as a JSON object."""
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise refused(path, "its header is not JSON") from None
    if not isinstance(header, dict):
        raise refused(path, "its header is not a JSON object")
    return header


def _check_tensors(path: Path, header: dict[str, Any], data_bytes: int) -> None:
    """Every tensor entry well formed, inside the data, and no two overlapping."""
    spans = []
    for name, entry in header.items():
        if name == "__metadata__":
            if not isinstance(entry, dict):
                raise refused(path, "its __metadata__ is not a JSON object")
            continue
        spans.append((*_span(path, name, entry, data_bytes), name))
    spans.sort()
    for (_, end, first), (begin, _, second) in zip(spans, spans[1:], strict=False):
        if begin < end:
            raise refused(path, f"tensors {_brief(first)} and {_brief(second)} overlap")


def _span(path: Path, name: str, entry: Any, data_bytes: int) -> tuple[int, int]:
    """One tensor's [begin, end) in the data, checked against its dtype and shape."""
    if not isinstance(entry, dict):
        raise refused(path, f"tensor {_brief(name)} is not described by a JSON object")
    dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if dtype not in SAFETENSORS_BITS:
        raise refused(path, f"tensor {_brief(name)} has unknown dtype {str(dtype)[:20]!r}")
    if not isinstance(shape, list) or len(shape) > MAX_SAFETENSORS_DIMS or not all(
            _whole(d) for d in shape):
        raise refused(path, f"tensor {_brief(name)} has a malformed shape (a list of at most "
                            f"{MAX_SAFETENSORS_DIMS} sizes)")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(_whole(o) for o in offsets)):
        raise refused(path, f"tensor {_brief(name)} has malformed data_offsets")
    begin, end = offsets
    if not begin <= end <= data_bytes:
        raise refused(path, f"tensor {_brief(name)} lies at bytes {begin} to {end}, past the "
                            f"end of the file's {data_bytes} bytes of data (truncated or "
                            "crafted)")
    expected = math.ceil(math.prod(shape) * SAFETENSORS_BITS[str(dtype)] / 8)
    if end - begin != expected:
        raise refused(path, f"tensor {_brief(name)} has {end - begin} bytes; its dtype and shape "
                            f"need {expected}")
    return begin, end


def _brief(name: str) -> str:
    """A name from the file for a message, cut short (a crafted one may be megabytes long)."""
    return repr(name) if len(name) <= 60 else repr(name[:57]) + "..."


def _whole(value: Any) -> bool:
    """A non-negative integer (JSON true is not one)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


# --- GGUF --------------------------------------------------------------------------------------

# GGUF metadata value types with a fixed size, in bytes; 8 is a string, 9 an array.
_FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY, _UINT32 = 8, 9, 4
MAX_COUNT = 1 << 24
MAX_DIMS = 8
MAX_ARRAY_NESTING = 4


class _Cursor:
    """Reads little-endian values from a mapped file, never past its end."""

    def __init__(self, data: mmap.mmap, path: Path) -> None:
        """Start at the beginning."""
        self.data, self.path, self.at = data, path, 0

    def take(self, count: int, what: str) -> bytes:
        """The next `count` bytes; ModelRefused when the file ends first."""
        if count < 0 or self.at + count > len(self.data):
            raise refused(self.path, f"the file ends inside {what} (byte {self.at} of "
                                     f"{len(self.data)}): it is truncated or malformed")
        chunk = self.data[self.at:self.at + count]
        self.at += count
        return chunk

    def number(self, fmt: str, what: str) -> int:
        """One unsigned integer of struct format `fmt` ('I' or 'Q')."""
        value: int = struct.unpack("<" + fmt, self.take(struct.calcsize(fmt), what))[0]
        return value

    def count(self, what: str, each: int = 1) -> int:
        """A 64-bit count of items of at least `each` bytes that the rest of the file can hold."""
        value = self.number("Q", what)
        if value > MAX_COUNT or value * each > len(self.data) - self.at:
            raise refused(self.path, f"{what} claims {value} items, more than the file holds: "
                                     "it is truncated or malformed")
        return value

    def string(self, what: str) -> str:
        """A GGUF string: a 64-bit length, then UTF-8 bytes."""
        return self.take(self.count(what), what).decode("utf-8", "replace")


def check_gguf(path: Path) -> None:
    """A GGUF file whose header, metadata and tensor table are readable and whose tensors all
    lie inside the file."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size < 24:
            raise refused(path, f"it has {size} bytes, too few for a GGUF header")
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            _walk_gguf(_Cursor(data, path))


def _walk_gguf(cursor: _Cursor) -> None:
    """Header, metadata, tensor table, then every tensor's bytes against the file's size."""
    if cursor.take(4, "the magic bytes") != b"GGUF":
        raise refused(cursor.path, "it does not start with the GGUF magic bytes")
    version = cursor.number("I", "the version")
    if version not in (2, 3):
        raise refused(cursor.path, f"GGUF version {version} is not supported (2 or 3)")
    tensors = cursor.count("the tensor count", 24)
    entries = cursor.count("the metadata count", 12)
    alignment = 32
    for _ in range(entries):
        key = cursor.string("a metadata key")
        kind = cursor.number("I", f"the type of {_brief(key)}")
        if key == "general.alignment" and kind == _UINT32:
            alignment = cursor.number("I", "general.alignment")
        else:
            _skip_value(cursor, kind, key, 0)
    if alignment <= 0 or alignment & (alignment - 1):
        raise refused(cursor.path, f"general.alignment {alignment} is not a power of two")
    table = [_tensor_info(cursor) for _ in range(tensors)]
    start = -(-cursor.at // alignment) * alignment
    for name, offset, nbytes in table:
        if start + offset + nbytes > len(cursor.data):
            end = start + offset + nbytes
            raise refused(cursor.path, f"tensor {_brief(name)} ends at byte {end}, past the end "
                                       f"of the file ({len(cursor.data)} bytes): it is "
                                       "truncated")


def _skip_value(cursor: _Cursor, kind: int, key: str, depth: int) -> None:
    """Step over one metadata value of type `kind`."""
    if kind in _FIXED:
        cursor.take(_FIXED[kind], f"the value of {_brief(key)}")
    elif kind == _STRING:
        cursor.string(f"the value of {_brief(key)}")
    elif kind == _ARRAY and depth < MAX_ARRAY_NESTING:
        item = cursor.number("I", f"the item type of {_brief(key)}")
        count = cursor.count(f"the array {_brief(key)}", _FIXED.get(item, 8))
        if item in _FIXED:
            cursor.take(count * _FIXED[item], f"the array {_brief(key)}")
            return
        for _ in range(count):
            _skip_value(cursor, item, key, depth + 1)
    else:
        raise refused(cursor.path, f"metadata {_brief(key)} has unknown type {kind}")


def _tensor_info(cursor: _Cursor) -> tuple[str, int, int]:
    """One entry of the tensor table: name, offset in the data, and size in bytes."""
    name = cursor.string("a tensor name")
    dims = cursor.number("I", f"the dimensions of {_brief(name)}")
    if not 1 <= dims <= MAX_DIMS:
        raise refused(cursor.path, f"tensor {_brief(name)} has {dims} dimensions")
    shape = [cursor.number("Q", f"the shape of {_brief(name)}") for _ in range(dims)]
    kind = cursor.number("I", f"the type of {_brief(name)}")
    offset = cursor.number("Q", f"the offset of {_brief(name)}")
    # Imported here: gguf takes 0.15 s to import, and the window imports this module at start.
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    try:
        block, block_bytes = GGML_QUANT_SIZES[GGMLQuantizationType(kind)]
    except (ValueError, KeyError):
        raise refused(cursor.path, f"tensor {_brief(name)} has unknown type {kind}") from None
    count = math.prod(shape)
    if count % block:
        raise refused(cursor.path, f"tensor {_brief(name)} has {count} elements, not whole blocks "
                                   f"of {block}")
    return name, offset, count // block * block_bytes


def model_files(folder: Path) -> list[str]:
    """Every file under `folder` (relative, POSIX style, sorted), the manifest itself and the
    adapters/ folder excepted (each adapter has a manifest of its own, checked when it is used:
    training one must not make its model "changed")."""
    names = [p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()]
    return sorted(n for n in names if n != MANIFEST_NAME and not n.startswith(ADAPTERS_PREFIX))


def check_weights(folder: Path) -> None:
    """Every safetensors file of a model folder, its adapters/ aside: each adapter is checked
    when it is chosen, so a broken one cannot take the model and the other adapters with it."""
    for name in model_files(folder):
        if name.endswith(".safetensors"):
            check_safetensors(folder / name)


def unreadable_as_refusal(folder: Path, what: str, load: Callable[[], T]) -> T:
    """`load()` (a transformers from_pretrained), its failure on files that passed every check
    said in words: ModelRefused for files it cannot use, GenerationFailed when memory ran out
    (the model is fine; this machine could not hold it)."""
    try:
        return load()
    except (MemoryError, RuntimeError) as error:
        if isinstance(error, MemoryError) or "out of memory" in str(error).lower():
            raise GenerationFailed(f"not enough memory to load the model's {what}: {error}",
                                   "close other programs, or use a smaller or quantized "
                                   "model") from None
        raise refused(folder, f"its {what} cannot be loaded: {error}") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError, struct.error) as error:
        raise refused(folder, f"its {what} cannot be loaded: {type(error).__name__}: "
                              f"{error}") from None
