"""Freezing a sandboxed worker while it waits for its kernel folder to come back.

A worker's sandbox can read one kernel folder, fixed when it starts; switching between kernels
(or between a kernel's saved files and the private copy of its unsaved text) would start a new
worker every time. So a worker whose folder is not the one in use is kept, frozen: every process
of its tree gets SIGSTOP, so nothing a kernel left running there (a thread, a forked child) can
touch the session folder the next worker uses, and SIGCONT wakes it when its folder returns.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

PROC = Path("/proc")


def _parents() -> dict[int, int]:
    """Every process's parent, read from /proc (those that end meanwhile are left out)."""
    found = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name sits in parentheses and may hold spaces: the fields follow its end.
        fields = stat[stat.rfind(")") + 2:].split()
        found[int(entry.name)] = int(fields[1])
    return found


def process_tree(root: int) -> list[int]:
    """`root` and all its descendants, parents first."""
    parents = _parents()
    tree, frontier = [root], [root]
    while frontier:
        children = [pid for pid, parent in parents.items() if parent in frontier]
        tree += children
        frontier = children
    return tree


def state(pid: int) -> str:
    """A process's state letter (T: stopped), '' when it has gone."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return ""
    return stat[stat.rfind(")") + 2:].split()[0]


def _signal_all(pids: list[int], number: int) -> None:
    """Send a signal to each process that still exists."""
    for pid in pids:
        try:
            os.kill(pid, number)
        except ProcessLookupError:
            pass


def freeze(root: int) -> list[int]:
    """Stop `root` and every descendant, again until no running one is left (a process may
    fork while its parent is being stopped); returns the processes stopped."""
    stopped: list[int] = []
    for _ in range(50):
        running = [pid for pid in process_tree(root) if state(pid) not in ("T", "t", "Z", "")]
        if not running:
            break
        _signal_all(running, signal.SIGSTOP)
        stopped += [pid for pid in running if pid not in stopped]
        time.sleep(0.001)  # the stop takes effect when the process is next scheduled
    return stopped


def thaw(root: int) -> None:
    """Continue `root` and every descendant."""
    _signal_all(process_tree(root), signal.SIGCONT)
