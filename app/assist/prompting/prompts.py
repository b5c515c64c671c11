"""Prompts per action: which context each action needs, how it is laid out (templates in
resources/prompts/), which skills go with it, and how it fits the token budget."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path

from app.assist.prompting.budget import MUST_KEEP, BudgetReport, Message, Part, TokenCounter, fit
from app.assist.prompting.skills import Skill, choose_skills, load_skills
from app.base.paths import RESOURCES

PROMPTS_DIR = RESOURCES / "prompts"
_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")
SKILL_PRIORITY = 10


@dataclass(frozen=True)
class PromptContext:
    """Everything an action may put into a prompt; empty fields are left out.

    The GUI fills it from an immutable snapshot of the editor (text, not widgets)."""

    question: str = ""
    description: str = ""
    spec: str = ""
    reference: str = ""
    source: str = ""
    selection: str = ""
    diagnostics: str = ""
    verdict: str = ""
    timing: str = ""
    roofline: str = ""
    resources: str = ""
    sass: str = ""
    examples: str = ""

    def text(self) -> str:
        """All fields joined (to choose skills by what the context is about)."""
        return "\n".join(getattr(self, f.name) for f in fields(self))


@dataclass(frozen=True)
class Section:
    """How one context field is shown: its heading, its code fence, how it may be trimmed."""

    title: str
    fence: str
    keep: str


SECTIONS = {
    "question": Section("Question", "", "whole"),
    "description": Section("What the kernel must do", "", "whole"),
    "spec": Section("Kernel spec (TOML)", "toml", "head"),
    "reference": Section("Reference implementation (Python)", "python", "head"),
    "source": Section("Current kernel source", "cuda", "ends"),
    "selection": Section("Selected code", "cuda", "ends"),
    "diagnostics": Section("Compiler diagnostics", "text", "head"),
    "verdict": Section("Verification verdict", "text", "head"),
    "timing": Section("Timing", "text", "head"),
    "roofline": Section("Roofline position", "text", "head"),
    "resources": Section("Resources", "text", "head"),
    "sass": Section("SASS summary", "text", "head"),
    # Whole examples or none: half a kernel teaches nothing.
    "examples": Section("Verified kernels for similar tasks", "", "whole"),
}


@dataclass(frozen=True)
class Action:
    """One assistant action: the context it needs and each part's priority (higher is cut
    later; MUST_KEEP is never cut)."""

    name: str
    title: str
    needs: tuple[tuple[str, ...], ...]
    priorities: dict[str, int]


ACTIONS = {
    "ask": Action("ask", "Ask", (("question",),),
                  {"question": MUST_KEEP, "selection": 60, "source": 50, "spec": 30}),
    "propose": Action("propose", "Propose a kernel", (("description", "spec"),),
                      {"description": MUST_KEEP, "spec": 90, "reference": 60, "source": 40,
                       "examples": 30}),
    "explain": Action("explain", "Explain", (("selection", "source"),),
                      {"question": MUST_KEEP, "selection": 95, "source": 70, "spec": 40}),
    "fix_compile": Action("fix_compile", "Fix compile errors", (("diagnostics",), ("source",)),
                          {"diagnostics": 95, "source": 90, "description": 80, "spec": 40}),
    "fix_verify": Action("fix_verify", "Fix a failed verification", (("verdict",), ("source",)),
                         {"verdict": 95, "source": 90, "description": 80, "spec": 70,
                          "reference": 60}),
    # Measurements are short and are the point of optimizing: they outlast the source's middle.
    "optimize": Action("optimize", "Optimize", (("source",),),
                       {"timing": 98, "roofline": 97, "resources": 96, "source": 90, "spec": 60,
                        "sass": 40}),
}


@dataclass(frozen=True)
class Prompt:
    """A prompt ready for ModelSession.generate, with its budget report and chosen skills."""

    action: str
    messages: list[Message]
    budget: BudgetReport
    skills: tuple[str, ...]


def template(name: str, folder: Path = PROMPTS_DIR) -> str:
    """The text of resources/prompts/<name>.md."""
    return (folder / f"{name}.md").read_text(encoding="utf-8")


def placeholders(text: str) -> list[str]:
    """The {{names}} a template uses, in order."""
    return _PLACEHOLDER.findall(text)


def render_section(name: str, text: str) -> str:
    """A context field as it appears in the prompt: a heading, then the text (fenced for code)."""
    section = SECTIONS[name]
    body = text.strip("\n")
    if section.fence:
        body = f"```{section.fence}\n{body}\n```"
    return f"## {section.title}\n{body}"


def fill(text: str, values: dict[str, str]) -> str:
    """Replace each {{name}} with its value; a placeholder left empty takes its line with it."""
    filled = _PLACEHOLDER.sub(lambda m: values.get(m.group(1), ""), text)
    return re.sub(r"\n{3,}", "\n\n", filled).strip() + "\n"


def check_needs(action: Action, context: PromptContext) -> None:
    """ValueError naming what the action is missing."""
    for group in action.needs:
        if not any(getattr(context, name).strip() for name in group):
            raise ValueError(f"{action.title} needs " + " or ".join(group))


def _parts(action: Action, context: PromptContext, skills: list[Skill]) -> list[Part]:
    """The cuttable parts: the action's context fields, then the skills."""
    parts = [Part(name, getattr(context, name), priority, SECTIONS[name].keep)
             for name, priority in action.priorities.items() if getattr(context, name).strip()]
    return parts + [Part(f"skill {s.name}", s.prompt_text(), SKILL_PRIORITY, "whole")
                    for s in skills]


def _renderer(action: Action, folder: Path) -> Callable[[list[Part]], list[Message]]:
    """A function from the current parts to chat messages (the budget calls it after each cut)."""
    system, user = template("system", folder), template(action.name, folder)

    def render(parts: list[Part]) -> list[Message]:
        """The system message with the skills, the user message with the context."""
        skills = "\n".join(p.text for p in parts if p.name.startswith("skill ") and p.text)
        values = {p.name: render_section(p.name, p.text) for p in parts
                  if p.text and not p.name.startswith("skill ")}
        guidance = f"# Guidance\n{skills}" if skills else ""
        return [{"role": "system", "content": fill(system, {"skills": guidance})},
                {"role": "user", "content": fill(user, values)}]

    return render


def build_prompt(action: str, context: PromptContext, counter: TokenCounter,
                 max_new_tokens: int = 512, skills: list[Skill] | None = None,
                 skill_names: list[str] | None = None, folder: Path = PROMPTS_DIR) -> Prompt:
    """Messages for `action` that fit the model's context with `max_new_tokens` left over.

    Skills: the given ones, else those named (from the built-in and user folders), else the
    most relevant to the action and context. KeyError names an unknown skill; ValueError says
    what context the action lacks; PromptTooLong when even the essentials do not fit.
    """
    if action not in ACTIONS:
        raise ValueError(f"unknown action {action!r}; choose one of {', '.join(ACTIONS)}")
    chosen = ACTIONS[action]
    check_needs(chosen, context)
    if skills is None:
        library, _problems = load_skills()
        skills = choose_skills(library, action, context.text(), skill_names)
    parts = _parts(chosen, context, skills)
    messages, report = fit(parts, _renderer(chosen, folder), counter, max_new_tokens)
    kept = tuple(p.name.removeprefix("skill ") for p in parts
                 if p.name.startswith("skill ") and p.text)
    return Prompt(action, messages, report, kept)
