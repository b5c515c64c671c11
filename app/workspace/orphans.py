"""Temporary folders that a crashed GUI session left behind, found and removed at the next start.

The GUI's private folders (runs of unsaved text, spec-checks of an unsaved form, compares of
unsaved edits) carry the process id of the session that made them in their names:
`kernel-studio-<what>-<pid>-<random>`. A clean exit removes its own; after a crash nothing
does, so the next session removes those whose process is gone and that this user owns.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

KINDS = ("run", "speccheck", "compare")
_NAME = re.compile(rf"kernel-studio-(?:{'|'.join(KINDS)})-(\d+)-\w+")


def session_prefix(kind: str) -> str:
    """The mkdtemp prefix of this session's private folder of one kind."""
    assert kind in KINDS, kind
    return f"kernel-studio-{kind}-{os.getpid()}-"


def _alive(pid: int) -> bool:
    """Whether a process of this id exists (one of another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def orphans(folder: Path | None = None) -> list[Path]:
    """This user's session folders under `folder` (the temporary folder) whose session ended
    without removing them; never a link, never another user's folder."""
    base = Path(folder or tempfile.gettempdir())
    found = []
    for entry in os.scandir(base):
        match = _NAME.fullmatch(entry.name)
        if match is None or not entry.is_dir(follow_symlinks=False):
            continue
        if entry.stat(follow_symlinks=False).st_uid != os.getuid():
            continue
        if int(match.group(1)) != os.getpid() and not _alive(int(match.group(1))):
            found.append(Path(entry.path))
    return sorted(found)


def remove_orphans(folder: Path | None = None) -> list[Path]:
    """Remove what orphans() finds; returns what was removed (a folder that cannot be removed
    is left as it is: it holds only copies)."""
    removed = []
    for path in orphans(folder):
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            removed.append(path)
    return removed
