"""The kernel template gallery's data: templates shipped in resources/kernels, and copying one.

No Qt: the gallery dialog lists these and calls create_from_template.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from app.paths import RESOURCES

TEMPLATES_DIR = RESOURCES / "kernels"


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


def create_from_template(template: Template, parent: Path) -> Path:
    """Copy a template into parent/<name>/ and return the new source file.

    Never overwrites: if the folder already exists, TemplateExists says so and nothing is
    written, so a user's edited kernel can never be replaced by a fresh template.
    """
    destination = Path(parent).expanduser() / template.name
    if destination.exists():
        raise TemplateExists(f"{destination} already exists")
    staging = destination.with_name(f".{template.name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for path in template.files():
        shutil.copy2(path, staging / path.name)
    staging.rename(destination)
    return destination / template.source.name
