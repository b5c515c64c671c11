"""The Debian packages a bundle carries: the ones Kernel Studio needs (debian-packages.txt) and
every dependency of theirs that a minimal system of the same release lacks, downloaded with
`apt-get download` on the build machine.

A minimal system is taken to hold the Essential and Priority: required packages and apt (as
debootstrap's minbase makes it) and what they need; those are left out. Where a dependency offers
alternatives, the first real package is taken, as apt would on a fresh system.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
NEEDED = HERE / "debian-packages.txt"
DEPENDS_OPTIONS = ["--no-recommends", "--no-suggests", "--no-conflicts", "--no-breaks",
                   "--no-replaces", "--no-enhances"]


def needed_packages() -> list[str]:
    """The package names in debian-packages.txt (comments and blank lines skipped)."""
    lines = (line.split("#", 1)[0].strip() for line in NEEDED.read_text().splitlines())
    return [line for line in lines if line]


def _apt(*args: str) -> str:
    """The output of an apt-cache or apt-get command (which must succeed)."""
    return subprocess.run(list(args), check=True, capture_output=True, text=True).stdout


def _choose(group: list[str], providers: dict[str, list[str]], strict: bool) -> str | None:
    """The package apt would take for one dependency: the first real alternative, or the
    first provider of a virtual one. `strict`: only a dependency with no choice in it."""
    if strict:
        return group[0] if len(group) == 1 and not group[0].startswith("<") else None
    for name in group:
        if not name.startswith("<"):
            return name
        if providers.get(name):
            return providers[name][0]
    return None


def parse_depends(text: str, strict: bool = False) -> dict[str, list[str]]:
    """Dependencies per package from `apt-cache depends` output, alternatives resolved (or,
    `strict`, left out)."""
    result: dict[str, list[str]] = {}
    current, group, virtual = "", [], ""
    providers: dict[str, list[str]] = {}
    pending: list[list[str]] = []
    for line in text.splitlines():
        if not line.startswith(" "):
            current = line.strip()
            result[current] = []
            continue
        match = re.match(r"\s+(\|?)(?:Pre)?Depends: (\S+)", line)
        if match:
            group.append(match[2])
            virtual = match[2]
            if not match[1]:
                pending.append(group)
                result[current].append("\0" + str(len(pending) - 1))
                group = []
        elif line.startswith("    "):
            providers.setdefault(virtual, []).append(line.strip())
    for name, items in result.items():
        chosen = (_choose(pending[int(i[1:])], providers, strict) for i in items)
        result[name] = [c.split(":")[0] for c in chosen if c]
    return result


def closure(roots: list[str], strict: bool = False) -> set[str]:
    """Every package `roots` need, following dependencies level by level (`strict`: only
    those that leave no choice)."""
    seen: set[str] = set()
    frontier = sorted(set(roots))
    while frontier:
        seen.update(frontier)
        depends = parse_depends(_apt("apt-cache", "depends", *DEPENDS_OPTIONS, *frontier),
                                strict)
        frontier = sorted({d for deps in depends.values() for d in deps} - seen)
    return seen


def base_system() -> set[str]:
    """What every system of this release has, as debootstrap's minbase makes it: the archive's
    Essential and required packages and apt, with the dependencies that leave no choice. (A
    package left out of this guess only costs the bundle its size: apt on the site takes from
    the bundle only what is missing.)"""
    roots, package = ["apt"], ""
    for line in _apt("apt-cache", "dumpavail").splitlines():
        if line.startswith("Package: "):
            package = line.split()[1]
        elif line in ("Priority: required", "Essential: yes"):
            roots.append(package)
    return closure(roots, strict=True)


def download(target: Path, extra: list[str] | None = None) -> list[str]:
    """Download the needed packages and their missing dependencies into `target`; write
    needed.txt there; return the names downloaded."""
    roots = needed_packages() + (extra or [])
    wanted = sorted(closure(roots) - (base_system() - set(roots)))
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run(["apt-get", "download", "-q", *wanted], check=True, cwd=target,
                   stdout=subprocess.DEVNULL)
    (target / "needed.txt").write_text("\n".join(roots) + "\n")
    write_index(target)
    return wanted


def write_index(target: Path) -> None:
    """A Packages index of the folder's .deb files: on the site, apt uses the folder as a
    repository and so upgrades an installed package only where a new one needs it (an older
    point release's python3.11 for the bundle's python3.11-venv, say)."""
    paragraphs = []
    for deb in sorted(target.glob("*.deb")):
        control = _apt("dpkg-deb", "-f", str(deb)).rstrip("\n")
        sha256 = hashlib.sha256(deb.read_bytes()).hexdigest()
        paragraphs.append(f"{control}\nFilename: ./{deb.name}\nSize: {deb.stat().st_size}\n"
                          f"SHA256: {sha256}\n")
    (target / "Packages").write_text("\n".join(paragraphs))
