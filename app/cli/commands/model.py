"""`kernel-studio model ...`: prepare, import, check and list local models (all offline)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.assist.errors import AssistError
from app.assist.model.convert import (
    import_folder,
    import_model,
    prepare_default_model,
    resolve_model,
)
from app.assist.model.manifest import MANIFEST_NAME
from app.assist.model.safety import check_model_folder
from app.assist.prompting.skills import load_skills
from app.base.paths import models_dir
from app.cli import flags
from app.cli.assistant import StderrProgress, report_error


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """One sub-action per verb, each with --json."""
    common = argparse.ArgumentParser(add_help=False)
    flags.add_json(common)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    verbs.add_parser("list", parents=[common],
                     help="models in the models folder and whether they have a manifest")
    prepare = verbs.add_parser("prepare-default", parents=[common],
                               help="convert the packaged SmolLM2-135M-Instruct once (make model)")
    prepare.add_argument("--force", action="store_true", help="convert again")
    source = verbs.add_parser("import", parents=[common],
                              help="bring in a model folder (safetensors) or a GGUF file: "
                                   "checked, hashed, copied into the models folder")
    source.add_argument("source", type=Path, help="a model folder or a .gguf file")
    source.add_argument("--name", help="the folder name to use (default: from the source)")
    source.add_argument("--in-place", action="store_true",
                        help="write the manifest into the source folder instead of copying it")
    source.add_argument("--force", action="store_true", help="replace an existing model")
    check = verbs.add_parser("check", parents=[common],
                             help="check every file of a model against its manifest")
    check.add_argument("model", nargs="?", help="a model folder or name (default: the default)")
    verbs.add_parser("skills", parents=[common],
                     help="the skills the assistant can use, and any broken ones")


Result = tuple[dict[str, object], str]


def _list() -> Result:
    """Model folders and whether each has a manifest."""
    root = models_dir()
    folders = sorted(p for p in root.glob("*") if p.is_dir() and not p.name.startswith("."))
    models = [{"name": p.name, "path": str(p), "manifest": (p / MANIFEST_NAME).is_file()}
              for p in (folders if root.is_dir() else [])]
    rows = [f"{m['name']}  {'ok' if m['manifest'] else 'no manifest'}  {m['path']}"
            for m in models]
    return {"models_dir": str(root), "models": models}, "\n".join(rows) or f"no models in {root}"


def _skills() -> Result:
    """Usable skills and the problems of unusable ones."""
    skills, problems = load_skills()
    rows = [f"{s.name}: {s.description[:72]}..." for s in skills.values()]
    rows += [f"problem: {p}" for p in problems]
    return {"skills": [{"name": s.name, "description": s.description, "path": str(s.path)}
                       for s in skills.values()],
            "problems": [str(p) for p in problems]}, "\n".join(rows)


def _import(args: argparse.Namespace, progress: StderrProgress) -> Result:
    """Import a folder or a GGUF file."""
    if args.in_place:
        if not args.source.is_dir():
            raise AssistError("--in-place needs a model folder")
        folder = import_folder(args.source, None, progress=progress)
    else:
        folder = import_model(args.source, args.name, args.force, progress)
    return {"imported": str(folder)}, f"imported: {folder}"


def _check(args: argparse.Namespace, progress: StderrProgress) -> Result:
    """Verify a model's files; raises ModelRefused naming the first changed file."""
    folder = resolve_model(args.model)
    count = len(check_model_folder(folder, progress)["files"])
    return {"checked": str(folder), "files": count}, f"ok: {count} files of {folder} unchanged"


def _perform(args: argparse.Namespace, progress: StderrProgress) -> Result:
    """Run the verb; its result as data and as text."""
    if args.verb == "list":
        return _list()
    if args.verb == "skills":
        return _skills()
    if args.verb == "prepare-default":
        folder = prepare_default_model(args.force, progress)
        return {"prepared": str(folder)}, f"ready: {folder}"
    if args.verb == "import":
        return _import(args, progress)
    return _check(args, progress)


def run(args: argparse.Namespace) -> int:
    """Do it; exit 2 when a model is missing or refused."""
    progress = StderrProgress(quiet=args.json)
    try:
        data, text = _perform(args, progress)
    except (AssistError, OSError) as error:
        progress.done()
        return report_error(f"model {args.verb}", error)
    progress.done()
    print(json.dumps(data, indent=2) if args.json else text)
    if data.get("problems"):
        print("some skills could not be read (see above)", file=sys.stderr)
    return 0
