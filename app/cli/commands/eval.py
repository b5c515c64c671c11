"""`kernel-studio eval [TASKS...]`: the local model against the task suite, graded by running
every candidate through the real verifier. Prints pass@1 and pass@K (by level and dtype),
compile-error rate, rounds to pass, tokens and time; with --skills both or --examples both, the
lift with a bootstrap 95% interval over tasks. Every run is appended to the local results store.
With --kernelbench (tasks imported from KernelBench), also KernelBench's own measures:
correctness and fast_0/fast_1/fast_2 over eager PyTorch and torch.compile, timed on the GPU
(app.assist.evaluation.fastp, kernelbench_timing).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.assist.errors import AssistError
from app.assist.evaluation import fastp, report, store
from app.assist.evaluation.grade import (
    SWITCHES,
    EvalResult,
    EvalSettings,
    Evaluation,
    arms_for,
    estimate_seconds,
)
from app.assist.evaluation.kernelbench_timing import is_kernelbench, measure
from app.assist.evaluation.metrics import Summary, summarize
from app.assist.model.batch import BatchModel, Request
from app.assist.model.session import GenerationOptions
from app.assist.refine.loop import Chain, Job, next_prompt
from app.assist.refine.verifypool import default_workers
from app.assist.tasks.suite import Task, TaskError, load_suite, load_task
from app.base.fsutil import atomic_write_text
from app.base.paths import data_dir
from app.cli import flags
from app.cli.assistant import (
    StderrProgress,
    add_model_arguments,
    add_speed_rounds,
    batch_model_from_args,
    positive,
    report_error,
    speed_refused,
)
from app.cli.commands.ask import stop_on_interrupt

TEMPERATURE = flags.within(0.0, 100.0, "the temperature", include_low=True)
TIME_LIMIT = flags.within(1.0, 7 * 24 * 3600.0, "--time-limit")
# On a GPU a step costs about the same for one row as for hundreds (measured on an H200: about
# 70 ms a step for 1, 24 and 128 rows), so the chains of a round go in few batches; 128 rows of
# prompts up to 3000 tokens held 26 to 33 GB of GPU memory, so 256 stay well inside 139 GB.
GPU_BATCH = 256
MAX_K = 64


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Which tasks, how many chains and rounds, which arms, the model, and the outputs."""
    parser.add_argument("tasks", nargs="*", metavar="TASK",
                        help="task names from resources/tasks, or task spec files (default: "
                             "the --split)")
    parser.add_argument("--split", choices=["dev", "heldout", "all"], default="dev",
                        help="which tasks of the suite (default dev)")
    parser.add_argument("-k", type=positive, default=4, metavar="K",
                        help="independent chains per task (default 4)")
    parser.add_argument("--rounds", type=positive, default=3, metavar="R",
                        help="attempts per chain, each told why the last failed (default 3)")
    parser.add_argument("--skills", choices=SWITCHES, default="on",
                        help="skills in the prompts (both: measure the lift)")
    parser.add_argument("--examples", choices=SWITCHES, default="on",
                        help="verified example kernels in the prompts (both: measure the lift)")
    parser.add_argument("--limit", type=positive, metavar="N",
                        help="only N tasks, spread over the levels")
    parser.add_argument("--max-new-tokens", type=positive, default=512, metavar="N",
                        help="longest answer in tokens (default 512)")
    parser.add_argument("--temperature", type=TEMPERATURE, default=0.7,
                        help="sampling temperature of every chain (default 0.7)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the chains' sampling")
    parser.add_argument("--batch", type=positive, metavar="N",
                        help=f"answers generated together (default 1 on the CPU, {GPU_BATCH} "
                             "on a GPU)")
    parser.add_argument("--workers", type=positive, metavar="N",
                        help="candidates verified at once (default 1 on the CPU, more on a GPU)")
    flags.add_backend(parser, "where candidates run")
    flags.add_timeout(parser, "seconds a candidate may run before it is killed")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="the run folder for every attempt (default: the data folder's "
                             "eval/runs/)")
    parser.add_argument("--report", type=Path, metavar="FILE.html",
                        help="also write a self-contained HTML report")
    parser.add_argument("--time-limit", type=TIME_LIMIT, metavar="S",
                        help="stop after S seconds, keeping what was decided (as Stop does)")
    parser.add_argument("--no-estimate", action="store_true",
                        help="start without timing the model first")
    parser.add_argument("--kernelbench", action="store_true",
                        help="the tasks are imported KernelBench problems (task folders, or a "
                             "folder of them): also report KernelBench's correctness and "
                             "fast_0/1/2 over eager PyTorch and torch.compile (timed on a GPU)")
    parser.add_argument("--no-timing", action="store_true",
                        help="with --kernelbench: correctness only, no kernel timed (time the "
                             "passing kernels later: benchmarks/kb_passed_gpu.sh)")
    add_speed_rounds(parser)
    add_model_arguments(parser)
    flags.add_json(parser, "the result")


def spread(tasks: list[Task], limit: int | None) -> list[Task]:
    """At most `limit` tasks, taken in turn from each level so a short run sees them all."""
    if not limit or limit >= len(tasks):
        return tasks
    levels: dict[int, list[Task]] = {}
    for task in tasks:
        levels.setdefault(task.level, []).append(task)
    chosen: list[Task] = []
    while len(chosen) < limit:
        for level in sorted(levels):
            if levels[level] and len(chosen) < limit:
                chosen.append(levels[level].pop(0))
    return chosen


def select_tasks(names: list[str], split: str,
                 limit: int | None) -> tuple[list[Task], list[dict[str, str]]]:
    """The tasks named (suite names or spec files), else the split's, and the split's tasks
    that could not be loaded; TaskError when a task named cannot be used."""
    suite = load_suite()
    if not names:
        broken = [{"task": n, "message": m} for n, m in suite.broken_in(split)]
        return spread(suite.split(split), limit), broken
    tasks = []
    for name in names:
        path = Path(name)
        if path.suffix == ".toml" or path.exists():
            tasks.append(load_task(path if path.suffix == ".toml" else path / f"{path.name}.toml"))
        else:
            tasks.extend(suite.named([name]))
    return spread(tasks, limit), []


def kernelbench_names(names: list[str]) -> list[str]:
    """The task names with every folder of task folders (`tasks/` after `import kernelbench
    ... --out tasks/`) replaced by the task folders it holds."""
    expanded: list[str] = []
    for name in names:
        path = Path(name)
        inner = sorted(p for p in path.iterdir() if (p / f"{p.name}.toml").is_file()) \
            if path.is_dir() and not (path / f"{path.name}.toml").is_file() else []
        expanded += [str(p) for p in inner] or [name]
    return expanded


def select_kernelbench(names: list[str], limit: int | None) -> list[Task]:
    """The KernelBench tasks named; TaskError when none is named or one is not one."""
    if not names:
        raise TaskError("--kernelbench needs the imported tasks: name their folders (or the "
                        "folder holding them, the --out of `kernel-studio import kernelbench`)")
    tasks, _ = select_tasks(kernelbench_names(names), "all", limit)
    for task in tasks:
        if not is_kernelbench(task):
            raise TaskError(f"{task.spec_path} is not a task imported from KernelBench (no "
                            "problem.py beside it): leave out --kernelbench or import it with "
                            "`kernel-studio import kernelbench`")
    return tasks


def _device_defaults(model: BatchModel, args: argparse.Namespace) -> tuple[int, int]:
    """(batch, workers): big batches and several verifiers on a GPU, one of each on the CPU."""
    report_ = model.load()
    on_gpu = report_.device == "cuda"
    batch = args.batch or (GPU_BATCH if on_gpu else 1)
    return batch, args.workers or default_workers(on_gpu)


def _calibrate(model: BatchModel, settings: EvalSettings) -> tuple[float, float]:
    """(decode tokens/s, seconds to read a real first prompt) from one short greedy answer."""
    task = settings.tasks[0]
    job = Job(task.name, task.spec(), task.description, skills=settings.arms[0].skills)
    prompt = next_prompt(Chain(job, 0, 0, GenerationOptions()), model, 16)
    answer = model.generate_batch([Request(prompt.messages, "", GenerationOptions(), 16)])
    first = answer.answers[0]
    return max(first.tokens_per_s, 0.1), first.first_token_s or 0.0


def _estimate(model: BatchModel, settings: EvalSettings, device: str) -> str:
    """One line: the upper bound of the run's time."""
    speed, prefill = _calibrate(model, settings)
    seconds = estimate_seconds(settings, speed, prefill)
    answers = len(settings.tasks) * len(settings.arms) * settings.k * settings.rounds
    return (f"estimate: at most {seconds / 60:.1f} min for {len(settings.tasks)} task(s) x "
            f"{len(settings.arms)} arm(s) x {settings.k} chain(s) x {settings.rounds} round(s) "
            f"= {answers} answers of up to {settings.max_new_tokens} tokens ({speed:.1f} "
            f"tokens/s, {prefill:.1f} s to read a prompt, {device}, batch {settings.batch}); "
            "most chains end sooner")


def _settings(args: argparse.Namespace, tasks: list[Task], batch: int, workers: int,
              broken: list[dict[str, str]]) -> EvalSettings:
    """The evaluation's settings from the flags."""
    run_id = time.strftime("%Y%m%d-%H%M%S")
    return EvalSettings(tasks, args.out or data_dir() / "eval" / "runs" / run_id,
                        arms_for(args.skills, args.examples), args.k, args.rounds,
                        args.max_new_tokens, args.temperature, batch, workers, args.backend,
                        args.timeout, args.seed, load_suite().heldout(), broken,
                        args.speed_rounds)


def _row(name: str, summary: Summary) -> str:
    """One line of the summary table."""
    def cell(value: float | None) -> str:
        """A rate, or a dash."""
        return "-" if value is None else f"{value:.3f}"

    return (f"{name:<28} {summary.tasks:>5} {cell(summary.pass_at_1):>7} "
            f"{cell(summary.pass_at_k):>7} {cell(summary.compile_error_rate):>9} "
            f"{cell(summary.rounds_to_pass):>7} {summary.new_tokens:>9} "
            f"{summary.generate_s:>8.1f} {summary.verify_s:>8.1f}")


def _groups(title: str, groups: dict[str, dict[str, float | int | None]], k: int) -> str:
    """'by level: 1 0.250/0.500 (8 tasks), 2 ...'."""
    cells = []
    for name, figures in groups.items():
        one, many = figures.get("pass_at_1"), figures.get(f"pass_at_{k}")
        cells.append(f"{name} {one if one is None else f'{one:.3f}'}/"
                     f"{many if many is None else f'{many:.3f}'} ({figures['tasks']})")
    return f"  {title}: " + ", ".join(cells)


def text_report(result: EvalResult) -> str:
    """The result for people: a table per arm, groups, the lift, and what went wrong."""
    k = int(result.settings["k"])
    lines = [f"{'arm':<28} {'tasks':>5} {'pass@1':>7} {'pass@' + str(k):>7} "
             f"{'compile%':>9} {'rounds':>7} {'tokens':>9} {'gen s':>8} {'ver s':>8}"]
    for arm, items in result.outcomes.items():
        summary = summarize(items, k)
        lines.append(_row(arm, summary))
        lines.append(_groups("by level (pass@1/pass@K)", summary.by_level, k))
        lines.append(_groups("by dtype", summary.by_dtype, k))
        if summary.speedup is not None:
            lines.append(f"  kept the fastest that passed: {summary.speedup:.2f}x the first "
                         f"passing kernel (geometric mean over {summary.timed_chains} timed "
                         "chains)")
        if summary.redraws:
            lines.append(f"  {summary.redraws} answers repeated a kernel their chain had tried "
                         "and were asked again, hotter (not verified, not counted as rounds)")
    lines += [f"lift of {x.treatment} over {x.control} (pass@1): {x.describe()}"
              for x in result.lifts]
    lines += [f"note: {n}" for n in result.notes]
    lines += [f"skipped {b['task']}: {b['message']}" for b in result.broken]
    if result.stopped:
        lines.append("stopped: the figures cover the chains that finished (partial results)")
    lines.append(f"{result.seconds:.1f} s; every attempt is in {result.run_dir}")
    return "\n".join(lines)


def pass_line(result: EvalResult, arm: str) -> str:
    """pass@1 and pass@K of the arm KernelBench's measures score, for the line beside them."""
    k = int(result.settings["k"])
    summary = summarize(result.outcomes.get(arm, []), k)
    def cell(value: float | None) -> str:
        """A rate, or a dash."""
        return "-" if value is None else f"{value:.3f}"

    return (f"pass@1 {cell(summary.pass_at_1)}, pass@{k} {cell(summary.pass_at_k)} over "
            f"{summary.tasks} tasks (every chain)")


def kernelbench_measures(result: EvalResult, settings: EvalSettings,
                         timing: bool = True) -> fastp.KernelBenchMeasures:
    """KernelBench's measures of a finished run (timing skipped when it was stopped, or when
    the user asked for correctness only)."""
    if result.stopped or not timing:
        measures = measure(result, replace(settings, backend="cpu"))
        measures.reason = "the run was stopped before its kernels were timed" if \
            result.stopped else "--no-timing: correctness only"
        return measures
    return measure(result, settings, _say)


def _model_info(model: BatchModel) -> dict[str, Any]:
    """What the result records about the model."""
    loaded = model.report
    return {"folder": str(model.folder), "name": model.folder.name,
            "device": loaded.device if loaded else "", "quantization":
            loaded.quantization if loaded else "", "adapter": model.adapter or "",
            "prompt_style": model.prompt_style}


def _finish(result: EvalResult, args: argparse.Namespace, timed_out: bool = False,
            measures: fastp.KernelBenchMeasures | None = None) -> int:
    """Store, report and print the result; the exit code."""
    data = result.as_dict()
    if measures is not None:
        data["kernelbench"] = measures.as_dict()
    where = store.append_result(data)
    if args.json:
        print(json.dumps(data, indent=1))
    else:
        print(text_report(result))
        if measures is not None:
            print(fastp.describe(measures, pass_line(result, measures.arm)))
        print(f"stored in {where}" + (f"; report {args.report}" if args.report else ""))
    if args.report and not _write_report(args.report, report.render(data)):
        return 2
    if result.stopped and not timed_out:
        return 130
    decided = any(o.chains for items in result.outcomes.values() for o in items)
    return 0 if decided else 3


def _write_report(path: Path, html: str) -> bool:
    """Write the HTML report whole or not at all; False (said on stderr) when it cannot be."""
    try:
        atomic_write_text(path, html)
    except OSError as error:
        print(f"kernel-studio eval: the report could not be written to {path}: {error}; the "
              "results above are stored all the same", file=sys.stderr)
        return False
    return True


def report_problem(path: Path | None) -> str | None:
    """Why the report cannot be written at `path` (checked before a long run), or None."""
    if path is None:
        return None
    if path.is_dir():
        return f"--report {path} is a folder: name a file, for example {path / 'eval.html'}"
    if not path.parent.is_dir():
        return f"--report {path}: the folder {path.parent} does not exist"
    if not os.access(path.parent, os.W_OK):
        return f"--report {path}: the folder {path.parent} is not writable"
    return None


def _run(args: argparse.Namespace, progress: StderrProgress, stop: threading.Event) -> int:
    """Select, load, estimate, evaluate."""
    tasks, broken = (select_kernelbench(args.tasks, args.limit), []) if args.kernelbench \
        else select_tasks(args.tasks, args.split, args.limit)
    for item in broken:
        print(f"kernel-studio eval: skipped task {item['task']}: {item['message']}",
              file=sys.stderr)
    if not tasks:
        raise TaskError("no task to evaluate")
    model = batch_model_from_args(args, progress)
    batch, workers = _device_defaults(model, args)
    progress.done()
    settings = _settings(args, tasks, batch, workers, broken)
    device = model.report.device if model.report else "cpu"
    if not args.no_estimate:
        print(_estimate(model, settings, device), file=sys.stderr, flush=True)
    evaluation = Evaluation(model, settings, stop, _say)  # stderr: --json's stdout stays clean
    timer = threading.Timer(args.time_limit, stop.set) if args.time_limit else None
    if timer:
        timer.daemon = True
        timer.start()
    with stop_on_interrupt(stop):
        result = evaluation.run()
    timed_out = bool(timer and not timer.is_alive() and result.stopped)
    if timer:
        timer.cancel()
    if timed_out:
        result.notes.append(f"the time limit of {args.time_limit:g} s ended the run")
    result.model = _model_info(model)
    measures = kernelbench_measures(result, settings, not args.no_timing) \
        if args.kernelbench else None
    return _finish(result, args, timed_out, measures)


def _say(message: str) -> None:
    """Progress on stderr, one line each."""
    print(message, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """Evaluate; 0 when it ran, 2 for bad input, 3 when nothing could be decided, 130 when
    stopped (the partial result is stored all the same)."""
    if args.k > MAX_K:
        print(f"kernel-studio eval: at most {MAX_K} chains per task", file=sys.stderr)
        return 2
    if speed_refused("eval", args):
        return 2
    problem = report_problem(args.report) or (
        "--no-timing goes with --kernelbench" if args.no_timing and not args.kernelbench
        else None)
    if problem:
        print(f"kernel-studio eval: {problem}", file=sys.stderr)
        return 2
    progress = StderrProgress(quiet=args.json)
    try:
        return _run(args, progress, threading.Event())
    except (TaskError, ValueError) as error:
        progress.done()
        print(f"kernel-studio eval: {error}", file=sys.stderr)
        return 2
    except AssistError as error:
        progress.done()
        print(f"kernel-studio eval: {error}", file=sys.stderr)
        return report_error("eval", error)
