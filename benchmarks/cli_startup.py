"""How long the command line takes to print its help: `kernel-studio --help` and each command's
`--help`, the median of several runs in fresh processes (the start-up a user waits for).

    python benchmarks/cli_startup.py [--repeat 7] [COMMAND ...]

Run it on an idle machine for figures worth quoting; `python -X importtime -m app verify --help`
says where the time goes.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

DEFAULT_COMMANDS = ["", "verify", "compile", "bench", "spec-check", "propose"]


def seconds(command: str) -> float:
    """Wall time of one `python -m app [command] --help`."""
    words = [command, "--help"] if command else ["--help"]
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "app", *words], check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    """Print the median and range per command."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("commands", nargs="*", default=DEFAULT_COMMANDS)
    args = parser.parse_args()
    for command in args.commands:
        times = sorted(seconds(command) for _ in range(args.repeat))
        label = f"kernel-studio {command} --help".replace("  ", " ")
        print(f"{label:40s} median {statistics.median(times):.3f} s "
              f"({times[0]:.3f}-{times[-1]:.3f})", flush=True)


if __name__ == "__main__":
    main()
