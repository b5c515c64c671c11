"""A scripted stand-in for the model in tests of the refine loop and the evaluation: what the
loop does with answers (writing, verifying with the real verifier, feeding back) is under test,
not what a model would say. Each answer is the request's prefix plus a body that a function
chooses from the prompt."""

from __future__ import annotations

import threading
from collections.abc import Callable

from app.assist.model.answer import Answer
from app.assist.model.batch import BatchResult, OnRowToken, Request

Writer = Callable[[Request], str]

# Bodies for the task add_f32 (after the prefix's signature and opening brace).
MISSING_SEMICOLON = ("    int i = blockIdx.x * blockDim.x + threadIdx.x\n"
                     "    if (i < n) c[i] = a[i] + b[i];\n}\n")
SUBTRACTS = ("    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
             "    if (i < n) c[i] = a[i] - b[i];\n}\n")
ADDS = ("    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) c[i] = a[i] + b[i];\n}\n")
SPINS = "    while (true) {\n    }\n}\n"
# For the task relu_f32.
RELU = ("    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) y[i] = fmaxf(x[i], 0.0f);\n}\n")


def right(request: Request) -> str:
    """The right kernel for add_f32 or relu_f32 (told apart by the prefix's signature)."""
    return RELU if "relu_f32(" in request.prefix else ADDS


def action_of(request: Request) -> str:
    """Which prompt this is: propose, fix_compile or fix_verify (from its first words)."""
    text = request.messages[-1]["content"]
    if text.startswith("The kernel below does not compile"):
        return "fix_compile"
    if text.startswith("The kernel below compiles but fails"):
        return "fix_verify"
    return "propose"


def learner(request: Request) -> str:
    """A model that learns from feedback: a compile error first, then a wrong result, then the
    right kernel."""
    return {"propose": MISSING_SEMICOLON, "fix_compile": SUBTRACTS,
            "fix_verify": ADDS}[action_of(request)]


class ScriptedModel:
    """generate_batch from a script; counts tokens as a quarter of the characters."""

    prompt_style = "full"

    def __init__(self, write: Writer, stop_on_call: int | None = None) -> None:
        """`stop_on_call`: on that call, set Stop and answer 'stopped' as the real model does."""
        self.write = write
        self.stop_on_call = stop_on_call
        self.calls: list[list[Request]] = []

    def generate_batch(self, requests: list[Request], stop: threading.Event | None = None,
                       on_token: OnRowToken | None = None) -> BatchResult:
        """One answer per request."""
        self.calls.append(requests)
        if stop is not None and len(self.calls) == self.stop_on_call:
            stop.set()
        if stop is not None and stop.is_set():
            return BatchResult([Answer(r.prefix, "stopped", 10, 0, 0.01) for r in requests], 0.01)
        answers = []
        for request in requests:
            body = self.write(request)
            answers.append(Answer(request.prefix + body, "kernel_end",
                                  self.count_messages(request.messages), len(body) // 4, 0.01))
        return BatchResult(answers, 0.01)

    def count_tokens(self, text: str) -> int:
        """About four characters a token."""
        return len(text) // 4 + 1

    def count_messages(self, messages: list[dict[str, str]]) -> int:
        """The messages' text."""
        return sum(self.count_tokens(m["content"]) for m in messages)

    def context_window(self) -> int:
        """SmolLM2's window."""
        return 8192
