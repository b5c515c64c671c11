"""What the model is told: prompts per action within a token budget, skills, examples from
verified kernels, the compact style adapters are taught with, and how a candidate's answer starts.
"""

from app.assist.prompting.budget import MUST_KEEP, BudgetReport, Cut, TokenCounter, trim_text
from app.assist.prompting.candidates import (
    answer_prefix,
    propose_context,
    signature,
    verify_candidate,
    write_candidate,
)
from app.assist.prompting.compact import canonical_kernel
from app.assist.prompting.compiler_tests import compiler_dependent
from app.assist.prompting.examples import (
    RECORD_NAME,
    TEMPLATES_DIR,
    Example,
    choose_examples,
    library,
    record_verified,
    render_examples,
    template_examples,
    verified_dir,
    verified_examples,
)
from app.assist.prompting.prompts import (
    ACTIONS,
    PROMPTS_DIR,
    SECTIONS,
    Prompt,
    PromptContext,
    build_prompt,
    placeholders,
    template,
)
from app.assist.prompting.skills import (
    MAX_DESCRIPTION,
    NAME_PATTERN,
    Skill,
    SkillError,
    choose_skills,
    load_skill,
    load_skills,
    skill_folders,
    split_front_matter,
)

__all__ = [
    "ACTIONS", "MAX_DESCRIPTION", "MUST_KEEP", "NAME_PATTERN", "PROMPTS_DIR", "RECORD_NAME",
    "SECTIONS", "TEMPLATES_DIR", "BudgetReport", "Cut", "Example", "Prompt", "PromptContext",
    "Skill", "SkillError", "TokenCounter", "answer_prefix", "build_prompt", "canonical_kernel",
    "choose_examples", "choose_skills", "compiler_dependent", "library", "load_skill",
    "load_skills", "placeholders", "propose_context", "record_verified", "render_examples",
    "signature", "skill_folders", "split_front_matter", "template", "template_examples",
    "trim_text", "verified_dir", "verified_examples", "verify_candidate", "write_candidate"
]
