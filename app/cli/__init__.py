"""The command line: the entry point (`kernel-studio`), shared flags, the lazy command table and
its commands, the doctor, and what the assistant's commands share.
"""

__all__ = ["assistant", "doctor", "entry", "flags"]
