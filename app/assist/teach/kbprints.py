"""Building kbdata.py, the fingerprints app.assist.teach.kbguard refuses, from a KernelBench
snapshot (run once, by whoever updates them; the app never needs the snapshot):

    python -m app.assist.teach.kbprints /work/.mirror/ScalingIntelligence+KernelBench/repo

The argument is a KernelBench checkout or a bare git directory of one. Each problem file is
read as text (Python's ast), never run: the fingerprint keeps only its level, stem, the counted
operations of its forward and its docstring's content words.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from app.assist.teach.kbguard import PRINTS, Print, block_ops, content_words, model_forward
from app.base.fsutil import atomic_write_text

LEVELS = (1, 2, 3)
MODULE_DOC = ("Fingerprints of KernelBench levels 1-3, made by python -m app.assist.teach.kbprints "
              "(do not edit;\nsee app/assist/teach/kbguard.py).")


def print_of(source: str, level: int, stem: str) -> Print | None:
    """The fingerprint of one problem file; None when it has no Model with a forward."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    found = model_forward(tree, "Model")
    if found is None:
        return None
    model, _forward = found
    doc = (ast.get_docstring(model) or "").split("\n\n")[0]
    return Print(level, stem, tuple(sorted(block_ops(tree, "Model").items())),
                 tuple(sorted(content_words(doc))))


def _git(git_dir: Path, *args: str) -> str:
    """A git command's output in a bare directory."""
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True,
                          capture_output=True, text=True).stdout


def problem_files(root: Path) -> list[tuple[int, str, str]]:
    """(level, stem, source) of every level 1-3 problem of a checkout or bare git directory."""
    found = []
    for level in LEVELS:
        folder = f"KernelBench/level{level}"
        if (root / folder).is_dir():
            for path in sorted((root / folder).glob("*.py")):
                found.append((level, path.stem, path.read_text(encoding="utf-8")))
            continue
        for name in _git(root, "ls-tree", "--name-only", f"HEAD:{folder}").split():
            if name.endswith(".py"):
                source = _git(root, "show", f"HEAD:{folder}/{name}")
                found.append((level, name[:-3], source))
    return found


def build(root: Path, out: Path = PRINTS) -> int:
    """Write the fingerprints of every problem under root; how many."""
    prints = [p for p in (print_of(s, level, stem) for level, stem, s in problem_files(root))
              if p is not None]
    rows = ",\n".join(json.dumps(p.as_dict(), sort_keys=True) for p in prints)
    atomic_write_text(out, module_text(f'{{"format": 1, "problems": [\n{rows}\n]}}'))
    return len(prints)


def module_text(data: str) -> str:
    """kbdata.py: the fingerprints' JSON as a string (names and words only: no quotes or
    backslashes), so that they ship with the code."""
    return (f'"""{MODULE_DOC}"""\n\n# ruff: noqa: E501\n\nTEXT = r\'\'\'\n{data}\n\'\'\'\n')


def main(argv: list[str]) -> int:
    """Build the fingerprints from the snapshot named on the command line."""
    if len(argv) != 1:
        print("usage: python -m app.assist.teach.kbprints KERNELBENCH_CHECKOUT_OR_GIT_DIR",
              file=sys.stderr)
        return 2
    count = build(Path(argv[0]))
    print(f"wrote {count} fingerprints to {PRINTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
