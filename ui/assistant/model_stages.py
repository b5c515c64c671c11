"""The stages of an answer, named from the model's progress messages: loading the model (the
first question only), reading the prompt (in tokens), then answering."""

from __future__ import annotations

READY = "ready"
HINTS = {
    "Loading the model": "the first question loads the local model: checking its files, then "
                         "reading its weights (tens of seconds on a CPU); later questions skip "
                         "this",
    "Reading the prompt": "the model reads every token of the prompt (the kernel, the spec, "
                          "the skills) before it writes; on a CPU that takes a while",
}


def model_stage(text: str) -> tuple[str, str]:
    """'reading the prompt: 256 of 1200 tokens' -> ('Reading the prompt', '256 of 1200
    tokens'); 'answering: 40 tokens' -> ('Answering', '40 tokens'); anything else is loading."""
    words = text.strip()
    for prefix, name in (("reading the prompt", "Reading the prompt"),
                         ("answering", "Answering"), ("waiting", "Waiting for the model")):
        if words.startswith(prefix):
            return name, words.partition(": ")[2]
    return "Loading the model", "" if words == READY else words
