"""The stages of a build, verification or timing job, named from the job's progress messages
("starting the worker", "case 2/5, seed 1/3", "compiling"), with what a slow one may be doing.
"""

from __future__ import annotations

import re

from ui.stages import as_stage

_CASE = re.compile(r"^case (\d+)/(\d+), seed (\d+)/(\d+)$")
_TIMING = re.compile(r"^(?:.*: )?timing case (\d+)/(\d+)$")
NAMES = {
    "starting the job process": "Starting the job process",
    "starting the worker": "Starting the worker",
    "compiling": "Compiling",
    "done": "Finishing",
}
HINTS = {
    "Starting the job process": "loading the compiler and the engine (a few seconds once per "
                                "session)",
    "Running the cases": "the first case loads the kernel: on the CPU emulator that compiles "
                         "it with the host compiler, and the first run on a machine also "
                         "builds the emulator's runtime (10-15 s)",
    "Compiling": "NVRTC or nvcc is compiling the kernel",
}


def job_stage(text: str) -> tuple[str, str]:
    """The stage a job's progress message belongs to, and its detail: 'case 2/5, seed 1/3' ->
    ('Running the cases', 'case 2 of 5, seed 1 of 3')."""
    words = text.strip()
    if match := _CASE.match(words):
        case, cases, seed, seeds = match.groups()
        return "Running the cases", f"case {case} of {cases}, seed {seed} of {seeds}"
    if match := _TIMING.match(words):
        return "Timing", f"case {match.group(1)} of {match.group(2)}"
    if words in NAMES:
        return NAMES[words], ""
    return as_stage(words)
