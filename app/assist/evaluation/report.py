"""An evaluation as one self-contained HTML file: the summary of every arm, the lift, pass@1 by
level and dtype as inline SVG bars, and every task's outcome. Nothing is fetched: no scripts,
no fonts, no images from elsewhere."""

from __future__ import annotations

import html
from typing import Any

STYLE = """body{font:14px system-ui,sans-serif;margin:2em;color:#222;max-width:70em}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;
text-align:right}th{background:#f3f3f3}td.name,th.name{text-align:left}
.note{color:#a40}svg text{font:11px system-ui,sans-serif}"""
BAR_WIDTH = 260
COLORS = ("#4a7fb5", "#d9822b", "#5aa469", "#a05195")


def _fmt(value: Any, digits: int = 3) -> str:
    """A figure for a cell: numbers rounded, None as a dash."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return html.escape(str(value))


def _table(headers: list[str], rows: list[list[Any]], names: int = 1) -> str:
    """A table; the first `names` columns are left-aligned text."""
    head = "".join(f"<th class='name'>{html.escape(h)}</th>" if i < names else
                   f"<th>{html.escape(h)}</th>" for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f"<td class='name'>{_fmt(c)}</td>" if i < names else
                                    f"<td>{_fmt(c)}</td>" for i, c in enumerate(row)) + "</tr>"
                   for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def summary_rows(result: dict[str, Any]) -> list[list[Any]]:
    """One row per arm: tasks, pass@1, pass@K, compile errors, rounds to pass, tokens, time."""
    rows = []
    for arm, s in result.get("summaries", {}).items():
        rows.append([arm, s["tasks"], s["pass_at_1"], s["pass_at_k"], s["compile_error_rate"],
                     s["rounds_to_pass"], s["new_tokens"], s["generate_s"], s["verify_s"]])
    return rows


SUMMARY_HEADERS = ["arm", "tasks", "pass@1", "pass@K", "compile errors", "rounds to pass",
                   "new tokens", "generate s", "verify s"]


def _bars(title: str, groups: dict[str, dict[str, dict[str, Any]]]) -> str:
    """Horizontal bars of pass@1 per group, one bar per arm."""
    arms = list(groups)
    names = sorted({g for by in groups.values() for g in by})
    height = 18 * len(names) * max(len(arms), 1) + 30
    parts = [f"<h3>{html.escape(title)}</h3><svg width='{BAR_WIDTH + 200}' height='{height}'>"]
    y = 10
    for name in names:
        for index, arm in enumerate(arms):
            value = groups[arm].get(name, {}).get("pass_at_1") or 0.0
            width = BAR_WIDTH * float(value)
            parts.append(f"<text x='0' y='{y + 12}'>{html.escape(name)} {html.escape(arm)}"
                         f"</text><rect x='170' y='{y}' width='{width:.1f}' height='14' "
                         f"fill='{COLORS[index % len(COLORS)]}'/><text x='{175 + width:.1f}' "
                         f"y='{y + 12}'>{float(value):.2f}</text>")
            y += 18
    return "".join(parts) + "</svg>"


def _task_rows(result: dict[str, Any]) -> list[list[Any]]:
    """One row per arm and task."""
    rows = []
    for arm, items in result.get("outcomes", {}).items():
        for o in items:
            rows.append([o["task"], arm, o["level"], o["dtype"], o["chains"], o["passed"],
                         o["attempts"], o["compile_errors"], o["new_tokens"]])
    return rows


def render(result: dict[str, Any]) -> str:
    """The whole report as HTML text."""
    settings = result.get("settings", {})
    title = f"Kernel Studio evaluation {result.get('id', '')}"
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
             f"</title><style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>",
             f"<p>{html.escape(str(result.get('started', '')))}, "
             f"{len(settings.get('tasks', []))} tasks, K = {settings.get('k')}, rounds = "
             f"{settings.get('rounds')}, model {html.escape(str(result.get('model', {})))}"
             f"{', stopped early (partial results)' if result.get('stopped') else ''}</p>",
             _table(SUMMARY_HEADERS, summary_rows(result))]
    for item in result.get("lifts", []):
        parts.append(f"<p><b>Lift of {html.escape(item['treatment'])} over "
                     f"{html.escape(item['control'])}</b> (pass@1): {_lift_text(item)}</p>")
    parts += [f"<p class='note'>{html.escape(n)}</p>" for n in result.get("notes", [])]
    parts += [f"<p class='note'>skipped {html.escape(b['task'])}: {html.escape(b['message'])}"
              "</p>" for b in result.get("broken", [])]
    summaries = result.get("summaries", {})
    parts.append(_bars("pass@1 by level", {a: s["by_level"] for a, s in summaries.items()}))
    parts.append(_bars("pass@1 by dtype", {a: s["by_dtype"] for a, s in summaries.items()}))
    parts.append("<h3>Tasks</h3>" + _table(
        ["task", "arm", "level", "dtype", "chains", "passed", "attempts", "compile errors",
         "new tokens"], _task_rows(result), names=2))
    return "".join(parts) + "</body></html>\n"


def _lift_text(item: dict[str, Any]) -> str:
    """A lift in words."""
    if item.get("mean") is None:
        return "no task was decided in both arms"
    return (f"{item['mean']:+.3f}, 95% bootstrap interval {item['low']:+.3f} to "
            f"{item['high']:+.3f}, over {item['tasks']} tasks")
