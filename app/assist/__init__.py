"""The local model assistant: load a checked model offline, build prompts per action within a
token budget, stream answers with a real Stop, and parse them into code and explanation.

Nothing here imports Qt, and torch/transformers are imported only when a model is loaded, so the
CLI and the GUI start quickly.
"""

from app.assist.answer import Answer, ParsedAnswer, parse_answer
from app.assist.diff import unified_diff
from app.assist.errors import (
    AssistError,
    GenerationFailed,
    ModelMissing,
    ModelRefused,
    PromptTooLong,
)
from app.assist.session import GenerationOptions, LoadReport, Message, ModelSession

__all__ = [
    "Answer",
    "AssistError",
    "GenerationFailed",
    "GenerationOptions",
    "LoadReport",
    "Message",
    "ModelMissing",
    "ModelRefused",
    "ModelSession",
    "ParsedAnswer",
    "PromptTooLong",
    "parse_answer",
    "unified_diff",
]
