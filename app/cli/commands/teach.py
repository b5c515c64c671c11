"""`kernel-studio teach data|allow|disallow|sources|stats|train|rl|judge|adapters`. `data` builds a
training set for the local model only from kernels that pass verification on specs that pass spec-
check (the templates, the specs in folders the user allowed with `teach allow DIR`, the proposals
the assistant kept, then a generator of level-1 and level-2 kernels), with held-out tasks and near
copies of them refused. Exit 0 written, 2 bad usage, 3 nothing could be written, 130 cancelled
(what was written is kept, whole). `allow`/`disallow` add or remove a folder of the user's as a
source; `sources` lists them. `train` makes a LoRA adapter from such a set (float32 on the CPU,
QLoRA over the NF4 model on a GPU); Ctrl+C keeps a checkpoint that --resume continues. `rl` goes on
from a taught adapter by GRPO with the verifier's reward (teach_rl.py). `judge` keeps an adapter
only when held-out evals before and after it show a lift. `adapters` lists the adapters of a model,
each checked against its manifest."""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Iterator
from pathlib import Path

from app.assist.errors import AssistError
from app.assist.model import quant
from app.assist.model.adapters import list_adapters
from app.assist.model.convert import resolve_model
from app.assist.model.session import cpu_threads
from app.assist.tasks.suite import TaskError, load_suite
from app.assist.teach import stats
from app.assist.teach.candidate import Candidate
from app.assist.teach.data import (
    DATA_NAME,
    GENERATED,
    DataError,
    Skipped,
    Summary,
    build,
    template_candidates,
)
from app.assist.teach.generate import FAMILIES, candidates
from app.assist.teach.guard import Guard
from app.assist.teach.judge import (
    apply,
    check_runs,
    discard_folder,
    judge,
    read_result,
    started_from,
)
from app.assist.teach.recipe import train_adapter
from app.assist.teach.sources import (
    SourcesError,
    allow,
    allowed_candidates,
    allowed_folders,
    count_specs,
    disallow,
    proposal_candidates,
    sources_path,
)
from app.assist.teach.train import Settings
from app.base.paths import data_dir
from app.cli import flags
from app.cli.assistant import broken_suite, positive
from app.cli.commands import teach_rl

DEFAULT_COUNT = 200
# Drops named on the terminal (summary.json names them all); the generator's are counted only.
SHOWN_DROPS = 12
Source = Iterator[Candidate | Skipped]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `data` subcommand and its options."""
    sub = parser.add_subparsers(dest="teach_command", metavar="STEP", required=True)
    data = sub.add_parser("data", help="build a training set of verified examples (JSONL)")
    data.add_argument("--out", type=Path, default=None,
                      help="folder for train.jsonl and summary.json (default: the data folder's "
                           "teach/data); an existing train.jsonl is added to")
    data.add_argument("--count", type=int, default=DEFAULT_COUNT,
                      help=f"examples to write: templates first, then your allowed folders and "
                           f"kept proposals, then generated ones (default {DEFAULT_COUNT})")
    data.add_argument("--seed", type=int, default=0, help="the generator's seed (default 0)")
    data.add_argument("--family", action="append", choices=sorted(FAMILIES), default=None,
                      help="generate only these families (repeat the option; default all)")
    data.add_argument("--op", action="append", default=None, metavar="TAG",
                      help="generate only shaped and strided maps of this operation (repeat "
                           "the option), e.g. gelu, silu, relu; an unknown tag lists them all")
    data.add_argument("--no-templates", action="store_true", help="leave the templates out")
    data.add_argument("--no-allowed", action="store_true",
                      help="leave out the folders allowed with teach allow (used by default "
                           "once one is allowed)")
    data.add_argument("--no-proposals", action="store_true",
                      help="leave out the proposals the assistant kept once they passed")
    data.add_argument("--no-generated", action="store_true", help="leave the generator out")
    flags.add_backend(data, "where kernels are verified (auto: the best there is)")
    flags.add_json(data, "the summary")
    _source_arguments(sub)
    _stats_arguments(sub.add_parser("stats", help="count a training set's examples by register, "
                                    "shape, dtype, launch and family"))
    _train_arguments(sub.add_parser("train", help="train a LoRA adapter on a training set"))
    teach_rl.add_arguments(sub.add_parser("rl", help="reinforce a taught adapter by GRPO, "
                                          "rewarded by the verifier"))
    listing = sub.add_parser("adapters", help="list a model's LoRA adapters, each checked")
    listing.add_argument("--model", metavar="PATH",
                         help="a model folder or name (default: the prepared default model)")
    flags.add_json(listing, "the list")
    verdict = sub.add_parser("judge", help="keep an adapter only if held-out evals before and "
                             "after it show a lift of pass@1 (interval above zero)")
    verdict.add_argument("--before", type=Path, required=True,
                         help="eval --json of the base model (e.g. --split heldout)")
    verdict.add_argument("--after", type=Path, required=True,
                         help="eval --json with --adapter NAME on the same tasks and seeds")
    verdict.add_argument("--adapter", required=True, metavar="NAME", help="the adapter judged")
    verdict.add_argument("--model", metavar="PATH",
                         help="a model folder or name (default: the prepared default model)")


def _source_arguments(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`allow`, `disallow` and `sources`."""
    allowing = sub.add_parser("allow", help="let teach data learn from the verified specs in a "
                              "folder of yours (each is verified and spec-checked again)")
    allowing.add_argument("folder", type=Path, help="a folder that holds specs and kernels")
    disallowing = sub.add_parser("disallow", help="stop teach data learning from a folder")
    disallowing.add_argument("folder", type=Path, help="a folder allowed before")
    listing = sub.add_parser("sources", help="list the folders teach data may learn from and "
                             "the proposals kept")
    flags.add_json(listing, "the list")


def _stats_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `teach stats`."""
    parser.add_argument("--data", type=Path, default=None,
                        help="a train.jsonl of teach data (default: the data folder's "
                             "teach/data/train.jsonl)")
    parser.add_argument("--generated", type=int, default=0, metavar="N",
                        help="count N of the generator's candidates instead (nothing is "
                             "verified: the mix a run of teach data tries)")
    parser.add_argument("--seed", type=int, default=0, help="the generator's seed (default 0)")
    parser.add_argument("--family", action="append", choices=sorted(FAMILIES), default=None,
                        help="with --generated: only these families")
    flags.add_json(parser, "the tables")


def _stats(args: argparse.Namespace) -> int:
    """Count what a training set (or the generator) covers."""
    if args.generated > 0:
        lines = stats.candidate_lines(itertools.islice(candidates(args.seed, args.family),
                                                       args.generated))
        what = f"{args.generated} generated candidates (seed {args.seed}, not verified)"
    else:
        path = args.data or data_dir() / "teach" / "data" / DATA_NAME
        try:
            lines = stats.read_lines(path)
        except (OSError, ValueError) as error:
            print(f"kernel-studio teach stats: cannot read {path}: {error}; make it with "
                  "kernel-studio teach data, or give --data", file=sys.stderr)
            return 2
        what = f"{len(lines)} examples in {path}"
    tables = stats.count(lines)
    if args.json:
        print(json.dumps({"of": what, **{k: dict(v) for k, v in tables.items()}}, indent=1))
    else:
        print(f"{what}\n{stats.render(tables)}")
    return 0


def _train_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `teach train`."""
    defaults = Settings()
    parser.add_argument("--data", type=Path, required=True, help="a train.jsonl of teach data")
    parser.add_argument("--out", required=True, metavar="NAME",
                        help="the adapter's name (kept in the model's adapters/ folder)")
    parser.add_argument("--steps", type=positive, default=defaults.steps,
                        help=f"training steps, one example each (default {defaults.steps})")
    parser.add_argument("--seed", type=int, default=0, help="the seed (default 0)")
    parser.add_argument("--max-tokens", type=positive, default=defaults.max_tokens,
                        help="cut longer examples to this many tokens; bounds the memory "
                             f"(default {defaults.max_tokens})")
    parser.add_argument("--checkpoint-every", type=positive, default=defaults.checkpoint_every,
                        help=f"steps between checkpoints (default {defaults.checkpoint_every})")
    parser.add_argument("--resume", action="store_true",
                        help="continue the cancelled run of this adapter from its checkpoint")
    parser.add_argument("--model", metavar="PATH",
                        help="a model folder or name (default: the prepared default model)")
    parser.add_argument("--threads", type=positive, default=cpu_threads(),
                        help="CPU threads (default: every core but one)")
    parser.add_argument("--batch", type=positive, default=defaults.batch,
                        help=f"examples per step (default {defaults.batch})")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                        help="where to train (default: the GPU when there is one)")
    parser.add_argument("--quantization", choices=("auto", "none", "nf4"), default="auto",
                        help="the base model's weights on a GPU: nf4 (QLoRA, the default there) "
                             "or none (bfloat16); the CPU trains in float32")
    parser.add_argument("--targets", choices=("attention", "all"), default=defaults.targets,
                        help="the projections the LoRA wraps: attention only, or the MLP too "
                             f"(default {defaults.targets})")
    parser.add_argument("--rank", type=positive, default=defaults.rank,
                        help=f"the LoRA rank (default {defaults.rank}; alpha is twice it)")
    parser.add_argument("--learning-rate", type=float, default=defaults.learning_rate,
                        help=f"AdamW's learning rate (default {defaults.learning_rate})")


def _settings(args: argparse.Namespace) -> Settings:
    """The run's settings; AssistError for a GPU asked for where there is none."""
    device = quant.resolve_device(args.device)
    quantization = "none" if device == "cpu" else (
        "nf4" if args.quantization == "auto" else args.quantization)
    return Settings(steps=args.steps, seed=args.seed, max_tokens=args.max_tokens,
                    checkpoint_every=args.checkpoint_every, batch=args.batch, device=device,
                    quantization=quantization, targets=args.targets, rank=args.rank,
                    alpha=2 * args.rank, learning_rate=args.learning_rate)


def _train(args: argparse.Namespace) -> int:
    """Train the adapter."""
    try:
        settings = _settings(args)
        folder = train_adapter(resolve_model(args.model), args.data, args.out, settings, _say,
                               args.resume, args.threads)
    except AssistError as error:
        print(f"kernel-studio teach train: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"cancelled: a checkpoint is kept; continue with: kernel-studio teach train "
              f"--data {args.data} --out {args.out} --resume (same --steps and --seed)",
              file=sys.stderr)
        return 130
    print(f"adapter {args.out} written to {folder} (use it with --adapter {args.out})")
    return 0


def _say(line: str) -> None:
    """A progress line, on stderr (stdout carries --json)."""
    print(line, file=sys.stderr)


def _report(summary: Summary, out: Path, as_json: bool) -> None:
    """The summary, as words on stderr and (with --json) JSON on stdout."""
    if as_json:
        print(json.dumps({"out": str(out / DATA_NAME), **summary.as_dict()}, indent=1))
    families = ", ".join(f"{k} {v}" for k, v in sorted(summary.families.items())) or "none"
    print(f"wrote {summary.written} example(s) to {out / DATA_NAME} in {summary.seconds:.0f} s "
          f"({families}); dropped {summary.failed_verify} that failed verification and "
          f"{summary.weak_spec} with a weak spec and {summary.not_canonical} whose kernel cannot "
          f"start as a proposal's answer does; refused {summary.refused_heldout} that showed "
          f"a held-out task or a KernelBench problem ({summary.refused_kernelbench} "
          "KernelBench)", file=sys.stderr)
    for source, counts in sorted(summary.sources.items()):
        print(f"  {source}: " + ", ".join(f"{what} {counts[what]}" for what in
                                         ("tried", "written", "dropped", "refused", "unreadable")
                                         if counts[what]), file=sys.stderr)
    _name_drops(summary, out)


def _name_drops(summary: Summary, out: Path) -> None:
    """Name what was dropped, refused or unreadable, the generator's drops left to the file."""
    named = summary.unreadable + [d for d in summary.dropped if not d.startswith(GENERATED)]
    for line in named[:SHOWN_DROPS]:
        print(f"  {line}", file=sys.stderr)
    if len(named) > SHOWN_DROPS or len(named) < len(summary.unreadable + summary.dropped):
        print(f"  (every one is named in {out / 'summary.json'})", file=sys.stderr)


def _sources(args: argparse.Namespace) -> list[Source]:
    """The candidate sources for `teach data`, in the order they are taken."""
    chosen: list[Source] = []
    if not args.no_templates:
        chosen.append(iter(template_candidates()))
    if not args.no_allowed:
        chosen.append(allowed_candidates(allowed_folders()))
    if not args.no_proposals:
        chosen.append(proposal_candidates())
    if not args.no_generated:
        chosen.append(iter(candidates(args.seed, args.family, args.op)))
    return chosen


def _data(args: argparse.Namespace) -> int:
    """Build the training set."""
    if args.count < 1:
        print("kernel-studio teach data: --count must be at least 1", file=sys.stderr)
        return 2
    try:
        guard = Guard.of(load_suite())
        sources = _sources(args)
    except TaskError as error:
        return broken_suite("teach data", error)
    except (SourcesError, ValueError) as error:
        print(f"kernel-studio teach data: {error}", file=sys.stderr)
        return 2
    out = args.out or data_dir() / "teach" / "data"
    try:
        summary = build(out, args.count, itertools.chain(*sources), guard, _say, args.backend)
    except DataError as error:
        print(f"kernel-studio teach data: {error}", file=sys.stderr)
        return 3
    _report(summary, out, args.json)
    if summary.cancelled:
        print("cancelled: the examples written so far are kept", file=sys.stderr)
        return 130
    return 0 if summary.written else 3


def _allow(args: argparse.Namespace) -> int:
    """Add a folder to the allowed ones; exit 2 when it is not a folder."""
    try:
        folder, added = allow(args.folder)
    except SourcesError as error:
        print(f"kernel-studio teach allow: {error}", file=sys.stderr)
        return 2
    state = "allowed" if added else "already allowed"
    print(f"{state}: {folder} ({count_specs(folder)} spec(s) with a kernel there); teach data "
          "verifies and spec-checks each again, and runs its code only inside the sandbox or "
          "when you trusted it (kernel-studio trust)")
    return 0


def _disallow(args: argparse.Namespace) -> int:
    """Remove a folder from the allowed ones; exit 2 when it was not allowed."""
    try:
        folder = disallow(args.folder)
    except SourcesError as error:
        print(f"kernel-studio teach disallow: {error}", file=sys.stderr)
        return 2
    print(f"no longer allowed: {folder} (examples already written from it stay in train.jsonl "
          "files until you build them again)")
    return 0


def _list_sources(args: argparse.Namespace) -> int:
    """List the allowed folders (each with its spec count, or gone) and the kept proposals."""
    try:
        folders = allowed_folders()
    except SourcesError as error:
        print(f"kernel-studio teach sources: {error}", file=sys.stderr)
        return 2
    rows = [{"folder": str(f), "exists": f.is_dir(), "specs": count_specs(f) if f.is_dir()
             else 0} for f in folders]
    kept = sum(1 for c in proposal_candidates() if isinstance(c, Candidate))
    if args.json:
        print(json.dumps({"file": str(sources_path()), "allowed": rows, "proposals": kept},
                         indent=1))
        return 0
    for row in rows:
        state = f"{row['specs']} spec(s)" if row["exists"] else "GONE (teach disallow it)"
        print(f"{row['folder']}: {state}")
    if not rows:
        print("no folder allowed (kernel-studio teach allow DIR adds one)", file=sys.stderr)
    print(f"kept proposals: {kept}")
    return 0


def _judge(args: argparse.Namespace) -> int:
    """Keep the adapter if the held-out evals show a lift, else remove it; exit 0 kept, 1
    discarded, 2 bad input."""
    try:
        before, after = read_result(args.before), read_result(args.after)
        model = resolve_model(args.model)
        check_runs(before, after, args.adapter, started_from(model, args.adapter))
        verdict = judge(before, after)
        written = apply(model, args.adapter, verdict,
                        discard_folder(data_dir()))
    except AssistError as error:
        print(f"kernel-studio teach judge: {error}", file=sys.stderr)
        return 2
    print(verdict.describe())
    print(f"{'its card now holds both evals' if verdict.kept else 'the figures are in'}: "
          f"{written}")
    return 0 if verdict.kept else 1


def _adapters(args: argparse.Namespace) -> int:
    """List the adapters; exit 2 when the model cannot be found."""
    try:
        found = list_adapters(resolve_model(args.model))
    except AssistError as error:
        print(f"kernel-studio teach adapters: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([{"name": a.name, "folder": str(a.folder), "ok": not a.problem,
                           "problem": a.problem, "card": {} if a.problem else a.card}
                          for a in found], indent=1))
        return 0
    for adapter in found:
        if adapter.problem:  # its card is as untrusted as the rest of it: nothing read from it
            print(f"{adapter.name}: REFUSED: {adapter.problem}")
            continue
        steps, examples = adapter.card.get("steps", "?"), adapter.card.get("examples", "?")
        print(f"{adapter.name}: ok ({steps} steps on {examples} examples)")
    if not found:
        print("no adapters (kernel-studio teach train makes one)", file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    """Run the chosen step."""
    steps = {"adapters": _adapters, "train": _train, "data": _data, "judge": _judge,
             "allow": _allow, "disallow": _disallow, "sources": _list_sources,
             "stats": _stats, "rl": teach_rl.run}
    return steps[args.teach_command](args)
