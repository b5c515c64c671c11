"""Files in a folder a sandboxed process may write too (app.isolation.sandbox.write_shared):
written over in place when it is safe, never through whatever the process left there."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from app.isolation import sandbox


def test_a_plain_file_is_written_over_in_place_and_cut_to_the_new_length(tmp_path: Path) -> None:
    target = tmp_path / "buffer-a.bin"
    sandbox.write_shared(target, b"x" * 100)
    with target.open("rb") as held:  # held open, the old file's inode cannot be reused
        sandbox.write_shared(target, np.arange(4, dtype=np.uint8))
        assert target.read_bytes() == bytes([0, 1, 2, 3])
        # the same file: its pages are reused
        assert target.stat().st_ino == os.fstat(held.fileno()).st_ino


def test_parts_are_written_one_after_another_over_a_longer_file(tmp_path: Path) -> None:
    target = tmp_path / "buffer-a.bin"
    sandbox.write_shared(target, b"y" * 64)
    body = np.arange(3, dtype=np.float32)
    sandbox.write_shared(target, (np.full(4, 7, dtype=np.uint8), body.view(np.uint8), b"end"))
    assert target.read_bytes() == bytes([7] * 4) + body.tobytes() + b"end"


def test_a_link_left_in_the_folder_is_replaced_and_its_target_untouched(tmp_path: Path) -> None:
    victim = tmp_path / "yours.txt"
    victim.write_text("keep me")
    target = tmp_path / "buffer-a.bin"
    target.symlink_to(victim)
    sandbox.write_shared(target, b"data")
    assert victim.read_text() == "keep me"
    assert not target.is_symlink() and target.read_bytes() == b"data"


def test_a_hard_link_left_in_the_folder_is_replaced_not_written_through(tmp_path: Path) -> None:
    other = tmp_path / "other.bin"
    other.write_bytes(b"the other name's bytes")
    target = tmp_path / "buffer-a.bin"
    os.link(other, target)
    sandbox.write_shared(target, b"data")
    assert other.read_bytes() == b"the other name's bytes"
    assert target.read_bytes() == b"data" and target.stat().st_nlink == 1


def test_a_fifo_left_in_the_folder_is_replaced_without_waiting_for_a_reader(
        tmp_path: Path) -> None:
    target = tmp_path / "buffer-a.bin"
    os.mkfifo(target)
    sandbox.write_shared(target, b"data")
    assert target.is_file() and target.read_bytes() == b"data"
