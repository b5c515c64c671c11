"""The compile cache: hits are verified, corrupt entries are rebuilt, and every input that
changes the output (source, options, arch, local headers) changes the key."""

from __future__ import annotations

from app.compile import cache, compile_file
from app.compile.api import plan

KERNEL = 'extern "C" __global__ void k(float* a) { a[threadIdx.x] += 1.0f; }\n'


def entry_for(path, **kwargs):
    """The cache entry file a compile of `path` uses."""
    checked = plan(path.read_text(), path.name, path.parent, kwargs.get("arch", "sm_90"),
                   kwargs.get("options", ()), "nvrtc", 30.0)
    return cache.entry_path(checked.key)


def test_second_compile_is_a_verified_hit_with_the_same_cubin(write) -> None:
    path = write("k.cu", KERNEL)
    first = compile_file(path, arch="sm_90")
    second = compile_file(path, arch="sm_90")
    assert first.ok and not first.cached
    assert second.cached and second.cubin == first.cubin and second.kernels == first.kernels
    assert second.seconds < first.seconds


def corrupt_in_the_middle(entry) -> None:
    """Flip one byte in the middle of the entry, as a failing disk would."""
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 0x40
    entry.write_bytes(bytes(data))


def test_corrupted_entry_is_rebuilt_not_trusted(write) -> None:
    path = write("k.cu", KERNEL)
    good = compile_file(path, arch="sm_90")
    entry = entry_for(path)
    for damage in (corrupt_in_the_middle, lambda e: e.write_bytes(e.read_bytes()[:100]),
                   lambda e: e.write_bytes(b"")):
        damage(entry)
        rebuilt = compile_file(path, arch="sm_90")
        assert rebuilt.ok and not rebuilt.cached
        assert rebuilt.cubin == good.cubin
        assert compile_file(path, arch="sm_90").cached  # the rewritten entry verifies again


def test_an_entry_under_another_key_is_not_trusted(write) -> None:
    path = write("k.cu", KERNEL)
    other = write("other.cu", KERNEL.replace("1.0f", "2.0f"))
    compile_file(path, arch="sm_90")
    compile_file(other, arch="sm_90")
    entry_for(path).write_bytes(entry_for(other).read_bytes())  # a valid entry, wrong key
    assert not compile_file(path, arch="sm_90").cached


def test_inputs_that_change_the_output_change_the_key(write) -> None:
    path = write("k.cu", '#include "tune.h"\n' + KERNEL)
    header = write("tune.h", "#define UNUSED 1\n")
    base = entry_for(path)
    assert entry_for(path, options=["-O1"]) != base
    assert entry_for(path, arch="sm_80") != base
    header.write_text("#define UNUSED 2\n")
    assert entry_for(path) != base


def test_compile_errors_are_cached_but_refusals_are_not(write) -> None:
    broken = write("broken.cu", 'extern "C" __global__ void k(float* a) { a[0] = zz; }\n')
    assert not compile_file(broken).cached
    assert compile_file(broken).cached
    refused = compile_file(broken, options=["-ccbin=gcc"])
    assert refused.stage == "options" and not refused.cached
