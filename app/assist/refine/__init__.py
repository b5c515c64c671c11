"""Proposing and refining kernels: attempts, the refine loop's chains and rounds, the verification
pool that checks candidates while the model writes, and the diff shown before applying one.
"""

from app.assist.refine.attempts import NO_CODE, Attempt, load_attempt
from app.assist.refine.diff import unified_diff
from app.assist.refine.loop import (
    Chain,
    Generator,
    Job,
    LoopSettings,
    RefineLoop,
    next_prompt,
    undecided,
)
from app.assist.refine.proposing import Proposal, ProposeSettings, propose_kernels
from app.assist.refine.verifypool import VerifyPool, default_workers, vouch_for

__all__ = [
    "NO_CODE", "Attempt", "Chain", "Generator", "Job", "LoopSettings", "Proposal",
    "ProposeSettings", "RefineLoop", "VerifyPool", "default_workers", "load_attempt",
    "next_prompt", "propose_kernels", "undecided", "unified_diff", "vouch_for"
]
