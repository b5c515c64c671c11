"""Saving a spec into its existing file without losing the file's comments and layout.

`spec_to_toml` writes the canonical layout and knows nothing of comments; templates are
commented for learners, and a user's own notes matter as much. `update_spec_text` instead edits
the original text with tomlkit (a style-preserving TOML parser): only values that differ from
what the file already says are rewritten, each keeping its trailing comment; everything else
(comments, blank lines, number formatting such as 1_000_003, omitted defaults) stays as it was.

A save edits only what the spec model owns (OWNED): a table or key it does not know, such as a
task's `[task]` table or a note a user keeps in the file, is left exactly where it was.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import AoT, Table
from tomlkit.toml_document import TOMLDocument

from app.base.fsutil import atomic_write_text
from app.spec.model import Spec, SpecError, parse_spec_data, parse_spec_text
from app.spec.writing import spec_to_toml

SECTIONS = ("kernel", "reference", "verify", "bench")  # [launch] / [[launch]]: _sync_launches
# The keys each table of the spec model holds (app.spec.model reads these): a save may rewrite, add
# or
# drop only these; every other key or table in the file is kept as the file has it.
OWNED: dict[str, frozenset[str]] = {
    "kernel": frozenset({"source", "entry", "options", "compiler"}),
    "launch": frozenset({"entry", "args", "grid", "block", "shared_bytes"}),
    "reference": frozenset({"python"}),
    "verify": frozenset({"cases", "seeds", "rtol", "atol"}),
    "bench": frozenset({"case", "bytes", "flops"}),
    "arg": frozenset({"name", "kind", "dtype", "shape", "init", "value"}),
}


def _canonical(text: str, spec: Spec) -> dict[str, Any] | None:
    """What `text` means, in the canonical layout's plain data (defaults spelled out), or None
    when it is not a valid spec. Comparing canonical data keeps a value the file leaves to its
    default (or writes as 1_000) from counting as changed."""
    try:
        old = parse_spec_text(text, spec.base_dir, spec.path, check_files=False)
    except SpecError:
        return None
    return tomllib.loads(spec_to_toml(old))


def _plain(value: Any) -> Any:
    """A tomlkit value as plain Python data (plain data passes through)."""
    return value.unwrap() if hasattr(value, "unwrap") else value


def _sync_table(table: Table, before: Mapping[str, Any] | None, after: Table,
                owned: frozenset[str]) -> None:
    """Rewrite the keys of `table` whose meaning changed from `before` to `after`; add new keys
    and drop `owned` keys the spec no longer has (a key the spec model does not own stays).
    tomlkit keeps a replaced value's trailing comment."""
    for key, item in after.items():
        known = before is not None and key in before
        if not known or _plain(before[key]) != _plain(item):  # type: ignore[index]
            table[key] = item
    for key in [k for k in table if k in owned and k not in after
                and (before is None or key in before)]:
        # Only a key the spec had and no longer has goes; one the canonical layout leaves out
        # (a version 2 spec's default [kernel].entry) means what it meant and stays.
        del table[key]


def _ends_with_blank_line(table: Table) -> Table:
    """A table followed by an empty line, like the rest of a spec file."""
    if not table.as_string().endswith("\n\n"):
        table.add(tomlkit.nl())
    return table


def _sync_args(doc: TOMLDocument, before: list[dict[str, Any]] | None, after: AoT) -> None:
    """Update [[arg]] tables in place when the arguments keep their names and order; otherwise
    reorder them by name, so each kept argument keeps its own comments."""
    current = doc.get("arg")
    if not isinstance(current, AoT):
        doc["arg"] = after
        return
    old_tables = list(current)
    new_names = [str(table["name"]) for table in after]
    old_names = [str(table.get("name", "")) for table in old_tables]
    baseline = before if before is not None and len(before) == len(old_tables) else None
    if old_names == new_names:
        for index, table in enumerate(old_tables):
            _sync_table(table, baseline[index] if baseline else None, after[index],
                        OWNED["arg"])
        return
    by_name = {name: (table, baseline[i] if baseline else None)
               for i, (name, table) in enumerate(zip(old_names, old_tables, strict=True))}
    ordered = []
    for new_table in after:
        old, old_data = by_name.get(str(new_table["name"]), (None, None))
        if old is None:
            ordered.append(_ends_with_blank_line(new_table))
        else:
            _sync_table(old, old_data, new_table, OWNED["arg"])
            ordered.append(_ends_with_blank_line(old))
    while len(current):
        del current[0]
    for table in ordered:
        current.append(table)


def _sync_section(doc: TOMLDocument, name: str, before: Any, after: Any) -> None:
    """One top-level table: updated in place, appended when new, removed when gone."""
    current = doc.get(name)
    if after is None:
        if name in doc:
            del doc[name]
    elif not isinstance(current, Table):
        doc[name] = after
    else:
        owned = OWNED[name]
        if name == "kernel" and isinstance(doc.get("launch"), AoT):
            # [kernel].entry of a version 2 spec is the default of the [[launch]] tables that
            # name none: kept as the file has it (the canonical layout writes each launch's).
            owned = owned - {"entry"}
        _sync_table(current, before, after, owned)


def _entry_of(table: Mapping[str, Any], canonical: Mapping[str, Any] | None) -> str:
    """The entry a [[launch]] table runs, as the canonical layout spells it when known."""
    return str((canonical or table).get("entry", ""))


def _sync_launches(doc: TOMLDocument, before: Any, after: Any) -> None:
    """[launch] or [[launch]]: edited in place when the file already has the same form; a
    [[launch]] list keeps each launch's own table (and its comments), matched by entry in
    order, through reordering, added and removed launches. A change of form (a version 1
    spec given a second launch) writes the new form in the old one's place."""
    current = doc.get("launch")
    if isinstance(after, Table) and isinstance(current, Table):
        _sync_section(doc, "launch", before if isinstance(before, dict) else None, after)
        return
    if not (isinstance(after, AoT) and isinstance(current, AoT)):
        if after is None:
            doc.pop("launch", None)
        else:
            doc["launch"] = after
        return
    old_tables = list(current)
    baseline = before if isinstance(before, list) and len(before) == len(old_tables) else None
    unused = list(range(len(old_tables)))
    ordered = []
    for new_table in after:
        entry = str(new_table.get("entry", ""))
        index = next((i for i in unused if _entry_of(old_tables[i],
                                                     baseline[i] if baseline else None) == entry),
                     None)
        if index is None:
            ordered.append(_ends_with_blank_line(new_table))
            continue
        unused.remove(index)
        _sync_table(old_tables[index], baseline[index] if baseline else None, new_table,
                    OWNED["launch"])
        ordered.append(old_tables[index])
    if ordered == old_tables:
        return
    while len(current):
        del current[0]
    for table in ordered:
        current.append(_ends_with_blank_line(table))


def update_spec_text(original_text: str, spec: Spec) -> str:
    """The spec file's text with `spec`'s values, keeping the original's comments and layout.

    Only values whose meaning changed are rewritten (in the canonical spelling); the result
    always reads back as `spec` (parse_spec_text(result) == spec). Text that is not TOML at all
    has no layout worth keeping: the canonical text is returned then.
    """
    canonical_text = spec_to_toml(spec)
    try:
        doc = tomlkit.parse(original_text)
    except TOMLKitError:
        return canonical_text
    target = tomlkit.parse(canonical_text)
    before = _canonical(original_text, spec)
    if before is None:  # not a valid spec: compare with what the file literally says
        before = doc.unwrap()
    for name in SECTIONS:
        section = before.get(name)
        _sync_section(doc, name, section if isinstance(section, dict | list) else None,
                      target.get(name))
    _sync_launches(doc, before.get("launch"), target.get("launch"))
    args = before.get("arg")
    _sync_args(doc, args if isinstance(args, list) else None, target["arg"])
    # Tables the spec model does not own ([task], a user's own notes) are kept as they are.
    text = tomlkit.dumps(doc)
    return text if _reads_as(text, spec) else canonical_text


def _owned_part(value: Any, owned: frozenset[str]) -> Any:
    """A table (or list of tables) cut down to the keys the spec model owns."""
    if isinstance(value, list):
        return [_owned_part(item, owned) for item in value]
    return {k: v for k, v in value.items() if k in owned} if isinstance(value, dict) else value


def _reads_as(text: str, spec: Spec) -> bool:
    """Whether what the spec model owns in `text` means `spec`: the promise of
    update_spec_text, checked, so that a layout this module edits wrongly costs the file's
    comments, never the user's values (tables and keys of the user's own are left out)."""
    try:
        data = tomllib.loads(text)
        owned = {name: _owned_part(data[name], keys) for name, keys in OWNED.items()
                 if name in data}
        return parse_spec_data(owned, spec.base_dir, spec.path, check_files=False) == spec
    except (tomllib.TOMLDecodeError, SpecError):
        return False


def save_spec_keeping_layout(spec: Spec, path: Path) -> None:
    """Write `spec` into `path` atomically, keeping the file's comments and layout (a file that
    does not exist yet, or cannot be read as text, gets the canonical layout)."""
    try:
        original = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        original = ""
    text = update_spec_text(original, spec) if original.strip() else spec_to_toml(spec)
    atomic_write_text(path, text)


def save_spec(spec: Spec, path: Path) -> None:
    """Write the spec atomically (the old file survives any failure). Over an existing file it
    keeps what the spec model does not own ([task], comments: save_spec_keeping_layout)."""
    if path.exists():
        save_spec_keeping_layout(spec, path)
        return
    atomic_write_text(path, spec_to_toml(spec))
