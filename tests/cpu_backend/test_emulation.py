"""The CUDA emulation itself, one behaviour at a time, on kernels run by a real cpu worker:
barriers, warp operations with full and partial masks, atomics across parallel blocks, shared
memory, half and bfloat16."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.cpu_backend.harness import CpuWorker, LaunchFailed, Scalar

NAN_BITS = 0xFFFFFFFF  # the emulation's fill for fresh shared memory, read as a float


def test_barrier_orders_shared_memory_and_a_missing_one_is_always_caught(cpu: CpuWorker) -> None:
    x = np.arange(1, 257, dtype=np.float32)
    x[::3] *= -1
    out_barrier, out_race, votes = cpu.run("sync.cu", "rotate", (1,), (256,), [
        x, np.zeros(256, np.float32), np.zeros(256, np.float32), np.zeros(4, np.int32)])[1:]
    assert np.array_equal(out_barrier, np.roll(x, -1))
    # Without the barrier each thread reads its neighbour's slot before the neighbour ran:
    # the slot still holds the fill, every time. Only the last thread sees thread 0's write.
    assert (out_race[:-1].view(np.uint32) == NAN_BITS).all()
    assert out_race[-1] == x[0]
    assert votes.tolist() == [int((x > 0).sum()), 1, 1, 0]


def test_threads_that_exit_early_do_not_hold_up_a_barrier(cpu: CpuWorker) -> None:
    values = np.arange(256, dtype=np.int32)
    out = cpu.run("sync.cu", "early_exit", (1,), (256,),
                  [values, np.full(256, -1, np.int32), Scalar(100, "int32")])[1]
    assert np.array_equal(out[:100], 2 * values[:100][::-1])
    assert (out[100:] == -1).all()


def test_a_deadlocked_block_fails_the_launch_with_a_description(cpu: CpuWorker) -> None:
    with pytest.raises(LaunchFailed) as failure:
        cpu.run("sync.cu", "deadlock", (1,), (32,), [np.zeros(32, np.int32)])
    assert failure.value.kind == "device"
    assert "deadlock in block (0, 0, 0)" in str(failure.value)
    assert "16 thread(s) wait at __syncthreads()" in str(failure.value)


def test_nanosleep_lets_other_threads_of_the_block_run(cpu: CpuWorker) -> None:
    out = cpu.run("sync.cu", "polling", (1,), (64,), [np.zeros(1, np.int32)], timeout=20)[0]
    assert out[0] == 1


def _shuffle_expected(x: np.ndarray) -> list[np.ndarray]:
    """What each shuffle of warp.cu gives, by PTX's lane rules."""
    t = np.arange(x.size)
    lane, base = t % 32, t - t % 32
    own = x.copy()

    def pick(source: np.ndarray, valid: np.ndarray) -> np.ndarray:
        return np.where(valid, x[np.clip(base + source, 0, x.size - 1)], own)

    segment8, segment16 = lane & ~7, lane & ~15
    partial = np.where(lane < 16, x[base + (lane ^ 1)], pick(lane + 1, lane + 1 <= 31))
    odd = np.where(lane & 1, x[base + (lane + 2) % 32], -1)
    return [x[base + (lane * 7) % 32], pick(lane - 3, lane >= 3), pick(lane + 5, lane + 5 <= 31),
            x[base + (lane ^ 6)], pick(lane + 2, lane + 2 <= segment8 + 7),
            x[base + segment16 + 3], partial, odd, x[base + (lane ^ 1)],
            2 * x[base + 31 - lane] + 3]


def test_shuffles_follow_ptx_lane_rules_with_full_and_partial_masks(cpu: CpuWorker) -> None:
    x = np.random.default_rng(1).integers(-1000, 1000, 64).astype(np.int32)
    out = cpu.run("warp.cu", "shuffles", (1,), (64,),
                  [x, np.zeros(10 * 64, np.int32), Scalar(64, "int32")])[1]
    for index, want in enumerate(_shuffle_expected(x)):
        assert np.array_equal(out[index * 64:(index + 1) * 64], want), f"shuffle {index}"


def _votes_expected(x: np.ndarray) -> list[np.ndarray]:
    """What each vote of warp.cu gives."""
    t = np.arange(x.size)
    lane, warp = t % 32, t // 32
    bits = np.uint64(1) << lane.astype(np.uint64)
    per_warp = lambda mask: np.array([int(bits[(warp == w) & mask].sum()) for w in warp])  # noqa: E731
    ballot = per_warp(x > 0)
    half = np.where(lane < 16, 0x0000FFFF, 0xFFFF0000)
    thirds = per_warp(lane % 3 == 0)
    match = np.array([int(bits[(warp == warp[i]) & ((x & 3) == (x[i] & 3))].sum())
                      for i in range(x.size)])
    sums = np.array([int(x[warp == w].astype(np.int64).sum()) & 0xFFFFFFFF for w in warp])
    maxima = np.array([int(x[warp == w].max()) & 0xFFFFFFFF for w in warp])
    return [ballot, (ballot != 0), ballot == 0xFFFFFFFF, ballot & half,
            np.ones(x.size), np.where(lane % 3 == 0, thirds, 0xDEADBEEF), match, sums, maxima,
            lane]


def test_ballot_any_all_activemask_match_and_reduce(cpu: CpuWorker) -> None:
    x = np.random.default_rng(2).integers(-50, 50, 64).astype(np.int32)
    x[32:] = np.abs(x[32:]) + 1  # the second warp votes all-true
    out = cpu.run("warp.cu", "votes", (1,), (64,),
                  [x, np.zeros(10 * 64, np.uint32), Scalar(64, "int32")])[1]
    for index, want in enumerate(_votes_expected(x)):
        got = out[index * 64:(index + 1) * 64].astype(np.int64)
        assert np.array_equal(got, np.asarray(want).astype(np.int64)), f"vote {index}"


def test_cooperative_groups_tiles_reduce_within_the_tile(cpu: CpuWorker) -> None:
    x = np.arange(64, dtype=np.int32)
    out = cpu.run("warp.cu", "tiles", (1,), (64,), [x, np.zeros(64, np.int32),
                                                    Scalar(64, "int32")])[1]
    sums = x.reshape(8, 8).sum(axis=1).repeat(8)
    assert np.array_equal(out, sums * 100 + np.arange(64) % 8)


def test_atomics_are_atomic_across_blocks_running_in_parallel(cpu: CpuWorker) -> None:
    blocks, threads, repeat = 64, 128, 4
    total = blocks * threads
    i32 = np.array([0, 0, -(2**31), 2**31 - 1, 0, 0, 0], np.int32)
    u32 = np.array([0, 0, 0, 0xFFFFFFFF, 0, 0], np.uint32)
    u64 = np.array([0, 2**63, 0], np.uint64)
    f32 = np.array([0, -1e30], np.float32)
    f64 = np.array([0, 1e300], np.float64)
    i32, u32, u64, f32, f64 = cpu.run("atomics.cu", "atomics", (blocks,), (threads,),
                                      [i32, u32, u64, f32, f64, Scalar(repeat, "int32")])
    assert i32.tolist() == [total * repeat, -2 * total * repeat, total - 1, -(total - 1), 7, 0,
                            total]
    assert u32.tolist() == [3 * total * repeat, 3 * (total - 1), 0xFFFFFFFF, 0xFFFE0000, 0,
                            total % 100]
    assert u64.tolist() == [(total * repeat) << 33, 5, total * (total - 1) // 2]
    assert f32.tolist() == [total * repeat, total - 1]
    assert f64.tolist() == [total * repeat / 2, -(total - 1)]


def test_dynamic_shared_memory_at_both_scopes_and_fresh_shared_memory(cpu: CpuWorker) -> None:
    x = np.random.default_rng(3).standard_normal(512).astype(np.float32)
    out, untouched = cpu.run("shared.cu", "dynamic_shared", (2,), (256,), [
        x, np.zeros(512, np.float32), np.zeros(512, np.float32)], shared=2 * 256 * 4)[1:]
    rolled = np.concatenate([np.roll(x[:256], -1), np.roll(x[256:], -1)])
    assert np.array_equal(out, x * 2 + rolled)
    assert (untouched.view(np.uint32) == NAN_BITS).all()
    static = cpu.run("shared.cu", "static_shared", (4,), (32,), [np.zeros(4, np.int32)])[0]
    assert static[0] == 1234 and (static[1:] == -1).all()  # later blocks see the fill


def _conversion_inputs() -> np.ndarray:
    """Random values at every scale, halfway cases of both formats, and the edges."""
    rng = np.random.default_rng(4)
    halves = np.arange(0, 0x7C00, 7, dtype=np.uint16).view(np.float16).astype(np.float32)
    half_ties = (halves[:-1] + halves[1:]) / 2
    bf = np.arange(0, 0x7F80, 13, dtype=np.uint16).view(ml_dtypes.bfloat16).astype(np.float64)
    bf_ties = ((bf[:-1] + bf[1:]) / 2).astype(np.float32)
    edges = np.array([0.0, -0.0, 65504, 65519.99, 65520, 1e-8, 2.0**-25, 2.0**-25 * 1.0000001,
                      2.0**-24, 6.1e-5, np.inf, -np.inf, np.nan, 3.4e38, -1.5e-45], np.float32)
    scaled = rng.standard_normal(4000) * 10.0 ** rng.integers(-9, 6, 4000)
    values = np.concatenate([halves, half_ties, bf.astype(np.float32), bf_ties, edges,
                             scaled.astype(np.float32)])
    return np.concatenate([values, -values]).astype(np.float32)


def test_half_and_bfloat16_round_like_numpy_and_ml_dtypes(cpu: CpuWorker) -> None:
    x = _conversion_inputs()
    n = x.size
    out = cpu.run("halfs.cu", "convert", ((n + 255) // 256,), (256,), [
        x, np.zeros(n, np.uint16), np.zeros(n, np.uint16), np.zeros(n, np.float32),
        np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32),
        Scalar(n, "int32")])
    h_bits, b_bits, h_back, b_back, h_sum, b_product = out[1:7]
    with np.errstate(over="ignore"):
        h = x.astype(np.float16)
        b = x.astype(ml_dtypes.bfloat16)
    nan = np.isnan(x)
    assert np.array_equal(h_bits[~nan], h.view(np.uint16)[~nan])
    assert np.array_equal(b_bits[~nan], b.view(np.uint16)[~nan])
    assert (h_bits[nan] == 0x7FFF).all() and (b_bits[nan] == 0x7FFF).all()  # canonical NaN
    assert np.array_equal(h_back, h.astype(np.float32), equal_nan=True)
    assert np.array_equal(b_back, b.astype(np.float32), equal_nan=True)
    with np.errstate(over="ignore", invalid="ignore"):
        assert np.array_equal(h_sum, (h + np.float16(1)).astype(np.float32), equal_nan=True)
        want = (b.astype(np.float32) * np.float32(3)).astype(ml_dtypes.bfloat16)
    assert np.array_equal(b_product, want.astype(np.float32), equal_nan=True)


def test_half_scalar_parameters_and_half2_arithmetic(cpu: CpuWorker) -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal(1001).astype(np.float16)
    y = rng.standard_normal(1001).astype(np.float16)
    out = cpu.run("halfs.cu", "axpy_half", (2,), (256,),
                  [x, y.copy(), Scalar(1.5, "float16"), Scalar(1001, "int32")])[1]
    want = (np.float64(1.5) * x.astype(np.float64) + y.astype(np.float64)).astype(np.float16)
    assert np.array_equal(out, want)


def test_coalesced_groups_match_all_and_sixteen_bit_atomics(cpu: CpuWorker) -> None:
    x = np.random.default_rng(6).integers(0, 100, 64).astype(np.int32)
    out, half_sum, countdown = cpu.run("warp.cu", "odds_and_ends", (1,), (64,), [
        x, np.zeros(128, np.int32), np.zeros(1, np.float16), np.array([10], np.uint32)])[1:]
    for warp in range(2):
        lanes = np.arange(32 * warp, 32 * warp + 32)
        even = lanes[x[lanes] % 2 == 0]
        want = np.full(32, -1)
        want[even - 32 * warp] = x[even[0]] * 1000 + np.arange(even.size) * 10 + 1
        assert np.array_equal(out[lanes], want)
    assert (out[64:] == 1 + 2 + 4).all()
    assert half_sum[0] == np.float16(32.0)  # 64 exact additions of 0.5
    assert countdown[0] == (10 - 64) % 1001  # atomicDec wraps from 0 to the limit


def test_thousands_of_barrier_phases(cpu: CpuWorker) -> None:
    out = cpu.run("many_barriers.cu", "many_barriers", (2,), (256,),
                  [np.zeros(256, np.int32), Scalar(3000, "int32")])[0]
    assert (out == 3000).all()


def test_vector_atomics_add_every_element(cpu: CpuWorker) -> None:
    sum4, sum2 = cpu.run("atomics.cu", "vector_atomics", (16,), (64,),
                         [np.zeros(4, np.float32), np.zeros(2, np.float32)])
    assert sum4.tolist() == [1024.0, 2048.0, 3072.0, 4096.0]
    assert sum2.tolist() == [512.0, -1024.0]
