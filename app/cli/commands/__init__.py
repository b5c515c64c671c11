"""One module per `kernel-studio` subcommand, and the table that names them without importing
them: `kernel-studio --help` imports no command module, and a command imports only its own (so
`verify` never loads the assistant, and a command whose libraries are missing here fails alone).

Each module provides add_arguments(parser) and run(args) -> exit code; its one-line help lives
in COMMANDS, in the order `--help` lists them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    """A subcommand: its name on the command line, its module in app.cli.commands, its help."""

    name: str
    module: str
    help: str


COMMANDS = (
    Command("gui", "gui",
            ("open the desktop app (with --screenshot PNG: build, save a picture of the "
             "window, exit)")),
    Command("doctor", "doctor",
            ("show what this machine offers (compilers, GPU, sanitizer, model) and what "
             "follows")),
    Command("compile", "compile",
            "compile a kernel (no GPU needed): diagnostics, resources, PTX, SASS"),
    Command("verify", "verify",
            ("verify a kernel against its reference (exit 0 passed, 1 failed, 2 bad spec, 3 "
             "undecided)")),
    Command("spec-check", "spec_check",
            ("check that a spec catches wrong kernels (no GPU needed; exit 0 strong, 1 weak, 2"
             " bad spec, 3 not checked)")),
    Command("bench", "bench",
            ("time a kernel on the GPU: median and spread, GB/s, GFLOP/s, A/B and sweeps (exit"
             " 0 timed, 1 a kernel failed, 2 bad spec, 3 no GPU)")),
    Command("compare", "compare",
            ("compare variants of one task: resources, verdicts on the same cases and seeds, "
             "and on a GPU timing with ratios to a baseline (exit 0 all passed, 1 one failed, "
             "2 bad input, 3 undecided)")),
    Command("ask", "ask",
            "ask the local model a question, offline; the answer streams to stdout"),
    Command("propose", "propose",
            ("the local model proposes kernels for a spec in K chains of up to R rounds, each "
             "round told why the last failed (exit 0 when one passed, 1 none passed, 3 none "
             "could be verified)")),
    Command("bundle", "bundle",
            ("review bundles: `create SPEC... -o FILE.ksb` packs kernels, specs, references, "
             "headers, results and environment with a SHA-256 manifest; `verify FILE.ksb` "
             "checks it and re-runs it here")),
    Command("review", "review",
            "record a reviewer's decision on a bundle (accept or reject, with a note), signed"),
    Command("audit", "audit",
            ("the audit trail: verify the log's chain and signatures, make a signing key, "
             "export, show")),
    Command("eval", "eval",
            ("evaluate the local model on the task suite, graded by execution: pass@1 and "
             "pass@K, by level and dtype; --skills both / --examples both measure a lift")),
    Command("import", "import_kernelbench",
            ("turn KernelBench problem files, any level, into tasks for the assistant (run "
             "only in the sandbox, to learn shapes and weights; exit 2 with the reason for any "
             "that does not map)")),
    Command("model", "model",
            "prepare, import, check and list local models and skills (offline)"),
    Command("teach", "teach",
            ("teach the local model from verified kernels: build a training set (teach data), "
             "choose your folders it may learn from (teach allow), train a LoRA adapter (teach"
             " train), list a model's adapters (teach adapters)")),
    Command("trust", "trust",
            ("trust specs you have read, so that their kernel and reference may run where no "
             "sandbox can be had (--list, --remove)")),
)


def find(name: str) -> Command | None:
    """The command of that name, or None."""
    return next((command for command in COMMANDS if command.name == name), None)
