"""Review bundles (.ksb): one zip file holding kernels, specs, references and local headers,
the verdicts and timings obtained where it was made, that machine's environment, and a
manifest of SHA-256 sums (optionally signed with the maker's Ed25519 key).

Reading a bundle checks everything before any of it is used: that it is a complete zip, that
every member is a plain file with a safe relative name (no absolute paths, no `..`, no links,
no devices), that sizes and compression ratios are sane (no zip bombs), that the manifest lists
exactly the members there are, and that every member has the sum the manifest gives. A bundle
that fails any of these is refused with a BundleError naming the problem; nothing is written.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import stat
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from app import __version__
from app.review import audit

FORMAT = 1
KIND = "kernel-studio-bundle"
MANIFEST = "manifest.json"
SIGNATURE = "manifest.sig"
CLAIMS = "claims.json"
SPECS_FOLDER = "specs"
MAX_MEMBERS = 2000
MAX_MEMBER_BYTES = 64 << 20
MAX_TOTAL_BYTES = 256 << 20
MAX_RATIO = 200  # uncompressed over compressed size of one member
MAX_NAME = 240
_SAFE_PART = re.compile(r"[A-Za-z0-9._+@=,-][A-Za-z0-9 ._+@=,-]*")


class BundleError(Exception):
    """A bundle that is not one, or is damaged, tampered with or unsafe; the message says which
    and what to do."""


@dataclass
class Bundle:
    """A checked bundle held in memory: its manifest, its members' bytes and its digest (the
    SHA-256 of manifest.json, which names the whole bundle)."""

    path: Path
    manifest: dict[str, Any]
    members: dict[str, bytes]
    digest: str
    signer: str = ""  # the key id of a good signature, '' when unsigned
    claims: dict[str, Any] = field(default_factory=dict)

    @property
    def spec_members(self) -> list[str]:
        """The member names of the bundled specs, in order."""
        return [str(s) for s in self.manifest.get("specs", [])]

    @property
    def note(self) -> str:
        """The maker's note."""
        return str(self.manifest.get("note", ""))


def sha256(data: bytes) -> str:
    """Hex SHA-256."""
    return hashlib.sha256(data).hexdigest()


def safe_name(name: str) -> str | None:
    """Why a member name is unsafe, or None: relative, forward slashes, no empty, '.' or '..'
    parts, printable characters of the usual kinds, not too long."""
    if not name or len(name) > MAX_NAME:
        return "an empty or overlong name"
    if name.startswith("/") or "\\" in name or ":" in name:
        return "an absolute or foreign path"
    parts = PurePosixPath(name).parts
    if any(p in (".", "..") for p in name.split("/")) or "" in name.split("/"):
        return "a path that climbs out of the bundle"
    if not all(_SAFE_PART.fullmatch(p) for p in parts):
        return "characters that a file name here should not have"
    return None


# -- writing ------------------------------------------------------------------------------------


def manifest_for(members: dict[str, bytes], specs: list[str], note: str,
                 environment: dict[str, Any]) -> dict[str, Any]:
    """The manifest of these members."""
    return {"format": FORMAT, "kind": KIND, "version": __version__,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "note": note,
            "environment": environment, "specs": specs,
            "files": {name: {"sha256": sha256(data), "size": len(data)}
                      for name, data in sorted(members.items())}}


def _signature(manifest_bytes: bytes) -> bytes | None:
    """manifest.sig's bytes when a local signing key exists."""
    key = audit.load_private_key()
    if key is None:
        return None
    public = key.public_key()
    return json.dumps({"key_id": audit.key_id(public),
                       "public_key": audit.public_pem(public).decode(),
                       "signature": base64.b64encode(key.sign(manifest_bytes)).decode()},
                      indent=1).encode()


def _plain(name: str) -> zipfile.ZipInfo:
    """A member entry for a plain, read-write file."""
    info = zipfile.ZipInfo(name, date_time=time.localtime()[:6])
    info.external_attr = (stat.S_IFREG | 0o644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def write_bundle(path: Path, members: dict[str, bytes], specs: list[str], note: str,
                 environment: dict[str, Any]) -> str:
    """Write the bundle (atomically: a temporary file renamed into place); returns its digest."""
    manifest = json.dumps(manifest_for(members, specs, note, environment), indent=1).encode()
    signature = _signature(manifest)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with zipfile.ZipFile(temporary, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(_plain(MANIFEST), manifest)
            if signature is not None:
                archive.writestr(_plain(SIGNATURE), signature)
            for name, data in sorted(members.items()):
                archive.writestr(_plain(name), data)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return sha256(manifest)


# -- reading ------------------------------------------------------------------------------------


def _member_problem(info: zipfile.ZipInfo) -> str | None:
    """Why one member may not be read, or None."""
    problem = safe_name(info.filename)
    if problem:
        return f"member {info.filename!r} has {problem}"
    kind = stat.S_IFMT(info.external_attr >> 16)  # 0 where the maker recorded no file type
    if info.is_dir() or (kind and kind != stat.S_IFREG):
        return f"member {info.filename!r} is not a plain file (a link, a folder or a device)"
    if info.file_size > MAX_MEMBER_BYTES:
        return f"member {info.filename!r} is larger than {MAX_MEMBER_BYTES >> 20} MiB"
    if info.file_size > 4096 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
        return f"member {info.filename!r} expands {info.file_size // max(info.compress_size, 1)}" \
               " times: a zip bomb, refused"
    return None


def _check_members(infos: list[zipfile.ZipInfo]) -> None:
    """Counts, names, kinds, sizes and duplicates (BundleError at the first problem)."""
    if len(infos) > MAX_MEMBERS:
        raise BundleError(f"the bundle has {len(infos)} members; at most {MAX_MEMBERS} are read")
    names = [i.filename for i in infos]
    if len(set(names)) != len(names):
        raise BundleError("the bundle holds two members of the same name: it was tampered with")
    for info in infos:
        problem = _member_problem(info)
        if problem:
            raise BundleError(problem)
    if sum(i.file_size for i in infos) > MAX_TOTAL_BYTES:
        raise BundleError(f"the bundle expands to more than {MAX_TOTAL_BYTES >> 20} MiB")


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes, never more than its declared size (a lying header cannot make it
    expand further)."""
    with archive.open(info) as handle:
        data = handle.read(info.file_size + 1)
    if len(data) != info.file_size:
        raise BundleError(f"member {info.filename!r} is not the size its header gives")
    return data


def _open_zip(path: Path) -> tuple[zipfile.ZipFile, list[zipfile.ZipInfo]]:
    """The archive and its members (BundleError when it is not a complete zip file)."""
    if not path.is_file():
        raise BundleError(f"{path} does not exist or is not a file")
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError) as error:
        raise BundleError(f"{path.name} is not a review bundle, or it is truncated ({error}); "
                          "ask for the .ksb file again") from None
    return archive, archive.infolist()


def _manifest(data: bytes) -> dict[str, Any]:
    """The parsed manifest (BundleError when it is not one)."""
    try:
        manifest = json.loads(data)
    except ValueError:
        raise BundleError("manifest.json is not JSON: the bundle is damaged") from None
    if not isinstance(manifest, dict) or manifest.get("kind") != KIND:
        raise BundleError("manifest.json is not a Kernel Studio bundle manifest")
    if manifest.get("format") != FORMAT:
        raise BundleError(f"bundle format {manifest.get('format')!r} is not one this version "
                          f"reads ({FORMAT})")
    if not isinstance(manifest.get("files"), dict) or not isinstance(manifest.get("specs"), list):
        raise BundleError("manifest.json lacks its list of files or specs")
    return manifest


def _check_sums(manifest: dict[str, Any], members: dict[str, bytes]) -> None:
    """Every member listed with its sum, and nothing else (BundleError naming the first)."""
    listed: dict[str, Any] = manifest["files"]
    present = set(members) - {MANIFEST, SIGNATURE}
    extra, missing = sorted(present - set(listed)), sorted(set(listed) - present)
    if extra:
        raise BundleError(f"{extra[0]} is in the bundle but not in its manifest: it was added "
                          "after the bundle was made; refused")
    if missing:
        raise BundleError(f"{missing[0]} is in the manifest but missing from the bundle: refused")
    for name in sorted(listed):
        entry = listed[name]
        if not isinstance(entry, dict) or sha256(members[name]) != entry.get("sha256"):
            raise BundleError(f"{name} does not match its SHA-256 in the manifest: the bundle "
                              "was changed after it was made; refused")
    for spec in manifest["specs"]:
        if not isinstance(spec, str) or spec not in listed:
            raise BundleError(f"the manifest names a spec {spec!r} that the bundle does not hold")


def _signer(members: dict[str, bytes]) -> str:
    """The key id of the manifest's signature ('' when unsigned; BundleError when it is bad)."""
    if SIGNATURE not in members:
        return ""
    try:
        data = json.loads(members[SIGNATURE])
        public = serialization.load_pem_public_key(str(data["public_key"]).encode())
        if not isinstance(public, Ed25519PublicKey):
            raise TypeError("not Ed25519")
        public.verify(base64.b64decode(str(data["signature"])), members[MANIFEST])
    except (ValueError, KeyError, TypeError, InvalidSignature):
        raise BundleError("manifest.sig is not a good signature of the manifest: the bundle "
                          "was changed after it was signed; refused") from None
    found = audit.key_id(public)
    if data.get("key_id") != found:
        raise BundleError("manifest.sig names another key than the one it holds; refused")
    return found


def open_bundle(path: Path) -> Bundle:
    """Read and check a bundle (BundleError when it is not a complete, untouched, safe one)."""
    archive, infos = _open_zip(path)
    with archive:
        _check_members(infos)
        if MANIFEST not in {i.filename for i in infos}:
            raise BundleError(f"{path.name} has no manifest.json: it is not a review bundle")
        try:
            members = {i.filename: _read_member(archive, i) for i in infos}
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as error:
            raise BundleError(f"{path.name} is damaged or truncated ({error})") from None
    manifest = _manifest(members[MANIFEST])
    _check_sums(manifest, members)
    signer = _signer(members)
    try:
        claims = json.loads(members[CLAIMS]) if CLAIMS in members else {}
    except ValueError:
        raise BundleError("claims.json is not JSON: the bundle is damaged") from None
    return Bundle(path, manifest, members, sha256(members[MANIFEST]), signer,
                  claims if isinstance(claims, dict) else {})


def extract(bundle: Bundle, folder: Path) -> None:
    """Write the bundle's files into `folder`, which must be new or empty; nothing is written
    anywhere else (each file is created, never followed through a link)."""
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise BundleError(f"{folder} is not an empty folder: choose a new one to unpack into")
    folder.mkdir(parents=True, exist_ok=True)
    root = folder.resolve()
    for name, data in bundle.members.items():
        target = root.joinpath(*PurePosixPath(name).parts)
        if not target.resolve().is_relative_to(root):
            raise BundleError(f"member {name!r} would land outside {folder}; refused")
        target.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        descriptor = os.open(target, flags, 0o644)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
