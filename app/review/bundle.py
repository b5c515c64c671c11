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
import shutil
import stat
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from app import __version__
from app.base import codec
from app.base.plaintext import printable
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
# A name part: the usual characters, a space only between others (never leading or trailing:
# "x.py " and "x.py" would look the same to a reviewer).
_SAFE_PART = re.compile(r"[A-Za-z0-9._+@=,-](?:[A-Za-z0-9 ._+@=,-]*[A-Za-z0-9._+@=,-])?")
# What the maker may write in claims.json and the manifest's note, at most.
MAX_NOTE = 10_000
MAX_CLAIM_NAME = 200
MAX_CLAIMS = 64
MAX_CASES = 100
MAX_SEEDS = 1000
MAX_CASE_KEY = 64
# Every character that can steer a terminal: C0 controls, DEL and the C1 controls.
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_COMPRESSIONS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)


class BundleError(Exception):
    """A bundle that is not one, or is damaged, tampered with or unsafe; the message says which
    and what to do."""


@dataclass(frozen=True)
class FileSum:
    """A member's entry in the manifest: its SHA-256 and size."""

    sha256: str
    size: int


@dataclass(frozen=True, kw_only=True)
class Manifest:
    """manifest.json: what made the bundle, the maker's note and environment, the members that
    are specs, and every member's sum (written in this order, field by field)."""

    format: int
    kind: str
    version: str = ""
    created: str = ""
    note: str = ""
    environment: dict[str, Any] = field(default_factory=dict)
    specs: list[str]
    files: dict[str, FileSum]


@dataclass(frozen=True, kw_only=True)
class Signature:
    """manifest.sig: the maker's key (its id and public half in PEM) and its Ed25519 signature
    of manifest.json's bytes, in base64."""

    key_id: str = ""  # none given: another key than the one held, as any wrong id
    public_key: str
    signature: str


@dataclass(frozen=True, kw_only=True)
class Claim:
    """One result the maker claims for one of the bundle's specs. compile, verdict and timing
    are kept as the maker wrote them: they are the maker's words, set beside what is obtained
    here as text (a claimed status nobody knows is a difference, not a refusal), so they are
    not decoded into the records that obtain them."""

    spec: str
    name: str | None = None  # None: the spec's member name
    source: str = ""
    source_text: str = ""
    compile: dict[str, Any] = field(default_factory=dict)
    verdict: dict[str, Any] = field(default_factory=dict)
    timing: dict[str, Any] = field(default_factory=dict)
    cases: list[dict[str, int | float]] | None = None
    seeds: int | None = None

    @property
    def title(self) -> str:
        """The claim's name, or its spec's member name when it gives none."""
        return self.spec if self.name is None else self.name


@dataclass(frozen=True, kw_only=True)
class Claims:
    """claims.json: each spec's claimed results and the environment they were obtained in."""

    results: list[Claim] | None = None
    environment: dict[str, Any] = field(default_factory=dict)


@dataclass
class Bundle:
    """A checked bundle held in memory: its manifest, its members' bytes and its digest (the
    SHA-256 of manifest.json, which names the whole bundle)."""

    path: Path
    manifest: Manifest
    members: dict[str, bytes]
    digest: str
    signer: str = ""  # the key id of a good signature, '' when unsigned
    claims: Claims = field(default_factory=Claims)

    @property
    def spec_members(self) -> list[str]:
        """The member names of the bundled specs, in order."""
        return list(self.manifest.specs)

    @property
    def note(self) -> str:
        """The maker's note."""
        return self.manifest.note


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
                 environment: dict[str, Any]) -> Manifest:
    """The manifest of these members."""
    return Manifest(format=FORMAT, kind=KIND, version=__version__,
                    created=time.strftime("%Y-%m-%dT%H:%M:%S%z"), note=note,
                    environment=environment, specs=specs,
                    files={name: FileSum(sha256(data), len(data))
                           for name, data in sorted(members.items())})


def manifest_bytes(manifest: Manifest) -> bytes:
    """manifest.json's bytes (the digest that names the bundle is taken over them)."""
    return codec.dumps(manifest, indent=1).encode()


def claims_bytes(claims: Claims) -> bytes:
    """claims.json's bytes."""
    return codec.dumps(claims, indent=1).encode()


def _signature(manifest_bytes: bytes) -> bytes | None:
    """manifest.sig's bytes when a local signing key exists."""
    key = audit.load_private_key()
    if key is None:
        return None
    public = key.public_key()
    signature = Signature(key_id=audit.key_id(public),
                          public_key=audit.public_pem(public).decode(),
                          signature=base64.b64encode(key.sign(manifest_bytes)).decode())
    return codec.dumps(signature, indent=1).encode()


def _plain(name: str) -> zipfile.ZipInfo:
    """A member entry for a plain, read-write file."""
    info = zipfile.ZipInfo(name, date_time=time.localtime()[:6])
    info.external_attr = (stat.S_IFREG | 0o644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def write_bundle(path: Path, members: dict[str, bytes], specs: list[str], note: str,
                 environment: dict[str, Any]) -> str:
    """Write the bundle (atomically: a temporary file renamed into place); returns its digest."""
    manifest = manifest_bytes(manifest_for(members, specs, note, environment))
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
    if info.flag_bits & 0x1:
        return f"member {info.filename!r} is encrypted: a bundle never is"
    if info.compress_type not in _COMPRESSIONS:
        return (f"member {info.filename!r} uses compression method {info.compress_type}; "
                "bundles are stored or deflated only")
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
            raise BundleError(printable(problem))
    folders = {"/".join(n.split("/")[:i]) for n in names for i in range(1, n.count("/") + 1)}
    both = sorted(folders & set(names))
    if both:
        raise BundleError(f"member {both[0]!r} is both a file and a folder of other members: "
                          "it was tampered with")
    folded = [n.casefold() for n in names + sorted(folders)]
    if len(set(folded)) != len(folded):
        raise BundleError("the bundle holds two members whose names differ only in case: "
                          "they would overwrite each other on some systems")
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


def _decode_problem(error: codec.CodecError, what: str) -> tuple[str, str]:
    """A codec error's field path (`results[0].seeds`) and its words, `what` taken off."""
    text = str(error).removeprefix(f"{what}: ")
    path, _, reason = text.partition(": ")
    return path, reason


def _field_at(path: str) -> str:
    """The first field a path names (`files[...]` -> files)."""
    found = re.match(r"[A-Za-z_]+", path)
    return found.group(0) if found else ""


def _damaged(error: codec.CodecError) -> BundleError:
    """The words of a codec error as a refusal (escaped: the values shown are the maker's)."""
    return BundleError(f"{printable(error, 300)}: the bundle is damaged; refused")


def _manifest(data: bytes) -> Manifest:
    """The decoded manifest (BundleError when it is not one)."""
    try:
        raw = json.loads(data)
    except (ValueError, RecursionError):  # deep nesting exhausts the JSON reader's stack
        raise BundleError("manifest.json is not JSON: the bundle is damaged") from None
    if not isinstance(raw, dict) or raw.get("kind") != KIND:
        raise BundleError("manifest.json is not a Kernel Studio bundle manifest")
    if raw.get("format") != FORMAT:
        shown = printable(repr(raw.get("format")), 40)
        raise BundleError(f"bundle format {shown} is not one this version reads ({FORMAT})")
    if not isinstance(raw.get("files"), dict) or not isinstance(raw.get("specs"), list):
        raise BundleError("manifest.json lacks its list of files or specs")
    try:
        return codec.from_data(Manifest, raw, MANIFEST)
    except codec.CodecError as error:
        raise _manifest_refusal(error, raw) from None


def _manifest_refusal(error: codec.CodecError, raw: dict[str, Any]) -> BundleError:
    """A manifest that does not decode, in the words the checks of its fields use."""
    name = _field_at(_decode_problem(error, MANIFEST)[0])
    if name == "files":
        bad = next((n for n, e in raw["files"].items() if not _is_sum(e)), None)
        if bad is not None:
            return BundleError(f"{printable(bad, 200)} does not match its SHA-256 in the "
                               "manifest: the bundle was changed after it was made; refused")
    if name == "specs":
        bad = next((s for s in raw["specs"] if not isinstance(s, str)), None)
        if bad is not None:
            return BundleError(f"the manifest names a spec {printable(repr(bad), 80)} that "
                               "the bundle does not hold")
    if name == "note":
        return BundleError(f"the manifest's note must be text of at most {MAX_NOTE} characters")
    return _damaged(error)


def _is_sum(entry: Any) -> bool:
    """Whether a raw files entry decodes as a FileSum."""
    try:
        codec.from_data(FileSum, entry, "entry")
    except codec.CodecError:
        return False
    return True


def _check_sums(manifest: Manifest, members: dict[str, bytes]) -> None:
    """Every member listed with its sum, and nothing else (BundleError naming the first)."""
    listed = manifest.files
    present = set(members) - {MANIFEST, SIGNATURE}
    extra, missing = sorted(present - set(listed)), sorted(set(listed) - present)
    if extra:
        raise BundleError(f"{extra[0]} is in the bundle but not in its manifest: it was added "
                          "after the bundle was made; refused")
    if missing:
        raise BundleError(f"{missing[0]} is in the manifest but missing from the bundle: refused")
    for name in sorted(listed):
        if sha256(members[name]) != listed[name].sha256:
            raise BundleError(f"{name} does not match its SHA-256 in the manifest: the bundle "
                              "was changed after it was made; refused")
    for spec in manifest.specs:
        if spec not in listed:
            raise BundleError(f"the manifest names a spec {printable(repr(spec), 80)} that the "
                              "bundle does not hold")


def _signer(members: dict[str, bytes]) -> str:
    """The key id of the manifest's signature ('' when unsigned; BundleError when it is bad)."""
    if SIGNATURE not in members:
        return ""
    try:
        data = codec.loads(Signature, members[SIGNATURE], SIGNATURE)
        public = serialization.load_pem_public_key(data.public_key.encode())
        if not isinstance(public, Ed25519PublicKey):
            raise TypeError("not Ed25519")
        public.verify(base64.b64decode(data.signature), members[MANIFEST])
    except (ValueError, TypeError, InvalidSignature):  # codec.CodecError is a ValueError
        raise BundleError("manifest.sig is not a good signature of the manifest: the bundle "
                          "was changed after it was signed; refused") from None
    found = audit.key_id(public)
    if data.key_id != found:
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
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, RuntimeError,
                NotImplementedError) as error:
            raise BundleError(f"{path.name} is damaged or truncated "
                              f"({printable(error, 200)})") from None
    manifest = _manifest(members[MANIFEST])
    _check_sums(manifest, members)
    signer = _signer(members)
    claims = _claims(members.get(CLAIMS), manifest)
    return Bundle(path, manifest, members, sha256(members[MANIFEST]), signer, claims)


def _claims(data: bytes | None, manifest: Manifest) -> Claims:
    """claims.json decoded and checked (an empty Claims when the bundle has none)."""
    if data is None:
        return Claims()
    try:
        raw = json.loads(data)
    except (ValueError, RecursionError):
        raise BundleError("claims.json is not JSON: the bundle is damaged") from None
    if not isinstance(raw, dict):
        raise BundleError("claims.json is not a table of claims: the bundle is damaged")
    results = raw.get("results")
    if results is not None and (not isinstance(results, list) or len(results) > MAX_CLAIMS):
        raise BundleError(f"claims.json: results must be a list of at most {MAX_CLAIMS} claims")
    try:
        claims = codec.from_data(Claims, raw, CLAIMS)
    except codec.CodecError as error:
        raise _claims_refusal(error, raw, manifest) from None
    _check_claims(claims, manifest)
    return claims


def _claims_refusal(error: codec.CodecError, raw: dict[str, Any],
                    manifest: Manifest) -> BundleError:
    """claims.json that does not decode, in the words the checks of its fields use: the field's
    own check run on what the maker wrote (it refuses what the record could not hold)."""
    path = _decode_problem(error, CLAIMS)[0]
    found = re.match(r"results\[(\d+)\]\.?([A-Za-z_]*)", path)
    if found is None:
        if _field_at(path) == "environment":
            return BundleError("claims.json: environment must be a table")
        return _damaged(error)
    index, name = int(found.group(1)), found.group(2)
    where = f"claims.json: result {index + 1}"
    claim = raw["results"][index]
    if not isinstance(claim, dict):
        return BundleError(f"{where} is not a claim (a table)")
    check = _FIELD_CHECKS.get(name)
    try:
        if check is not None:
            check(claim.get(name), where, manifest)
    except BundleError as refusal:
        return refusal
    return _damaged(error)


def _check_spec(spec: Any, where: str, manifest: Manifest) -> None:
    """A claim names one of the bundle's own specs."""
    if not isinstance(spec, str) or spec not in manifest.specs or safe_name(spec):
        raise BundleError(f"{where} names a spec {printable(repr(spec), 80)} that is not one "
                          "of the bundle's own specs (listed in its manifest); refused")


def _check_name(name: Any, where: str, _: Manifest) -> None:
    """A claim's name is bounded text (None: it gives none, and its spec's name is used)."""
    if name is not None and (not isinstance(name, str) or not name
                             or len(name) > MAX_CLAIM_NAME):
        raise BundleError(f"{where} has a name that is not text of 1 to {MAX_CLAIM_NAME} "
                          "characters")


def _check_cases(cases: Any, where: str, _: Manifest) -> None:
    """Claimed cases, when given: 1 to MAX_CASES tables such as a spec gives."""
    if cases is None:
        return
    if not isinstance(cases, list) or not 1 <= len(cases) <= MAX_CASES:
        raise BundleError(f"{where}: cases must be a list of 1 to {MAX_CASES} cases")
    for number, case in enumerate(cases):
        _check_case(case, f"{where}: cases[{number}]")


def _check_case(case: Any, where: str) -> None:
    """One claimed case: a table of size variables to finite numbers, as in a spec."""
    if not isinstance(case, dict) or not case:
        raise BundleError(f"{where} must be a table such as {{ n = 1000 }}")
    for key, number in case.items():
        if len(key) > MAX_CASE_KEY or not _IDENTIFIER.fullmatch(key):
            raise BundleError(f"{where} has a variable {printable(key, 40)!r} that is not a "
                              "name")
        if isinstance(number, bool) or not isinstance(number, int | float) or not (
                abs(number) <= 2 ** 80):  # also false for NaN
            raise BundleError(f"{where}.{key} must be a finite number of sensible size, "
                              f"not {printable(repr(number), 40)}")


def _check_seeds(seeds: Any, where: str, _: Manifest) -> None:
    """Claimed seeds, when given: a whole number a spec could give."""
    if seeds is not None and (isinstance(seeds, bool) or not isinstance(seeds, int)
                              or not 1 <= seeds <= MAX_SEEDS):
        raise BundleError(f"{where}: seeds must be a whole number from 1 to {MAX_SEEDS}, not "
                          f"{printable(repr(seeds), 40)}")


def _table(key: str) -> Callable[[Any, str, Manifest], None]:
    """The check that a claim's `key` is a table."""
    def check(value: Any, where: str, _: Manifest) -> None:
        """BundleError unless `value` is a table (absent: an empty one)."""
        if value is not None and not isinstance(value, dict):
            raise BundleError(f"{where}: {key} must be a table")
    return check


# Each claim field's check, run after decoding and, on what the maker wrote, when it does not
# decode (so that the refusal says what the field must be).
_FIELD_CHECKS: dict[str, Callable[[Any, str, Manifest], None]] = {
    "spec": _check_spec, "name": _check_name, "cases": _check_cases, "seeds": _check_seeds,
    "compile": _table("compile"), "verdict": _table("verdict"), "timing": _table("timing")}


def _check_claim(claim: Claim, index: int, manifest: Manifest) -> None:
    """One decoded claim within its limits (BundleError naming what is wrong)."""
    where = f"claims.json: result {index + 1}"
    for name, check in _FIELD_CHECKS.items():
        check(getattr(claim, name), where, manifest)
    runs = claim.verdict.get("runs", [])
    rows = claim.timing.get("rows", [])
    for key, values in (("verdict.runs", runs), ("timing.rows", rows)):
        if values is not None and (not isinstance(values, list)
                                   or not all(isinstance(v, dict) for v in values)):
            raise BundleError(f"{where}: {key} must be a list of tables")
        for value in values or []:
            if value.get("case") is not None and not isinstance(value.get("case"), dict):
                raise BundleError(f"{where}: each of {key} must give its case as a table")


def _check_claims(claims: Claims, manifest: Manifest) -> None:
    """claims.json and the note checked like a spec's fields, before anything uses them: each
    claim names one of the bundle's own specs, with cases and seeds a spec could give, and
    names and the note are bounded (BundleError otherwise)."""
    if len(manifest.note) > MAX_NOTE:
        raise BundleError(f"the manifest's note must be text of at most {MAX_NOTE} characters")
    for index, claim in enumerate(claims.results or []):
        _check_claim(claim, index, manifest)


def extract(bundle: Bundle, folder: Path) -> Path | None:
    """Write the bundle's files into `folder`, which must be new or empty; nothing is written
    anywhere else (each file is created, never followed through a link), and nothing is left
    when it fails (BundleError). Returns the outermost folder it made (None when `folder`
    existed), for remove_unpacked."""
    try:
        if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
            raise BundleError(f"{folder} is not an empty folder: choose a new one to unpack "
                              "into")
        made = _first_missing(folder)
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BundleError(f"cannot unpack into {folder}: {error.strerror or error}; choose a "
                          "new folder in one you can write to") from None
    try:
        _write_members(bundle, folder)
    except BaseException as error:
        remove_unpacked(folder, made)
        if isinstance(error, OSError):
            raise BundleError(f"cannot unpack into {folder}: {error.strerror or error}; "
                              "nothing was left there") from None
        raise
    return made


def _first_missing(folder: Path) -> Path | None:
    """The outermost folder that unpacking into `folder` would create (None when it exists)."""
    missing = None
    for candidate in [folder, *folder.parents]:
        if candidate.exists() or candidate.is_symlink():
            break
        missing = candidate
    return missing


def remove_unpacked(folder: Path, made: Path | None) -> None:
    """Undo an unpack (extract's return value as `made`): the folders it made, or the contents
    of the empty folder it was given."""
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)
        return
    for child in folder.iterdir() if folder.is_dir() else []:
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


def _write_members(bundle: Bundle, folder: Path) -> None:
    """Each member created anew under `folder`, never through a link."""
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
