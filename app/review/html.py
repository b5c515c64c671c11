"""Self-contained HTML reports: one file with inline CSS and inline SVG that fetches nothing
(no scripts, no external addresses, no images by reference) and prints well.

These are the building blocks; app.review.reports assembles them into the compare and
bundle-verify reports.
"""

from __future__ import annotations

import html
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

from app import __version__
from app.base.plaintext import printable
from app.review.diff import DiffRow

CSS = """
:root { --ok: #2e7d32; --bad: #c62828; --warn: #b26a00; --muted: #666; --line: #ddd; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 1200px; padding: 0 1em; color: #1b1b1b; background: #fff; }
h1 { font-size: 1.6em; margin-bottom: .2em; } h2 { font-size: 1.2em; margin-top: 1.8em;
     border-bottom: 1px solid var(--line); padding-bottom: .2em; }
.meta { color: var(--muted); } .note { color: var(--muted); font-style: italic; }
table { border-collapse: collapse; margin: .6em 0; width: auto; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.badge { display: inline-block; border-radius: 4px; padding: 2px 9px; color: #fff;
         font-weight: 600; } .ok { background: var(--ok); } .bad { background: var(--bad); }
.warn { background: var(--warn); }
td.ok, td.bad, td.warn { color: #fff; }
.diff { font: 12px/1.35 ui-monospace, "DejaVu Sans Mono", monospace; width: 100%;
        table-layout: fixed; } .diff td { border: none; padding: 0 6px; white-space: pre-wrap;
        word-break: break-all; } .diff td.no { color: #999; width: 3.5em; text-align: right; }
.diff tr.replace td.l, .diff tr.delete td.l { background: #fde2e2; }
.diff tr.replace td.r, .diff tr.insert td.r { background: #dcf5dc; }
.flag { color: var(--bad); font-weight: 600; } .same { color: var(--ok); }
code, .mono { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; }
svg text { font: 12px system-ui, sans-serif; }
@media print { body { margin: 0; max-width: none; } h2 { break-after: avoid; }
  table, svg { break-inside: avoid; } .badge, td.ok, td.bad, td.warn {
  -webkit-print-color-adjust: exact; print-color-adjust: exact; } }
"""
_FETCHY = re.compile(r"://|src\s*=|srcset|url\s*\(|@import", re.IGNORECASE)
OK_WORDS = frozenset({"passed", "timed", "ok", "same", "accepted", "intact"})
WARN_WORDS = frozenset({"unverified", "not_timed", "not run", "cancelled", "not claimed"})


def esc(value: object) -> str:
    """Text made safe for HTML. Beyond escaping, the few character sequences that could name
    something to fetch (`://`, `src=`, `url(`, `@import`) are written as character references:
    they read the same, and a plain search of the file finds no address in it at all. Control
    characters other than tab and newline (text from a bundle may hold escape sequences) are
    shown as their escapes (ESC as \\x1b)."""
    text = html.escape(printable(value, lines=True), quote=True)
    return _FETCHY.sub(lambda m: "".join(f"&#{ord(c)};" for c in m.group(0)), text)


def tone(status: str) -> str:
    """ok, warn or bad for a status word (its first word decides)."""
    word = status.split(" (")[0].strip().lower()
    if word in OK_WORDS or word.endswith("passed"):
        return "ok"
    return "warn" if word in WARN_WORDS else "bad"


def badge(status: str) -> str:
    """A coloured status badge."""
    return f'<span class="badge {tone(status)}">{esc(status.replace("_", " "))}</span>'


@dataclass(frozen=True)
class Cell:
    """A table cell: its text and how it looks (num, ok, bad, warn, mono, flag)."""

    text: str
    kind: str = ""


def _cell(value: str | Cell, tag: str = "td") -> str:
    """One cell."""
    cell = value if isinstance(value, Cell) else Cell(str(value))
    kind = f' class="{cell.kind}"' if cell.kind else ""
    return f"<{tag}{kind}>{esc(cell.text)}</{tag}>"


def table(header: Sequence[str], rows: Sequence[Sequence[str | Cell]]) -> str:
    """A table with a header row."""
    head = "".join(_cell(h, "th") for h in header)
    body = "".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def status_cell(status: str) -> Cell:
    """A cell coloured by its status."""
    return Cell(status.replace("_", " "), tone(status))


def section(title: str, *parts: str) -> str:
    """A titled section."""
    return f"<section><h2>{esc(title)}</h2>{''.join(parts)}</section>"


def paragraph(text: str, kind: str = "") -> str:
    """A paragraph of escaped text."""
    attribute = f' class="{kind}"' if kind else ""
    return f"<p{attribute}>{esc(text)}</p>"


def page(title: str, subtitle: str, body: Sequence[str]) -> str:
    """The whole document."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S %z")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
            f"<h1>{esc(title)}</h1><p class=\"meta\">{esc(subtitle)} \u00b7 written {esc(stamp)} "
            f"by Kernel Studio {esc(__version__)}; this file fetches nothing.</p>"
            + "".join(body) + "</body></html>\n")


def diff_table(rows: list[DiffRow], left_title: str, right_title: str) -> str:
    """Two sources side by side, changed lines highlighted."""
    head = (f'<tr><th colspan="2">{esc(left_title)}</th>'
            f'<th colspan="2">{esc(right_title)}</th></tr>')
    body = []
    for row in rows:
        left_no = str(row.left_line) if row.left_line else ""
        right_no = str(row.right_line) if row.right_line else ""
        body.append(f'<tr class="{row.tag}"><td class="no">{left_no}</td>'
                    f'<td class="l">{esc(row.left)}</td><td class="no">{right_no}</td>'
                    f'<td class="r">{esc(row.right)}</td></tr>')
    columns = ('<colgroup><col style="width:3.5em"><col><col style="width:3.5em"><col>'
               '</colgroup>')
    return (f'<table class="diff">{columns}<thead>{head}</thead><tbody>{"".join(body)}</tbody>'
            '</table>')


@dataclass(frozen=True)
class Bar:
    """One bar of a timing chart: a median with its interval, and a label on its right."""

    name: str
    value: float
    low: float
    high: float
    label: str
    baseline: bool = False


def bar_chart(bars: Sequence[Bar], unit: str = "ms") -> str:
    """Horizontal bars with interval whiskers, as inline SVG."""
    if not bars:
        return ""
    top = max(max(b.high, b.value) for b in bars) or 1.0
    left, width, row = 170, 480, 26
    height = row * len(bars) + 30
    parts = [f'<svg width="{left + width + 260}" '
             f'height="{height}" role="img" aria-label="timing">']
    for i, bar in enumerate(bars):
        y = 8 + i * row
        end = width * bar.value / top
        colour = "#90a4ae" if bar.baseline else "#1e88e5"
        low, high = left + width * bar.low / top, left + width * bar.high / top
        parts += [f'<text x="{left - 8}" y="{y + 14}" text-anchor="end">{esc(bar.name)}</text>',
                  f'<rect x="{left}" y="{y}" width="{end:.1f}" height="18" fill="{colour}"/>',
                  f'<line x1="{low:.1f}" x2="{high:.1f}" y1="{y + 9}" y2="{y + 9}" '
                  'stroke="#222" stroke-width="1.5"/>',
                  f'<line x1="{low:.1f}" x2="{low:.1f}" y1="{y + 4}" y2="{y + 14}" stroke="#222"/>',
                  f'<line x1="{high:.1f}" x2="{high:.1f}" y1="{y + 4}" y2="{y + 14}" '
                  'stroke="#222"/>',
                  f'<text x="{max(high, left + end) + 8:.1f}" y="{y + 14}">{esc(bar.label)}</text>']
    axis_y = height - 8
    parts.append(f'<text x="{left}" y="{axis_y}">0</text><text x="{left + width}" y="{axis_y}" '
                 f'text-anchor="end">{top:.4g} {esc(unit)}</text></svg>')
    return "".join(parts)
