"""The private copy a run of unsaved text reads (app/workspace/snapshot.py) stays one folder
for the session: refreshed in place, so a warm worker's sandbox that binds it keeps seeing it."""

from __future__ import annotations

import os
from pathlib import Path

from app.workspace import snapshot


def kernel_folder(root: Path) -> Path:
    """A kernel folder with a header in a sub-folder."""
    folder = root / "kernel"
    (folder / "sub").mkdir(parents=True)
    for name, text in (("k.cu", "one"), ("k.toml", "spec"), ("sub/common.cuh", "h")):
        (folder / name).write_text(text)
    return folder


def test_each_refresh_keeps_the_folder_and_holds_only_the_current_files(tmp_path: Path) -> None:
    folder = kernel_folder(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    folders = snapshot.RunFolders()
    try:
        spec = folder / "k.toml"
        copy = folders.prepare(spec, {folder / "k.cu": "edit 1"}).parent
        held = os.open(copy, os.O_RDONLY | os.O_DIRECTORY)  # as a sandbox's bind mount holds it
        # What a run may leave behind: a new file, a link out, a link in place of a folder.
        (copy / "left.txt").write_text("stale")
        os.symlink(outside, copy / "out")
        (copy / "sub" / "common.cuh").unlink()
        os.symlink(outside, copy / "sub" / "common.cuh")
        (folder / "k.toml").write_text("spec 2")  # saved meanwhile
        for n in range(2, 5):
            again = folders.prepare(spec, {folder / "k.cu": f"edit {n}"}).parent
            assert again == copy and "k.cu" in os.listdir(held)
            assert (copy / "k.cu").read_text() == f"edit {n}"
        assert sorted(str(p.relative_to(copy)) for p in copy.rglob("*")) == [
            "k.cu", "k.toml", "sub", "sub/common.cuh"]
        assert (copy / "k.toml").read_text() == "spec 2"
        assert not (copy / "sub" / "common.cuh").is_symlink()
        assert list(outside.iterdir()) == []  # nothing was written through a link
    finally:
        os.close(held)
        folders.close()
