"""`kernel-studio gui [FILES...] [--screenshot PNG]`: the desktop app.

The core never imports Qt: the GUI module is imported by name only when this command runs.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Files to open and the screenshot option."""
    parser.add_argument("files", nargs="*", help="kernel sources (.cu) or specs (.toml) to open")
    parser.add_argument("--screenshot", metavar="PNG",
                        help="open the files, build the first, save a screenshot, exit 0")


def no_display() -> str | None:
    """Why no window can be shown here, or None. Qt's own message on a headless machine blames
    a missing library, which sends people the wrong way."""
    platform = os.environ.get("QT_QPA_PLATFORM", "")
    if platform or not sys.platform.startswith("linux"):
        return None
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return None
    return ("no display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set). "
            "Run it in a desktop session, under `xvfb-run`, or take a picture without a "
            "display: QT_QPA_PLATFORM=offscreen kernel-studio gui FILE --screenshot out.png")


def run(args: argparse.Namespace) -> int:
    """Start the GUI and return its exit code."""
    reason = no_display()
    if reason:
        print(f"kernel-studio gui: {reason}", file=sys.stderr)
        return 3
    gui = importlib.import_module("ui.main")
    code: int = gui.run(args.files, args.screenshot)
    return code
