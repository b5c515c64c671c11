"""What the assistant is graded on: the task suite (dev and held-out splits) and KernelBench
problems read as tasks.
"""

from app.assist.tasks.kernelbench import Refused
from app.assist.tasks.kernelbench_folder import (
    describe,
    import_problem,
    read_problem,
    reference_text,
    spec_text,
)
from app.assist.tasks.suite import (
    TASKS_DIR,
    HeldOut,
    Suite,
    Task,
    TaskError,
    description_in,
    description_of,
    load_heldout,
    load_suite,
    load_task,
)

__all__ = [
    "TASKS_DIR", "HeldOut", "Refused", "Suite", "Task", "TaskError", "describe",
    "description_in", "description_of", "import_problem", "load_heldout",
    "load_suite", "load_task", "read_problem",
    "reference_text", "spec_text"
]
