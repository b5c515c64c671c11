"""Bench requests of several launches per variant: the wire (a v1 variant stays the line it was,
`then` and `per_launch` only when used), a real selftest worker timing a sequence on buffers it
shares by file, and the pycuda timer on the fake driver (one allocation per distinct buffer,
the same pointer for every launch naming it, one event pair per sample, events between
launches for per-launch times)."""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.base import codec
from app.engine.worker import protocol
from app.engine.worker.backends.base import BufferArg, LaunchRequest, ScalarArg
from app.engine.worker.client import WorkerHandle
from app.engine.worker.timing import TimingPlan
from tests.engine import fake_pycuda

PLAN = TimingPlan(budget_ms=20.0, min_samples=5, max_samples=8, warmup_ms=0.0)
SIZE = 64


def _item(path: Path, first: bool = True) -> protocol.BufferItem:
    """A buffer item without guards (the selftest copy works on whole images)."""
    return protocol.BufferItem(str(path), 0, "uint8",
                               first=str(path.with_suffix(".first")) if first else None)


def _sequence(folder: Path, entries: tuple[str, str] = ("copy", "copy")) -> protocol.BenchVariant:
    """a -> tmp -> c: the second launch reads what the first wrote into the shared `tmp`."""
    a, tmp, c = folder / "a.bin", folder / "tmp.bin", folder / "c.bin"
    np.arange(SIZE, dtype=np.uint8).tofile(a)
    np.full(SIZE, 0xEE, dtype=np.uint8).tofile(tmp)
    np.zeros(SIZE, dtype=np.uint8).tofile(c)
    first = protocol.Launch.of(protocol.KernelRef(entries[0], entries[0]), (1,), (1,), 0,
                               (_item(a), _item(tmp)))
    second = protocol.Launch.of(protocol.KernelRef(entries[1], entries[1]), (1,), (1,), 0,
                                (_item(tmp), _item(c)))
    return protocol.BenchVariant.of_launches((first, second))


def test_a_one_launch_variant_is_the_line_it_always_was(tmp_path: Path) -> None:
    launch = protocol.Launch.of(protocol.KernelRef("copy", "copy"), (1,), (1,), 0,
                                (_item(tmp_path / "a.bin"),))
    variant = protocol.BenchVariant.of_launches((launch,))
    assert codec.to_object(variant) == codec.to_object(launch)  # no "then"
    request = codec.to_object(protocol.BenchRequest((variant,), PLAN))
    assert "per_launch" not in request and request["helpers_cubin_path"] is None
    assert set(request) == {"op", "variants", "plan", "helpers_cubin_path"}
    # A caller that still passes plain Launches gets the same request.
    assert protocol.BenchRequest((launch,), PLAN) == protocol.BenchRequest((variant,), PLAN)


def test_a_sequence_request_survives_the_wire(tmp_path: Path) -> None:
    variant = _sequence(tmp_path)
    request = protocol.BenchRequest((variant,), PLAN, None, per_launch=True)
    message = protocol.decode(protocol.encode({"id": 1, **codec.to_object(request)}))
    assert [launch["entry"] for launch in message["variants"][0]["then"]] == ["copy"]
    assert message["per_launch"] is True
    again = protocol.request_from_message(message)
    assert again == request
    assert isinstance(again, protocol.BenchRequest)
    assert [launch.args[0] for launch in again.variants[0].launches] == \
        [_item(tmp_path / "a.bin"), _item(tmp_path / "tmp.bin")]


@pytest.fixture
def handle(tmp_path: Path) -> Iterator[WorkerHandle]:
    """A selftest worker handle, closed after the test."""
    worker_handle = WorkerHandle("selftest", log_dir=tmp_path)
    yield worker_handle
    worker_handle.close()


def test_a_real_worker_times_a_sequence_on_shared_buffers(handle: WorkerHandle,
                                                          tmp_path: Path) -> None:
    variant = _sequence(tmp_path, ("copy", "chatty_copy"))
    request = protocol.BenchRequest((variant,), PLAN, None, per_launch=True)
    reply = handle.ensure().request(codec.to_object(request), timeout=60)
    assert reply["ok"], reply
    expected = list(range(SIZE))
    # The second launch copied what the first wrote into tmp: one buffer, not two uploads.
    assert np.fromfile(tmp_path / "c.bin", dtype=np.uint8).tolist() == expected
    assert np.fromfile(tmp_path / "tmp.bin", dtype=np.uint8).tolist() == expected
    assert np.fromfile(tmp_path / "c.first", dtype=np.uint8).tolist() == expected
    assert np.fromfile(tmp_path / "tmp.first", dtype=np.uint8).tolist() == expected
    [samples] = reply["samples_ms"]
    [parts] = reply["launch_ms"]
    assert len(parts) == 2 and all(len(p) == len(samples) for p in parts)
    for number, sample in enumerate(samples):
        assert all(p[number] > 0 for p in parts)
        assert sample >= max(p[number] for p in parts)
        assert sum(p[number] for p in parts) == pytest.approx(sample, rel=1e-6)


def test_without_per_launch_the_reply_has_no_launch_times(handle: WorkerHandle,
                                                          tmp_path: Path) -> None:
    request = protocol.BenchRequest((_sequence(tmp_path),), PLAN)
    reply = handle.ensure().request(codec.to_object(request), timeout=60)
    assert reply["ok"], reply
    assert "launch_ms" not in reply
    assert np.fromfile(tmp_path / "c.bin", dtype=np.uint8).tolist() == list(range(SIZE))


# -- the pycuda timer on the fake driver -------------------------------------------------------

GUARD = 256
N = 1000


@pytest.fixture
def backend(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A PycudaBackend imported over the fake driver (the real modules are put back after)."""
    package = types.ModuleType("pycuda")
    package.driver = fake_pycuda  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pycuda", package)
    monkeypatch.setitem(sys.modules, "pycuda.driver", fake_pycuda)
    monkeypatch.setitem(sys.modules, "pynvml", None)
    names = ("app.engine.worker.backends.pycuda_backend",
             "app.engine.worker.backends.pycuda_timer")
    for name in names:
        monkeypatch.delitem(sys.modules, name, raising=False)
    fake_pycuda.reset()
    instance = importlib.import_module(names[0]).PycudaBackend(0)
    yield instance
    instance.close()
    for name in names:
        sys.modules.pop(name, None)


def _image(values: np.ndarray) -> np.ndarray:
    """guard, float32 data, guard."""
    body = values.astype(np.float32).view(np.uint8)
    whole = np.full(2 * GUARD + body.size, 0xFF, dtype=np.uint8)
    whole[GUARD:GUARD + body.size] = body
    return whole


def _data(image: np.ndarray) -> np.ndarray:
    """The float32 data of an image."""
    return image[GUARD:GUARD + 4 * N].view(np.float32)


def _copy_then_add() -> list[LaunchRequest]:
    """copy_f32(src, dst) then add_one(dst): dst = src + 1 only if both launches share dst."""
    src = _image(np.arange(N))
    dst = _image(np.full(N, np.nan))
    count = ScalarArg(N, "int32")
    return [LaunchRequest("copy_f32", "copy_f32", (4, 1, 1), (256, 1, 1), 0,
                          [BufferArg(src, GUARD, "float32"), BufferArg(dst, GUARD, "float32"),
                           count], cubin=b"fake cubin"),
            LaunchRequest("add_one", "add_one", (4, 1, 1), (256, 1, 1), 0,
                          [BufferArg(dst, GUARD, "float32"), count], cubin=b"fake cubin")]


def test_one_allocation_per_buffer_and_one_event_pair_per_sample(backend: Any,
                                                                 monkeypatch: Any) -> None:
    allocations: list[int] = []
    real = fake_pycuda.mem_alloc
    monkeypatch.setattr(fake_pycuda, "mem_alloc",
                        lambda size: allocations.append(size) or real(size))
    sequence = _copy_then_add()
    record = backend.time([sequence], PLAN, helpers=None)
    # src and dst, each a work copy and a pristine copy; the flush buffer; nothing for dst twice.
    image_bytes = sequence[0].args[0].image.nbytes  # type: ignore[union-attr]
    assert allocations.count(image_bytes) == 4
    expected = np.arange(N, dtype=np.float32) + 1
    assert np.array_equal(_data(sequence[1].args[0].image), expected)  # type: ignore[union-attr]
    first = record.first_images[0]
    assert len(first) == 5 and first[2] is None and first[4] is None
    assert first[1] is first[3]  # dst, listed for both launches, copied once
    assert np.array_equal(_data(first[1]), expected)
    log = [e for e in fake_pycuda.LOG if e[0] in ("record", "launch")]
    starts = [i for i, e in enumerate(log) if e[0] == "record"][::2]
    assert all(log[i + 1:i + 4] == [("launch", "copy_f32"), ("launch", "add_one"),
                                    ("record", None)] for i in starts)
    assert record.outcome.launch_ms == []
    assert record.facts["timer"] == "CUDA events, one pair per sample around all of its launches"


def test_per_launch_records_an_event_between_launches(backend: Any) -> None:
    record = backend.time([_copy_then_add()], PLAN, helpers=None, per_launch=True)
    log = [e for e in fake_pycuda.LOG if e[0] in ("record", "launch")]
    timed = log[log.index(("record", None)):]
    assert timed[:5] == [("record", None), ("launch", "copy_f32"), ("record", None),
                         ("launch", "add_one"), ("record", None)]
    [samples] = record.outcome.samples_ms
    [parts] = record.outcome.launch_ms
    assert len(parts) == 2 and all(len(p) == len(samples) for p in parts)
    for number, sample in enumerate(samples):
        assert sum(p[number] for p in parts) == pytest.approx(sample, rel=1e-6, abs=1e-9)
    assert "one event between consecutive launches" in record.facts["timer"]
    assert not fake_pycuda.MEMORY  # everything freed


def test_a_one_launch_variant_is_timed_as_before(backend: Any) -> None:
    [copy, _] = _copy_then_add()
    record = backend.time([[copy]], PLAN, helpers=None)
    assert record.facts["timer"] == "CUDA events, one pair per sample"
    assert len(record.first_images[0]) == 3
