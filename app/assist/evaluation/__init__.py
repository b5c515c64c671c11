"""Evaluation graded by execution: running a suite, pass@k and other figures, the results store
and the HTML report.
"""

from app.assist.evaluation.grade import (
    SWITCHES,
    EvalResult,
    EvalSettings,
    Evaluation,
    arms_for,
    chain_seed,
    estimate_seconds,
)
from app.assist.evaluation.metrics import (
    Lift,
    Summary,
    TaskOutcome,
    bootstrap_interval,
    lift,
    pass_at_k,
    summarize,
)
from app.assist.evaluation.store import load_results, store_path

__all__ = [
    "SWITCHES", "EvalResult", "EvalSettings", "Evaluation", "Lift", "Summary", "TaskOutcome",
    "arms_for", "bootstrap_interval", "chain_seed", "estimate_seconds", "lift", "load_results",
    "pass_at_k", "store_path", "summarize"
]
