"""The pycuda backend's timing code on a fake driver (tests/engine/fake_pycuda.py): what is
queued per sample in cold and hot mode, that every launch starts from the same images, that
the first and last launches come back, and the backend's load-then-run path. The numbers are
the host's, not a GPU's: GPU accuracy is checked by the gpu tests and the benchmark."""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from app.engine.worker.backends.base import BufferArg, LaunchRequest, ScalarArg
from app.engine.worker.timing import TimingPlan
from tests.engine import fake_pycuda

GUARD = 256
N = 1000


@pytest.fixture
def backend(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A PycudaBackend imported over the fake driver (the real modules are put back after)."""
    package = types.ModuleType("pycuda")
    package.driver = fake_pycuda  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pycuda", package)
    monkeypatch.setitem(sys.modules, "pycuda.driver", fake_pycuda)
    monkeypatch.setitem(sys.modules, "pynvml", None)  # no NVML: the clock falls back
    for name in ("app.engine.worker.backends.pycuda_backend",
                 "app.engine.worker.backends.pycuda_timer"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    fake_pycuda.reset()
    module = importlib.import_module("app.engine.worker.backends.pycuda_backend")
    instance = module.PycudaBackend(0)
    yield instance
    instance.close()
    for name in ("app.engine.worker.backends.pycuda_backend",
                 "app.engine.worker.backends.pycuda_timer"):
        sys.modules.pop(name, None)


def image(values: np.ndarray) -> np.ndarray:
    """A buffer image: guard, data, guard (0xFF guards as the verifier makes them)."""
    body = values.astype(np.float32).view(np.uint8)
    whole = np.full(2 * GUARD + body.size, 0xFF, dtype=np.uint8)
    whole[GUARD:GUARD + body.size] = body
    return whole


def data(arg: BufferArg | np.ndarray) -> np.ndarray:
    """The float32 data of an image."""
    whole = arg.image if isinstance(arg, BufferArg) else arg
    return whole[GUARD:GUARD + 4 * N].view(np.float32)


def copy_request(symbol: str = "copy_f32") -> LaunchRequest:
    """src -> dst, with a poisoned dst."""
    source = BufferArg(image(np.arange(N)), GUARD, "float32")
    target = BufferArg(image(np.full(N, np.nan)), GUARD, "float32")
    return LaunchRequest(symbol, symbol, (4, 1, 1), (256, 1, 1), 0,
                         [source, target, ScalarArg(N, "int32")], cubin=b"fake cubin")


def plan(mode: str = "cold", **changes: Any) -> TimingPlan:
    """A short plan."""
    values: dict[str, Any] = {"mode": mode, "budget_ms": 5.0, "min_samples": 10,
                              "max_samples": 12, "warmup_ms": 0.0}
    values.update(changes)
    return TimingPlan(**values)


def launches(name: str) -> int:
    """How many times a kernel was launched."""
    return sum(1 for kind, what in fake_pycuda.LOG if kind == "launch" and what == name)


def test_cold_sample_restores_flushes_spins_then_times_one_launch(backend: Any) -> None:
    request = copy_request()
    record = backend.time([[request]], plan("cold"), helpers=b"helpers cubin")
    count = len(record.outcome.samples_ms[0])
    assert 10 <= count <= 12
    flush_bytes = 2 * fake_pycuda.ATTRIBUTES["L2_CACHE_SIZE"]
    memsets = [size for kind, size in fake_pycuda.LOG if kind == "memset_d8"]
    # One L2 flush (write) per sample, and one to clear the read buffer when it was set up.
    assert memsets.count(flush_bytes) == count + 1
    assert launches("ks_read_flush") == count  # and one clean read per sample
    assert launches("ks_spin") == count
    # Between the two events of a sample there is the launch and nothing else.
    log = [entry for entry in fake_pycuda.LOG if entry[0] in ("record", "launch", "memset_d8",
                                                              "memcpy_dtod")]
    starts = [i for i, entry in enumerate(log) if entry[0] == "record"][::2]
    assert all(log[i + 1] == ("launch", "copy_f32") and log[i + 2][0] == "record"
               for i in starts)
    assert record.facts["flush"] == "write then read"
    assert record.facts["flush_bytes"] == flush_bytes
    assert record.facts["sm_count"] == 132


def test_hot_mode_never_flushes(backend: Any) -> None:
    record = backend.time([[copy_request()]], plan("hot"), helpers=b"helpers cubin")
    assert not [kind for kind, _ in fake_pycuda.LOG if kind == "memset_d8"]
    assert launches("ks_read_flush") == 0
    assert record.facts["flush"] == "none (hot)"


def test_without_helpers_the_flush_is_a_write_only(backend: Any) -> None:
    record = backend.time([[copy_request()]], plan("cold"), helpers=None)
    assert launches("ks_spin") == 0
    assert record.facts["flush"] == "write"
    assert record.facts["spin_us"] is None


def test_first_and_last_launch_images_come_back(backend: Any) -> None:
    request = copy_request()
    record = backend.time([[request]], plan(), helpers=None)
    first = record.first_images[0]
    assert first[2] is None  # the scalar
    assert np.array_equal(data(first[1]), np.arange(N, dtype=np.float32))
    assert np.array_equal(data(request.args[1]), np.arange(N, dtype=np.float32))  # last
    assert (request.args[1].image[:GUARD] == 0xFF).all()


def test_every_launch_starts_from_the_same_images(backend: Any) -> None:
    y = BufferArg(image(np.zeros(N)), GUARD, "float32")
    request = LaunchRequest("add_one", "add_one", (4, 1, 1), (256, 1, 1), 0,
                            [y, ScalarArg(N, "int32")], cubin=b"fake cubin")
    record = backend.time([[request]], plan(warmup_ms=1.0), helpers=None)
    assert launches("add_one") > len(record.outcome.samples_ms[0])  # warm-ups ran too
    assert np.array_equal(data(request.args[0]), np.ones(N, dtype=np.float32))
    assert np.array_equal(data(record.first_images[0][0]), np.ones(N, dtype=np.float32))


def test_a_lazy_kernel_leaves_its_last_launch_unwritten(backend: Any) -> None:
    request = copy_request("lazy_copy")
    record = backend.time([[request]], plan(), helpers=None)
    assert np.array_equal(data(record.first_images[0][1]), np.arange(N, dtype=np.float32))
    assert np.isnan(data(request.args[1])).all()  # the poison restored before the last launch


def test_two_variants_are_interleaved(backend: Any) -> None:
    record = backend.time([[copy_request()], [copy_request()]], plan(), helpers=None)
    order = record.outcome.order
    assert order[:6] == [0, 1, 0, 1, 0, 1]
    assert len(record.outcome.samples_ms[0]) == len(record.outcome.samples_ms[1])


def test_everything_allocated_is_freed(backend: Any) -> None:
    backend.time([[copy_request()]], plan(), helpers=b"helpers cubin")
    assert not fake_pycuda.MEMORY


def test_load_then_run_by_symbol_alone(backend: Any) -> None:
    request = copy_request()
    backend.prepare(request)
    request.cubin = None  # run requests name only the symbol
    backend.run(request)
    assert np.array_equal(data(request.args[1]), np.arange(N, dtype=np.float32))
