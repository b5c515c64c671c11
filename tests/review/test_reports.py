"""HTML reports: one self-contained file that fetches nothing (no scripts, no external
addresses, no images or styles by reference), with text from kernels escaped; rendered by
headless Chromium (the Debian package) without console errors or network requests."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from app.cli.entry import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Chromium's own services (updates, accounts, time): not requests made by the page.
BROWSER_OWN = re.compile(r"https?://[^/\"]*(google\.com|googleapis\.com|gvt1\.com|gstatic\.com)")
HOSTILE = '// </style><script src="https://evil.example/x.js"></script><img src=http://e.x/a>\n'


def assert_self_contained(text: str) -> None:
    """Nothing in the document can make a browser fetch anything."""
    lowered = text.lower()
    for needle in ("http://", "https://", "src=", "<script", "<link", "url(", "@import",
                   "<iframe", "<object", "<embed", "srcset"):
        assert needle not in lowered, f"{needle!r} in the report"
    assert lowered.startswith("<!doctype html>") and "<style>" in lowered and "</html>" in lowered


@pytest.fixture
def compare_report(variants: dict[str, Path], tmp_path: Path) -> Path:
    """A compare report of vector_add against a strided variant whose source carries markup
    that must never become markup."""
    source = variants["strided_add"].parent / "strided_add.cu"
    source.write_text(HOSTILE + source.read_text())
    report = tmp_path / "compare.html"
    code = main(["compare", str(variants["vector_add"]), str(variants["strided_add"]),
                 "--backend", "cpu", "--report", str(report)])
    assert code == 0
    return report


def test_the_compare_report_is_self_contained_and_escapes_kernel_text(
        compare_report: Path) -> None:
    """Inline CSS and SVG only; the hostile comment appears as text."""
    text = compare_report.read_text(encoding="utf-8")
    assert_self_contained(text)
    assert "&lt;/style&gt;&lt;script" in text
    assert "Verification" in text and "Sources" in text and "SHA-256" in text


def test_the_bundle_report_is_self_contained(variants: dict[str, Path], tmp_path: Path) -> None:
    """bundle verify --report: claims beside results, both environments, the manifest."""
    bundle, report = tmp_path / "b.ksb", tmp_path / "bundle.html"
    assert main(["bundle", "create", str(variants["vector_add"]), "-o", str(bundle),
                 "--backend", "cpu", "--note", "<b>not bold</b>"]) == 0
    assert main(["bundle", "verify", str(bundle), "--backend", "cpu", "--report",
                 str(report)]) == 0
    text = report.read_text(encoding="utf-8")
    assert_self_contained(text)
    assert "claims hold" in text and "&lt;b&gt;not bold&lt;/b&gt;" in text
    assert "specs/01-vector_add/vector_add.cu" in text


def _chromium(page: Path, out: Path) -> tuple[str, set[str], str]:
    """Render a page headless: its DOM, the URLs the page requested, the console lines."""
    profile, netlog = out / "profile", out / "netlog.json"
    command = [CHROMIUM or "chromium", "--headless", "--no-sandbox", "--disable-gpu",
               "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--no-first-run", "--disable-default-apps",
               f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
               f"--log-net-log={netlog}", "--dump-dom", page.as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    urls = set(re.findall(r'"url":"([a-z]+://[^"]+)"', netlog.read_text(errors="replace")))
    requested = {u for u in urls if not u.startswith("file:") and not BROWSER_OWN.match(u)}
    console = "\n".join(line for line in done.stderr.splitlines() if ":CONSOLE" in line)
    return done.stdout, requested, console


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed "
                    "(Debian: apt-get install chromium)")
def test_chromium_renders_the_report_requesting_nothing(compare_report: Path,
                                                        tmp_path: Path) -> None:
    """The report renders, logs nothing on the console and requests nothing; a control page
    with one external image and one console error shows the check can see both."""
    dom, requested, console = _chromium(compare_report, tmp_path / "report")
    assert "Compare: vector_add vs strided_add" in dom and "Verification" in dom
    assert requested == set() and console == ""
    control = tmp_path / "control.html"
    control.write_text('<img src="http://192.0.2.1/x.png"><script>console.error("x")</script>')
    _, requested, console = _chromium(control, tmp_path / "control")
    assert requested == {"http://192.0.2.1/x.png"} and "CONSOLE" in console
    screenshot = tmp_path / "report.png"
    subprocess.run([CHROMIUM or "chromium", "--headless", "--no-sandbox", "--disable-gpu",
                    f"--user-data-dir={tmp_path / 'shot'}", f"--screenshot={screenshot}",
                    "--window-size=1280,1600", compare_report.as_uri()],
                   capture_output=True, timeout=120, check=False)
    assert screenshot.stat().st_size > 20_000
