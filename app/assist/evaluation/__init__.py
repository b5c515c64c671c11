"""Evaluation graded by execution: running a suite, pass@k and other figures, the results store
and the HTML report.
"""

from typing import TYPE_CHECKING

from app.base.lazy import exports

if TYPE_CHECKING:
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
    from app.assist.evaluation.store import (
        load_results,
        store_path,
    )

# Names are imported on first use: importing one light module of this package must not load
# the rest (app/base/lazy.py says why).
__getattr__ = exports(__name__, {
    "SWITCHES": "app.assist.evaluation.grade",
    "EvalResult": "app.assist.evaluation.grade",
    "EvalSettings": "app.assist.evaluation.grade",
    "Evaluation": "app.assist.evaluation.grade",
    "arms_for": "app.assist.evaluation.grade",
    "chain_seed": "app.assist.evaluation.grade",
    "estimate_seconds": "app.assist.evaluation.grade",
    "Lift": "app.assist.evaluation.metrics",
    "Summary": "app.assist.evaluation.metrics",
    "TaskOutcome": "app.assist.evaluation.metrics",
    "bootstrap_interval": "app.assist.evaluation.metrics",
    "lift": "app.assist.evaluation.metrics",
    "pass_at_k": "app.assist.evaluation.metrics",
    "summarize": "app.assist.evaluation.metrics",
    "load_results": "app.assist.evaluation.store",
    "store_path": "app.assist.evaluation.store",
})

__all__ = [
    "SWITCHES", "EvalResult", "EvalSettings", "Evaluation", "Lift", "Summary", "TaskOutcome",
    "arms_for", "bootstrap_interval", "chain_seed", "estimate_seconds", "lift", "load_results",
    "pass_at_k", "store_path", "summarize"
]
