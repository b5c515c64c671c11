"""Output files a sandboxed reference writes are read by the parent within bounds: a hostile
reference replaces NumPy's `save` in its own process and writes .npy files whose headers lie.
The parent must check each header against the spec's output (element count, numbers only)
and the file's size against the header before it reads or allocates anything, and refuse with
reference_error naming the output."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from selftest_spec import write_selftest_spec

ROOT = Path(__file__).resolve().parents[2]
SPARSE_ELEMENTS = 1 << 28  # float64: a 2 GiB file that takes no disk (sparse)
# The parent's peak resident memory must stay far below the 2 GiB the header asks for.
PEAK_LIMIT_KIB = 900 << 10

HOSTILE = '''
import numpy
from numpy.lib import format as npy_format


def _lying_save(file, array, allow_pickle=False):
    """What numpy.save is, in this process, from now on."""
    header = npy_format.header_data_from_array_1_0(numpy.zeros(0, numpy.{dtype}))
    header["shape"] = {shape}
    with open(file, "wb") as handle:
        npy_format.write_array_header_1_0(handle, header)
        {body}


numpy.save = _lying_save


def reference(a, n):
    return {{"c": a}}
'''

# Run in a process of its own, so that its peak memory is the parent's alone. The peak is the
# address space's high-water mark (VmHWM), which starts afresh with the program: ru_maxrss
# would carry over the RSS of the process that started it (pytest's, gigabytes late in a run).
VERIFY = '''
import json, sys
from app.engine.verify.runs import VerifyOptions
from app.engine.verify.verifier import verify_file
verdict = verify_file(sys.argv[1], VerifyOptions(backend="selftest", random_seeds=0))
status = open("/proc/self/status").read().split("VmHWM:")[1].split()
print(json.dumps({"status": str(verdict.status), "message": verdict.message, "peak": status[0]}))
'''


def _verify(tmp_path: Path, dtype: str, shape: str, body: str) -> dict[str, object]:
    """Verify a copy spec (n = 1 only) whose reference writes its output this way."""
    spec = write_selftest_spec(tmp_path / "spec", "copy", seeds=1)
    spec.write_text(spec.read_text().replace("cases = [{ n = 1 }, { n = 1025 }]",
                                             "cases = [{ n = 1 }]"))
    source = HOSTILE.format(dtype=dtype, shape=shape, body=body)
    (tmp_path / "spec" / "ref.py").write_text(textwrap.dedent(source))
    done = subprocess.run([sys.executable, "-c", VERIFY, str(spec)], capture_output=True,
                          text=True, timeout=240, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.usefixtures("sandboxed")
def test_a_sparse_huge_output_is_refused_before_it_is_read(tmp_path: Path) -> None:
    result = _verify(tmp_path, "float64", f"({SPARSE_ELEMENTS},)",
                     f"handle.truncate(handle.tell() + {SPARSE_ELEMENTS * 8})")
    assert result["status"] == "reference_error", result
    assert "'c'" in str(result["message"]) and "header" in str(result["message"]), result
    assert int(str(result["peak"])) < PEAK_LIMIT_KIB, result


@pytest.mark.usefixtures("sandboxed")
def test_a_header_that_lies_about_the_data_after_it_is_refused(tmp_path: Path) -> None:
    # One float32 as the spec wants, then bytes no header accounts for.
    result = _verify(tmp_path, "float32", "(1,)",
                     "handle.write(array.astype(numpy.float32).tobytes() + bytes(4096))")
    assert result["status"] == "reference_error", result
    assert "'c'" in str(result["message"]) and "header says" in str(result["message"]), result


@pytest.mark.usefixtures("sandboxed")
def test_a_header_that_lies_about_the_data_size_is_refused(tmp_path: Path) -> None:
    # The header says four elements; the file holds one.
    result = _verify(tmp_path, "float32", "(4,)", "handle.write(bytes(4))")
    assert result["status"] == "reference_error", result
    assert "'c'" in str(result["message"]), result
