"""The HTML report of `bundle verify`: each bundled spec's claims beside what was obtained
here, every difference flagged, both environments, and the manifest's hashes."""

from __future__ import annotations

import json
from typing import Any

from app.base.plaintext import printable
from app.review import html as h
from app.review.model import BundleCheck, SpecCheck, check_from_json


def _spec_section(spec: SpecCheck) -> str:
    """One spec: claimed and obtained, item by item."""
    rows: list[list[str | h.Cell]] = []
    for item in spec.items:
        mark = h.Cell("differs", "bad") if item.differs else (
            h.Cell("note", "warn") if item.note else h.Cell("same", "ok"))
        rows.append([item.what, h.Cell(item.claimed, "mono"), h.Cell(item.obtained, "mono"),
                     mark, item.note])
    here = spec.verdict
    words = (f"Claimed {spec.claimed_status}; obtained here {here.status} on "
             f"{here.device.get('name') or here.backend or 'no backend'}.")
    parts = [h.paragraph(words), h.table(["what", "claimed", "here", "", "note"], rows)]
    if not here.passed:
        parts.append(h.paragraph(f"here: {here.message}", "note"))
    return h.section(f"{spec.name} ({spec.member})", *parts)


def _environments(check: BundleCheck) -> str:
    """Where the bundle was made beside this machine."""
    keys = list(dict.fromkeys([*check.made_in, *check.here]))
    rows: list[list[str | h.Cell]] = []
    for key in keys:
        made, here = check.made_in.get(key), check.here.get(key)
        text = [json.dumps(v, sort_keys=True) if isinstance(v, dict | list) else str(v)
                for v in (made, here)]
        rows.append([key, h.Cell(text[0], "mono"), h.Cell(text[1], "mono"),
                     h.Cell("same", "ok") if made == here else h.Cell("differs", "warn")])
    return h.section("Environment", h.table(["what", "where it was made", "here", ""], rows))


def _manifest(check: BundleCheck) -> str:
    """Every file of the bundle with its SHA-256."""
    rows: list[list[str | h.Cell]] = [
        [h.Cell(name, "mono"), h.Cell(str(entry.get("size", "")), "num"),
         h.Cell(str(entry.get("sha256", "")), "mono")]
        for name, entry in sorted(check.files.items()) if isinstance(entry, dict)]
    signed = f"signed by key {check.signer}" if check.signer else "not signed"
    return h.section("Manifest", h.paragraph(f"manifest SHA-256 {check.digest} ({signed}); "
                                             "every file below matched its sum before anything "
                                             "ran."),
                     h.table(["file", "bytes", "SHA-256"], rows))


def _scrubbed(value: Any) -> Any:
    """JSON data with every string's (and key's) control characters escaped."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(k): _scrubbed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v) for v in value]
    return value


def _neutralised(check: BundleCheck) -> BundleCheck:
    """The check with everything that came from the bundle (note, names, claimed values,
    environment, file names) free of control characters: the report shows them escaped."""
    clean = check_from_json(_scrubbed(check.to_json()))
    clean.files = _scrubbed(check.files)
    return clean


def bundle_html(check: BundleCheck) -> str:
    """The whole re-check as one self-contained HTML document."""
    check = _neutralised(check)
    count = sum(len(s.differences) for s in check.specs)
    verdict = "claims hold" if check.claims_hold else f"{count} difference(s)"
    summary = "; ".join(f"{s.name}: {s.verdict.status}" for s in check.specs)
    body = [f"<p>{h.badge('passed' if check.claims_hold else 'failed')} "
            f"{h.esc(verdict)} \u2014 {h.esc(summary)}</p>",
            h.paragraph(f"note from its maker: {check.note}") if check.note else "",
            *(_spec_section(s) for s in check.specs), _environments(check), _manifest(check)]
    return h.page(f"Bundle check: {check.path}", "kernel-studio bundle verify", body)
