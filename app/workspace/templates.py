"""The kernel template gallery's data: templates shipped in resources/kernels, and copying one.

No Qt: the gallery dialog lists these and calls create_from_template.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from app.base.paths import RESOURCES
from app.workspace.cuda_language import CPP_KEYWORDS, CUDA_BUILTINS, CUDA_KEYWORDS, CUDA_TYPES

TEMPLATES_DIR = RESOURCES / "kernels"
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_NAME = 64
# Comments and string literals of CUDA source (captured, so that re.split keeps them).
NOT_CODE = re.compile(r'(//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\')', re.S)
# The spec's lines that name the template: source, entry, reference.
SPEC_NAMES = re.compile(r'^(source|entry|python)\s*=\s*"([^"]*)"', re.M)
RESERVED = frozenset({*CPP_KEYWORDS, *CUDA_KEYWORDS, *CUDA_TYPES, *CUDA_BUILTINS, "main"})


@dataclass(frozen=True)
class Template:
    """One template: a folder holding <name>.cu, usually <name>.toml and <name>_ref.py."""

    name: str
    folder: Path
    description: str

    @property
    def source(self) -> Path:
        """The kernel source file."""
        return self.folder / f"{self.name}.cu"

    @property
    def spec(self) -> Path:
        """The spec beside the source."""
        return self.folder / f"{self.name}.toml"

    def files(self) -> list[Path]:
        """Every file the template is made of."""
        return sorted(p for p in self.folder.iterdir() if p.is_file() and p.suffix != ".pyc")


def _description(source: Path) -> str:
    """The first comment line of a source: '// vector_add: c = a + b, ...' -> 'c = a + b, ...'."""
    try:
        first = source.read_text(encoding="utf-8").splitlines()[0]
    except (OSError, IndexError, UnicodeDecodeError):
        return ""
    text = first.lstrip("/ ").strip()
    name = source.stem + ":"
    return text[len(name):].strip() if text.startswith(name) else text


def list_templates(folder: Path = TEMPLATES_DIR) -> list[Template]:
    """Templates in the gallery, vector_add first (the one to read first), then by name."""
    found = [Template(d.name, d, _description(d / f"{d.name}.cu"))
             for d in sorted(folder.iterdir()) if (d / f"{d.name}.cu").is_file()] \
        if folder.is_dir() else []
    found.sort(key=lambda t: (t.name != "vector_add", t.name))
    return found


class TemplateExists(FileExistsError):
    """The destination already holds a kernel of that name."""


def name_problem(name: str) -> str:
    """What is wrong with a kernel's name ('' when it can name the folder, the files and the
    __global__ function)."""
    if not name:
        return "give the kernel a name"
    if not IDENTIFIER.fullmatch(name):
        return (f"{name!r} cannot name a kernel: use letters, digits and underscores, not "
                "starting with a digit (a C identifier)")
    if len(name) > MAX_NAME:
        return f"the name is longer than {MAX_NAME} characters"
    if name in RESERVED:
        return f"{name!r} is a C++ or CUDA word; choose another name"
    return ""


def _renamed_file(file_name: str, old: str, new: str) -> str:
    """vector_add.cu -> vsum.cu, vector_add_ref.py -> vsum_ref.py (other names unchanged)."""
    return re.sub(rf"^{re.escape(old)}(?=[._])", new, file_name)


def _renamed_code(text: str, old: str, new: str) -> str:
    """CUDA source with the identifier `old` renamed in its code (comments and string literals,
    which are prose, keep their words)."""
    word = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(old)}(?![A-Za-z0-9_])")
    parts = NOT_CODE.split(text)  # the pattern captures: odd items are comments and strings
    return "".join(part if index % 2 else word.sub(new, part)
                   for index, part in enumerate(parts))


def _renamed_spec(text: str, old: str, new: str) -> str:
    """A spec naming the new source, entry and reference files."""
    def rename(match: re.Match[str]) -> str:
        """One `key = "value"` line, its value renamed."""
        value = _renamed_file(match.group(2), old, new) if match.group(1) != "entry" else \
            _renamed_entry(match.group(2), old, new)
        return f'{match.group(1)} = "{value}"'

    return SPEC_NAMES.sub(rename, text)


def _renamed_entry(entry: str, old: str, new: str) -> str:
    """The spec's entry for the renamed function: `old` itself, or an instantiation of the
    template `old` (`scale<float, 4>` -> `vscale<float, 4>`); any other entry unchanged."""
    if entry == old:
        return new
    return new + entry[len(old):] if entry.startswith(f"{old}<") else entry


def _copy(path: Path, target: Path, old: str, new: str) -> None:
    """Copy one template file, renamed (its name, and its code or spec) for a new name."""
    if old == new:
        shutil.copy2(path, target)
        return
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".cu", ".cuh", ".h"):
        text = _renamed_code(text, old, new)
    elif path.suffix == ".toml":
        text = _renamed_spec(text, old, new)
    target.with_name(_renamed_file(path.name, old, new)).write_text(text, encoding="utf-8")


def create_from_template(template: Template, parent: Path, name: str | None = None) -> Path:
    """Copy a template into parent/<name>/ and return the new source file. With a `name`, the
    folder, the files, the __global__ function, the spec's entry and its file names take it.

    Never overwrites: if the folder already exists, TemplateExists says so and nothing is
    written, so a user's edited kernel can never be replaced by a fresh template. A bad name
    is a ValueError saying what is wrong.
    """
    name = name or template.name
    problem = name_problem(name)
    if problem:
        raise ValueError(problem)
    destination = Path(parent).expanduser() / name
    if destination.exists():
        raise TemplateExists(f"{destination} already exists")
    staging = destination.with_name(f".{name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for path in template.files():
        _copy(path, staging / path.name, template.name, name)
    staging.rename(destination)
    return destination / f"{name}.cu"
