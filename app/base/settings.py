"""Every default and environment variable of Kernel Studio, declared once with its meaning.

A setting that an environment variable can override is an `EnvSetting`; read it with `.get()`
(None when unset or empty). Plain defaults are constants. `describe()` lists them all for the
doctor and the README.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum


class BackendChoice(StrEnum):
    """Where kernels run, as a user chooses it (every command's --backend, the GUI's menu and
    Settings): auto (the GPU when there is one, else CPU emulation), pycuda or cpu."""

    AUTO = "auto"
    PYCUDA = "pycuda"
    CPU = "cpu"


BACKEND_CHOICES = tuple(choice.value for choice in BackendChoice)


class Compiler(StrEnum):
    """[kernel].compiler and --compiler: NVRTC (in-process, the default) or nvcc (files with
    host code too)."""

    NVRTC = "nvrtc"
    NVCC = "nvcc"

# The time limit of one kernel launch in verify and bench, in seconds (CLI --timeout, GUI), and
# the range a user may set it in: below 0.1 s not even a launch can start (the kernel would be
# blamed for a typo), and a limit beyond a day is a typo that overflows the clocks it is added
# to.
TIME_LIMIT_S = 10.0
TIME_LIMIT_MIN_S = 0.1
TIME_LIMIT_MAX_S = 24 * 3600.0
# The host C++ compiler's time limit for the CPU backend's builds.
HOST_COMPILE_TIME_LIMIT_S = 150.0
# A spec's Python reference: loading it, and each call, in its own (sandboxed) process.
REFERENCE_TIME_LIMIT_S = 120.0


@dataclass(frozen=True)
class EnvSetting:
    """A value the user (or a test) may set through the environment."""

    variable: str
    meaning: str

    def get(self) -> str | None:
        """The variable's value, or None when unset or empty."""
        return os.environ.get(self.variable) or None


CACHE_DIR = EnvSetting("KERNEL_STUDIO_CACHE", "folder for compiled kernels and device "
                       "measurements (default: the user's cache folder)")
DATA_DIR = EnvSetting("KERNEL_STUDIO_DATA", "folder for recovery files, settings, trust and "
                      "imported skills (default: the user's data folder)")
MODELS_DIR = EnvSetting("KERNEL_STUDIO_MODELS", "folder of local models (default: models/ in a "
                        "checkout, else the data folder's models/)")
CXX = EnvSetting("KERNEL_STUDIO_CXX", "host C++ compiler of the CPU backend (default: the first "
                 "of g++, c++, clang++ on the PATH)")
CPU_THREADS = EnvSetting("KERNEL_STUDIO_CPU_THREADS", "threads of a CPU-backend launch (default: "
                         "the cores this process may use)")
CPU_UCONTEXT = EnvSetting("KERNEL_STUDIO_CPU_UCONTEXT", "1 selects the portable ucontext switch "
                          "of the CPU backend (used on every CPU but x86-64)")
SANDBOX = EnvSetting("KERNEL_STUDIO_SANDBOX", "'none' turns the sandbox off (then only content "
                     "you trusted with `kernel-studio trust` runs); default: bubblewrap when it "
                     "works here")
REFERENCE_TIMEOUT = EnvSetting("KERNEL_STUDIO_REFERENCE_TIMEOUT", "seconds a spec's reference may "
                               "take to load and for each case (default: "
                               f"{REFERENCE_TIME_LIMIT_S:g})")
BWRAP = EnvSetting("KERNEL_STUDIO_BWRAP", "path of the bubblewrap program (default: bwrap on the "
                   "PATH)")
STARTUP_PROBE = EnvSetting("KERNEL_STUDIO_STARTUP_PROBE", "set by benchmarks/gui_startup.py: the "
                           "GUI prints when its window is exposed, then quits")
TOKENIZER_DIR = EnvSetting("KERNEL_STUDIO_TOKENIZER_DIR", "tests on a GPU machine: a tokenizer "
                           "folder where the model folder does not travel")
AUDIT_LOG = EnvSetting("KERNEL_STUDIO_AUDIT_LOG", "the audit log that verify, bench, compare, "
                       "bundle and review append to (default: the data folder's "
                       "audit/audit.jsonl); 'off' records nothing")
AUDIT_KEY = EnvSetting("KERNEL_STUDIO_AUDIT_KEY", "folder of the Ed25519 key that signs audit "
                       "entries (default: the data folder's audit/)")
DECODE = EnvSetting("KERNEL_STUDIO_DECODE", "how the assistant decodes: graph (static KV cache "
                    "and CUDA graphs), static (static cache, eager steps), generate "
                    "(transformers' generate) or auto (default: graph on a GPU, generate on "
                    "the CPU)")
NF4_KERNEL = EnvSetting("KERNEL_STUDIO_NF4_KERNEL", "on: a GPU's NF4 layers decode through the "
                        "nf4_gemv template's kernel instead of bitsandbytes' (default off: not "
                        "yet measured on a GPU)")

ALL = (CACHE_DIR, DATA_DIR, MODELS_DIR, CXX, CPU_THREADS, CPU_UCONTEXT, SANDBOX, BWRAP,
       REFERENCE_TIMEOUT, STARTUP_PROBE, TOKENIZER_DIR, AUDIT_LOG, AUDIT_KEY, DECODE, NF4_KERNEL)


def describe() -> list[str]:
    """One line per environment variable: its name, its value here, its meaning."""
    return [f"{s.variable}={s.get() or ''}  ({s.meaning})" for s in ALL]
