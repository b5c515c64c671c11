"""An Engine keeps a spec's reference loaded across verifications (app.engine.verify.warm), and
loads it afresh whenever it could have seen something else: an edited reference, a changed file
in the spec's folder, an error. Real worker and reference processes (selftest backend)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from selftest_spec import write_selftest_spec

from app.engine.verify.reference import RETIRE_BUSY_S, Reference
from app.engine.verify.results import Verdict
from app.engine.verify.runs import Engine, VerifyOptions
from app.engine.verify.verifier import verify_file
from app.engine.verify.warm import folder_stamp


def verify(path: Path, engine: Engine) -> Verdict:
    """verify_file on the selftest backend, one seed and no fresh ones (the same runs each
    time, so remembered answers can serve them)."""
    return verify_file(path, VerifyOptions(backend="selftest", seeds=1, random_seeds=0), engine)


def warm_one(engine: Engine) -> Reference:
    """The only reference the engine keeps warm."""
    loaded = engine.references.loaded()
    assert len(loaded) == 1
    return loaded[0]


@pytest.fixture
def engine():  # type: ignore[no-untyped-def]
    """A fresh engine per test: its pool starts empty."""
    with Engine() as shared:
        yield shared


def test_the_same_reference_is_loaded_once(tmp_path: Path, engine: Engine) -> None:
    path = write_selftest_spec(tmp_path)
    assert verify(path, engine).status == "passed"
    first = warm_one(engine)
    assert verify(path, engine).status == "passed"
    assert warm_one(engine) is first and first.process.poll() is None
    assert engine.references.starts == 1


def test_an_edited_reference_is_loaded_again_and_its_new_outputs_count(tmp_path: Path,
                                                                       engine: Engine) -> None:
    path = write_selftest_spec(tmp_path)
    assert verify(path, engine).status == "passed"
    first = warm_one(engine)
    (tmp_path / "ref.py").write_text("def reference(a, n):\n    return {'c': a + 1}\n")
    assert verify(path, engine).status == "mismatch"
    assert engine.references.starts == 2 and first.process.poll() is not None


def test_a_changed_file_next_to_the_reference_loads_it_again(tmp_path: Path,
                                                             engine: Engine) -> None:
    # The reference reads a number at load time: a warm process would keep the old one.
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "offset.txt").write_text("0")
    reference = ("return {'c': a + OFFSET}\nimport pathlib\nOFFSET = float(("
                 "pathlib.Path(__file__).parent / 'sub' / 'offset.txt').read_text())")
    path = write_selftest_spec(tmp_path, reference=reference)
    assert verify(path, engine).status == "passed"
    (tmp_path / "sub" / "offset.txt").write_text("1")
    assert verify(path, engine).status == "mismatch"
    assert engine.references.starts == 2


def test_a_reference_that_failed_is_never_used_again(tmp_path: Path, engine: Engine) -> None:
    path = write_selftest_spec(tmp_path, reference="return {'c': 1 / 0}")
    assert verify(path, engine).status == "reference_error"
    assert engine.references.loaded() == []
    assert verify(path, engine).status == "reference_error"
    assert engine.references.starts == 2


def test_closing_the_engine_stops_the_warm_reference(tmp_path: Path) -> None:
    path = write_selftest_spec(tmp_path)
    with Engine() as engine:
        assert verify(path, engine).status == "passed"
        reference = warm_one(engine)
        assert reference.process.poll() is None
    assert reference.process.poll() is not None and not reference.scratch.exists()


def test_a_folder_with_too_many_files_is_not_stamped(tmp_path: Path) -> None:
    for index in range(5):
        (tmp_path / f"f{index}").write_text("")
    assert folder_stamp(tmp_path, limit=4) is None
    assert folder_stamp(tmp_path, limit=5) is not None


def test_a_reference_failing_on_a_later_case_is_reported_for_that_case(
        tmp_path: Path, engine: Engine) -> None:
    # Case n=1025 is staged while case n=1 runs: its error must still name it, and only it.
    path = write_selftest_spec(tmp_path, reference="return {'c': a if n == 1 else 1 / 0}")
    verdict = verify(path, engine)
    assert verdict.status == "reference_error"
    assert "'n': 1025" in verdict.message and "seed 0" in verdict.message
    assert "ZeroDivisionError" in verdict.message


def test_a_run_that_stops_the_verification_leaves_the_reference_usable(
        tmp_path: Path, engine: Engine) -> None:
    path = write_selftest_spec(tmp_path, entry="hang")
    options = VerifyOptions(backend="selftest", seeds=1, timeout=0.5)
    verdict = verify_file(path, options, engine)
    assert verdict.status == "timeout" and len(verdict.runs) == 1
    reference = warm_one(engine)  # the staged second run ended in time: kept, not killed
    assert reference.usable
    assert verify_file(path, options, engine).status == "timeout"
    assert warm_one(engine) is reference and engine.references.starts == 1


# Answers right for its first two calls only: a verification that calls it again mismatches.
COUNTING = "CALLS.append(n)\n    return {'c': a + (len(CALLS) > 2)}\nCALLS = []"


def test_a_verification_repeated_reuses_the_reference_answers(tmp_path: Path,
                                                              engine: Engine) -> None:
    path = write_selftest_spec(tmp_path, reference=COUNTING)
    assert verify(path, engine).status == "passed"  # two runs: two calls
    assert verify(path, engine).status == "passed"  # the same runs: no call at all
    assert engine.references.memo_size() > 0
    engine.references.forget()
    assert verify(path, engine).status == "mismatch"  # called again: its third answer is off


def test_other_seeds_are_not_taken_from_memory(tmp_path: Path, engine: Engine) -> None:
    path = write_selftest_spec(tmp_path, reference=COUNTING)
    assert verify(path, engine).status == "passed"
    other = verify_file(path, VerifyOptions(backend="selftest", only_seeds=(7,)), engine)
    assert other.status == "mismatch"


def test_remembered_answers_stay_within_their_budget(tmp_path: Path, engine: Engine) -> None:
    engine.references.memo_bytes = 6000  # one run of n=1025 (4100 bytes in, 4100 out) is more
    path = write_selftest_spec(tmp_path)
    assert verify(path, engine).status == "passed"
    assert 0 < engine.references.memo_size() <= 6000


def test_a_dangling_link_does_not_hide_the_files_beside_it(tmp_path: Path) -> None:
    # An editor's lock file is a link to nowhere: every other file must still be stamped.
    (tmp_path / ".#k.cu").symlink_to("user@host.1234")
    for index in range(20):
        (tmp_path / f"f{index}").write_text("x")
    stamp = folder_stamp(tmp_path)
    assert stamp is not None
    stamped = {Path(str(entry[0])).name for entry in stamp}  # type: ignore[index]
    assert stamped == {".#k.cu", *(f"f{index}" for index in range(20))}


def test_contents_replaced_under_an_old_modification_time_change_the_stamp(
        tmp_path: Path) -> None:
    data = tmp_path / "offset.txt"
    data.write_text("0")
    status = data.stat()
    before = folder_stamp(tmp_path)
    time.sleep(0.05)  # past the kernel's coarse clock tick
    data.write_text("1")
    os.utime(data, ns=(status.st_atime_ns, status.st_mtime_ns))  # as cp -p or rsync -t do
    assert data.stat().st_mtime_ns == status.st_mtime_ns
    assert folder_stamp(tmp_path) != before


def test_a_changed_file_is_seen_beside_a_dangling_link(tmp_path: Path, engine: Engine) -> None:
    (tmp_path / "offset.txt").write_text("0")
    (tmp_path / ".#ref.py").symlink_to("user@host.1234")
    reference = ("return {'c': a + OFFSET}\nimport pathlib\nOFFSET = float(("
                 "pathlib.Path(__file__).parent / 'offset.txt').read_text())")
    path = write_selftest_spec(tmp_path, reference=reference)
    assert verify(path, engine).status == "passed"
    (tmp_path / "offset.txt").write_text("1")
    assert verify(path, engine).status == "mismatch"


def test_a_reference_that_cannot_be_read_here_is_loaded_afresh(
        tmp_path: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    # Its bytes cannot be hashed (a permission, a race): no error escapes, nothing is pooled.
    path = write_selftest_spec(tmp_path)
    reference = (tmp_path / "ref.py").resolve()
    original = Path.read_bytes

    def refuse(self: Path) -> bytes:
        if self == reference:
            raise PermissionError(13, "Permission denied", str(self))
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", refuse)
    assert verify(path, engine).status == "passed"
    assert engine.references.loaded() == []


def test_a_reference_is_not_shared_with_a_spec_of_another_folder(tmp_path: Path,
                                                                 engine: Engine) -> None:
    # The same file, seen from the folder above (a wider sandbox view): loaded afresh.
    inner = tmp_path / "inner"
    path = write_selftest_spec(inner)
    assert verify(path, engine).status == "passed"
    outer = tmp_path / "outer.toml"
    outer.write_text(path.read_text().replace('"k.cu"', '"inner/k.cu"')
                     .replace('"ref.py"', '"inner/ref.py"'))
    assert verify(outer, engine).status == "passed"
    assert engine.references.starts == 2


def test_a_warm_reference_keeps_no_inputs_or_outputs_in_its_scratch(tmp_path: Path,
                                                                     engine: Engine) -> None:
    # The scratch folder is in memory (/dev/shm): a case's files must not stay there between
    # verifications (they are gigabytes for a large case).
    path = write_selftest_spec(tmp_path)
    assert verify(path, engine).status == "passed"
    assert list(warm_one(engine).scratch.iterdir()) == []


def test_an_edited_kernel_keeps_the_warm_reference_and_its_answers(tmp_path: Path,
                                                                  engine: Engine) -> None:
    """The edit-a-kernel, verify-again loop: the kernel's source is not part of the key."""
    path = write_selftest_spec(tmp_path)
    assert verify(path, engine).status == "passed"
    first = warm_one(engine)
    (tmp_path / "k.cu").write_text("// edited\n__global__ void k() { /* still a copy */ }\n")
    assert verify(path, engine).status == "passed"
    assert warm_one(engine) is first and engine.references.starts == 1


def test_files_rewritten_with_the_same_contents_keep_the_warm_reference(
        tmp_path: Path, engine: Engine) -> None:
    """The GUI refreshes its private copy of the folder before every run: new inodes and
    times, same contents."""
    path = write_selftest_spec(tmp_path)
    assert verify(path, engine).status == "passed"
    first = warm_one(engine)
    for name in ("ref.py", "k.toml"):
        text = (tmp_path / name).read_bytes()
        (tmp_path / name).unlink()
        time.sleep(0.01)
        (tmp_path / name).write_bytes(text)
    assert verify(path, engine).status == "passed"
    assert warm_one(engine) is first and engine.references.starts == 1


def test_a_reference_that_used_most_of_its_cpu_limit_is_retired(tmp_path: Path,
                                                                engine: Engine) -> None:
    path = write_selftest_spec(tmp_path)
    assert verify(path, engine).status == "passed"
    first = warm_one(engine)
    first.busy_s = RETIRE_BUSY_S
    assert verify(path, engine).status == "passed"
    assert warm_one(engine) is not first and engine.references.starts == 2


def test_an_engine_without_warm_references_keeps_none(tmp_path: Path) -> None:
    """The assistant's verification pool: candidates come in fresh folders, so none is kept."""
    path = write_selftest_spec(tmp_path)
    with Engine(warm_references=0) as engine:
        assert verify(path, engine).status == "passed"
        assert verify(path, engine).status == "passed"
        assert engine.references.loaded() == [] and engine.references.starts == 2
