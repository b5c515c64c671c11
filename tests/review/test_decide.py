"""What a reviewer reads of a bundle and how a decision is refused (app/review/decide.py): the
bundled sources only, their text escaped, a local copy read only when it is a plain, bounded
file, and no decision without a note."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.review import bundle as bundles
from app.review.decide import (
    MAX_LOCAL_BYTES,
    DecisionError,
    diff_with_local,
    member_text,
    record_decision,
    source_members,
)


def made(tmp_path: Path) -> bundles.Bundle:
    """A bundle in memory, as open_bundle gives it, with a kernel carrying an escape."""
    path = tmp_path / "b.ksb"
    members = {"k/k.cu": b"// \x1b[31mred\n__global__ void k() {}\n", "k/k.toml": b"x = 1\n",
               "k/data.bin": b"\x00\x01"}
    bundles.write_bundle(path, members, ["k/k.toml"], "note", {})
    return bundles.open_bundle(path)


def test_the_sources_are_listed_and_shown_escaped(tmp_path: Path) -> None:
    bundle = made(tmp_path)
    assert source_members(bundle) == ["k/k.cu", "k/k.toml"]  # no manifest, no binary
    text = member_text(bundle, "k/k.cu")
    assert "\x1b" not in text and "\\x1b[31mred" in text and "\n" in text


def test_a_local_copy_must_be_a_plain_bounded_file(tmp_path: Path) -> None:
    bundle = made(tmp_path)
    same = tmp_path / "k.cu"
    same.write_bytes(bundle.members["k/k.cu"])
    assert diff_with_local(bundle, "k/k.cu", same) == ""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.cu"
    big.write_bytes(b"x" * (MAX_LOCAL_BYTES + 1))
    for bad in (fifo, big, tmp_path, tmp_path / "missing.cu"):
        with pytest.raises(DecisionError):
            diff_with_local(bundle, "k/k.cu", bad)


def test_no_decision_without_a_note_or_on_a_damaged_bundle(tmp_path: Path) -> None:
    bundle = made(tmp_path)
    with pytest.raises(DecisionError, match="the note must say why"):
        record_decision(bundle.path, True, "   ")
    damaged = tmp_path / "damaged.ksb"
    damaged.write_bytes(bundle.path.read_bytes()[:-20])
    with pytest.raises(DecisionError, match="damaged.ksb"):
        record_decision(damaged, False, "looked at it")
