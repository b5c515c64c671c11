"""Checks a Kernel Studio bundle before anything from it is installed, and copies what it
checked into a fresh folder (standard library only: it runs on the system's Python).

Order of the checks, each refusing with exit 1 before the next: the signature of manifest.json
under the bundle's key; the key's fingerprint against the one the administrator was given (or
the key of the installation being upgraded); this machine against the manifest (Python version,
architecture, glibc floor); the file list (nothing unlisted, nothing missing, only plain files);
then every file's size and SHA-256 while it is copied. Only the copy is ever used afterwards, so
a file cannot change between its check and its use.

    python3 bundle_verify.py BUNDLE --into DIR [--fingerprint FP | --trusted-key FILE]
    python3 bundle_verify.py BUNDLE --print-fingerprint

Exit codes: 0 checked, 1 refused, 2 bad usage, 4 the key's fingerprint was not confirmed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import stat
import sys
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ed25519_verify  # noqa: E402  (beside this file; the bundle carries both)

FORMAT = "kernel-studio-install-bundle"
VERSION = 1
MANIFEST, SIGNATURE, PUBLIC_KEY = "manifest.json", "manifest.sig", "signing-key.pub"
UNSIGNED = (MANIFEST, SIGNATURE, PUBLIC_KEY)
SMALL_LIMIT = 16 << 20  # the manifest and the signature files are small; refuse huge ones
CHUNK = 1 << 20


class Refused(Exception):
    """The bundle is not installed: what is wrong with it."""


class Unconfirmed(Exception):
    """The signature is valid, but nobody has confirmed the key that made it."""


def fingerprint(public_key: bytes) -> str:
    """The key's SHA-256 in groups of four hex digits, to read aloud or compare by eye."""
    digest = hashlib.sha256(public_key).hexdigest()
    return " ".join(digest[i:i + 4] for i in range(0, len(digest), 4))


def normalized(text: str) -> str:
    """A fingerprint as typed (any spaces, colons or case) reduced to its hex digits."""
    return re.sub(r"[^0-9a-f]", "", text.lower())


@dataclass(frozen=True)
class Entry:
    """One file of the bundle: its path inside it, its size and how to read it."""

    name: str
    size: int
    handle: Any  # a tarfile.TarInfo or an absolute Path


class Source:
    """A bundle as a tar archive (one top folder) or as a folder already unpacked."""

    def __init__(self, path: Path) -> None:
        """Open the archive or list the folder; a symlink or a device file is refused."""
        self.path = path
        self.tar = tarfile.open(path, "r:*") if path.is_file() else None
        self.entries = {e.name: e for e in (self._tar_entries() if self.tar
                                            else self._folder_entries())}

    def _tar_entries(self) -> Iterator[Entry]:
        """Regular files of the archive, named relative to its single top folder."""
        assert self.tar is not None
        tops = set()
        for member in self.tar.getmembers():
            parts = PurePosixPath(member.name).parts
            if not parts or member.name.startswith("/") or ".." in parts:
                raise Refused(f"unsafe path in the archive: {member.name!r}")
            tops.add(parts[0])
            if member.isdir() and len(parts) >= 1:
                continue
            if not member.isfile():
                raise Refused(f"{member.name} is not a plain file (a link or a device)")
            if len(parts) > 1:
                yield Entry("/".join(parts[1:]), member.size, member)
        if len(tops) != 1:
            raise Refused(f"the archive must hold one top folder, not {sorted(tops)}")

    def _folder_entries(self) -> Iterator[Entry]:
        """Regular files under the folder."""
        if not self.path.is_dir():
            raise Refused(f"no bundle at {self.path}")
        for folder, dirs, files in os.walk(self.path):
            for name in dirs + files:
                full = Path(folder) / name
                mode = full.lstat().st_mode
                if stat.S_ISLNK(mode) or not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                    raise Refused(f"{full} is not a plain file or folder (a link?)")
                if stat.S_ISREG(mode):
                    relative = full.relative_to(self.path).as_posix()
                    yield Entry(relative, full.stat().st_size, full)

    def open(self, entry: Entry) -> IO[bytes]:
        """A binary reader of one entry."""
        if self.tar is not None:
            reader = self.tar.extractfile(entry.handle)
            assert reader is not None
            return reader
        return open(entry.handle, "rb")

    def read_small(self, name: str) -> bytes:
        """The whole content of one of the small unsigned files."""
        entry = self.entries.get(name)
        if entry is None:
            raise Refused(f"the bundle has no {name}: it is not a signed Kernel Studio bundle")
        if entry.size > SMALL_LIMIT:
            raise Refused(f"{name} is {entry.size} bytes: far too large")
        with self.open(entry) as reader:
            return reader.read()


def _hex_file(data: bytes, name: str, length: int) -> bytes:
    """A file holding `length` bytes as hex text."""
    try:
        value = bytes.fromhex(data.decode("ascii").strip())
    except ValueError:
        raise Refused(f"{name} is not hex text") from None
    if len(value) != length:
        raise Refused(f"{name} holds {len(value)} bytes, not {length}")
    return value


def check_signature(source: Source) -> tuple[dict[str, Any], bytes]:
    """The manifest, once its signature under the bundle's key is valid; and that key."""
    raw = source.read_small(MANIFEST)
    key = _hex_file(source.read_small(PUBLIC_KEY), PUBLIC_KEY, 32)
    signature = _hex_file(source.read_small(SIGNATURE), SIGNATURE, 64)
    if not ed25519_verify.verify(key, raw, signature):
        raise Refused("the signature of manifest.json does not match: the manifest was "
                      "changed after signing, or signed with another key")
    manifest: dict[str, Any] = json.loads(raw)
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise Refused(f"not a {FORMAT} version {VERSION} manifest")
    return manifest, key


def check_key(key: bytes, expected: str | None, trusted_key: Path | None) -> None:
    """The key must be the one the administrator confirmed, or the installed one."""
    if trusted_key is not None:
        known = _hex_file(trusted_key.read_bytes(), str(trusted_key), 32)
        if known != key and expected is None:
            raise Refused(f"the bundle is signed by key {fingerprint(key)}, not by the key of "
                          f"the installed version ({fingerprint(known)}); if the new key is "
                          "right, pass its fingerprint with --fingerprint")
        if known == key:
            return
    if expected is None:
        raise Unconfirmed(fingerprint(key))
    if normalized(expected) != normalized(fingerprint(key)):
        raise Refused(f"the bundle is signed by key {fingerprint(key)}, not by the key with "
                      f"fingerprint {expected}: do not install it")


def _glibc() -> tuple[int, ...]:
    """This machine's glibc version, or (0,) when it has none (musl, say)."""
    text = os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else None
    match = re.search(r"(\d+)\.(\d+)", text or "")
    return (int(match[1]), int(match[2])) if match else (0,)


def check_target(manifest: dict[str, Any]) -> None:
    """This machine runs what the bundle was built for: Python version, CPU, glibc floor."""
    python = ".".join(map(str, sys.version_info[:2]))
    if manifest["python"] != python:
        raise Refused(f"the bundle is for Python {manifest['python']}; this machine's "
                      f"{sys.executable} is Python {python}")
    if manifest["machine"] != platform.machine():
        raise Refused(f"the bundle is for {manifest['machine']}, this machine is "
                      f"{platform.machine()}")
    floor = tuple(int(p) for p in manifest["glibc_floor"].split("."))
    if _glibc() < floor:
        raise Refused(f"the bundle needs glibc {manifest['glibc_floor']} or newer (PySide6 "
                      f"does); this machine has {'.'.join(map(str, _glibc()))}")


def check_listing(source: Source, manifest: dict[str, Any]) -> None:
    """Every file is listed in the manifest and every listed file is there."""
    listed = manifest["files"]
    extra = sorted(set(source.entries) - set(listed) - set(UNSIGNED))
    if extra:
        raise Refused(f"files not listed in the signed manifest: {', '.join(extra)}")
    absent = sorted(set(listed) - set(source.entries))
    if absent:
        raise Refused(f"files listed in the manifest are missing: {', '.join(absent)}")


def _copy_one(source: Source, entry: Entry, target: Path) -> str:
    """Copy one entry, returning the SHA-256 of the bytes copied."""
    digest = hashlib.sha256()
    target.parent.mkdir(parents=True, exist_ok=True)
    with source.open(entry) as reader, open(target, "wb") as writer:
        while chunk := reader.read(CHUNK):
            digest.update(chunk)
            writer.write(chunk)
    return digest.hexdigest()


def copy_checked(source: Source, manifest: dict[str, Any], into: Path) -> int:
    """Copy every file into `into`, refusing at the first whose size or hash differs."""
    for name in sorted(source.entries):
        entry = source.entries[name]
        listed = manifest["files"].get(name)
        sha256 = _copy_one(source, entry, into / name)
        if listed is not None and (listed["sha256"] != sha256 or listed["size"] != entry.size):
            raise Refused(f"{name} differs from the signed manifest (SHA-256 {sha256}, "
                          f"expected {listed['sha256']}): the bundle was changed")
    return len(manifest["files"])


def verify(bundle: Path, into: Path, expected: str | None, trusted: Path | None) -> str:
    """Every check, then the copy; a line saying what was checked."""
    source = Source(bundle)
    manifest, key = check_signature(source)
    check_key(key, expected, trusted)
    check_target(manifest)
    check_listing(source, manifest)
    if into.exists() and any(into.iterdir()):
        raise Refused(f"{into} is not empty")
    count = copy_checked(source, manifest, into)
    return f"bundle {manifest['name']}: {count} files checked, signed by key {fingerprint(key)}"


def _arguments(argv: list[str]) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--into", type=Path, help="an empty folder for the checked copy")
    parser.add_argument("--fingerprint", help="the signing key's fingerprint you were given")
    parser.add_argument("--trusted-key", type=Path, help="signing-key.pub of the installed "
                        "version (an upgrade must come from the same key unless --fingerprint)")
    parser.add_argument("--print-fingerprint", action="store_true",
                        help="check the signature only and print the key's fingerprint")
    args = parser.parse_args(argv)
    if not args.print_fingerprint and args.into is None:
        parser.error("--into DIR is needed (or --print-fingerprint)")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the checks and say what came of them."""
    args = _arguments(sys.argv[1:] if argv is None else argv)
    try:
        if args.print_fingerprint:
            print(fingerprint(check_signature(Source(args.bundle))[1]))
            return 0
        print(verify(args.bundle, args.into, args.fingerprint, args.trusted_key))
        return 0
    except Unconfirmed as key:
        print(f"the bundle is signed by the key with fingerprint\n    {key}\ncompare it with the "
              "fingerprint its builder gave you (over another channel), then pass it with "
              "--fingerprint", file=sys.stderr)
        return 4
    except (Refused, OSError, tarfile.TarError, KeyError, ValueError) as error:
        if args.into is not None and args.into.exists():
            shutil.rmtree(args.into, ignore_errors=True)
        print(f"refused: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
