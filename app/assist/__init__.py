"""The local model assistant: load a checked model offline, build prompts per action within a
token budget, stream answers with a real Stop, and parse them into code and explanation.

Nothing here imports Qt, and torch/transformers are imported only when a model is loaded, so the
CLI and the GUI start quickly.

Typical use (the GUI runs the session on one long-lived worker thread and forwards on_token):

    session = ModelSession(progress=lambda message, fraction: ...)   # nothing loaded yet
    prompt = build_prompt("fix_compile", PromptContext(source=text, diagnostics=log), session,
                          max_new_tokens=512)       # counts with the model's tokenizer
    prompt.budget.summary(); prompt.budget.warnings()   # show these: what was cut, if anything
    answer = session.generate(prompt.messages, 512, on_token, stop_event)  # loads on first use
    answer.parsed.code, answer.parsed.explanation, answer.stopped
    unified_diff(buffer_text, answer.parsed.code)
"""

from typing import TYPE_CHECKING

from app.base.lazy import exports

if TYPE_CHECKING:
    from app.assist.errors import (
        AssistError,
        GenerationFailed,
        ModelMissing,
        ModelRefused,
        PromptTooLong,
    )
    from app.assist.model.answer import (
        Answer,
        ParsedAnswer,
        parse_answer,
    )
    from app.assist.model.session import (
        GenerationOptions,
        LoadReport,
        Message,
        ModelSession,
    )
    from app.assist.prompting.budget import (
        BudgetReport,
        Cut,
    )
    from app.assist.prompting.prompts import (
        ACTIONS,
        Prompt,
        PromptContext,
        build_prompt,
    )
    from app.assist.refine.diff import (
        unified_diff,
    )

# Names are imported on first use: importing one light module of this package must not load
# the rest (app/base/lazy.py says why).
__getattr__ = exports(__name__, {
    "AssistError": "app.assist.errors",
    "GenerationFailed": "app.assist.errors",
    "ModelMissing": "app.assist.errors",
    "ModelRefused": "app.assist.errors",
    "PromptTooLong": "app.assist.errors",
    "Answer": "app.assist.model.answer",
    "ParsedAnswer": "app.assist.model.answer",
    "parse_answer": "app.assist.model.answer",
    "GenerationOptions": "app.assist.model.session",
    "LoadReport": "app.assist.model.session",
    "Message": "app.assist.model.session",
    "ModelSession": "app.assist.model.session",
    "BudgetReport": "app.assist.prompting.budget",
    "Cut": "app.assist.prompting.budget",
    "ACTIONS": "app.assist.prompting.prompts",
    "Prompt": "app.assist.prompting.prompts",
    "PromptContext": "app.assist.prompting.prompts",
    "build_prompt": "app.assist.prompting.prompts",
    "unified_diff": "app.assist.refine.diff",
})

__all__ = [
    "ACTIONS",
    "Answer",
    "AssistError",
    "BudgetReport",
    "Cut",
    "GenerationFailed",
    "GenerationOptions",
    "LoadReport",
    "Message",
    "ModelMissing",
    "ModelRefused",
    "ModelSession",
    "ParsedAnswer",
    "Prompt",
    "PromptContext",
    "PromptTooLong",
    "build_prompt",
    "parse_answer",
    "unified_diff",
]
