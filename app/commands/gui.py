"""`kernel-studio gui [FILES...] [--screenshot PNG]`: the desktop app.

The core never imports Qt: the GUI module is imported by name only when this command runs.
"""

from __future__ import annotations

import argparse
import importlib

HELP = "open the desktop app (with --screenshot PNG: build, save a picture of the window, exit)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Files to open and the screenshot option."""
    parser.add_argument("files", nargs="*", help="kernel sources (.cu) or specs (.toml) to open")
    parser.add_argument("--screenshot", metavar="PNG",
                        help="open the files, build the first, save a screenshot, exit 0")


def run(args: argparse.Namespace) -> int:
    """Start the GUI and return its exit code."""
    gui = importlib.import_module("ui.main")
    code: int = gui.run(args.files, args.screenshot)
    return code
