"""`kernel-studio gui FILE --screenshot PNG` on a real X server (Xvfb): the final look, popups
included, as users see it; skipped with the reason when Xvfb is not installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def xvfb_display() -> Iterator[str]:
    """A private Xvfb server's display name."""
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed (packaging/install-system-deps.sh installs it)")
    read, write = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "1600x1000x24",
                               "-nolisten", "tcp"], pass_fds=(write,),
                              stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as pipe:
        number = pipe.readline().strip()
    if not number:
        server.kill()
        pytest.skip("Xvfb did not start")
    yield f":{number}"
    server.terminate()
    server.wait(timeout=10)


def distinct_colours(image: QImage, step: int = 7) -> int:
    """How many colours a sparse grid of pixels shows (a blank window shows one or two)."""
    return len({image.pixel(x, y) for x in range(0, image.width(), step)
                for y in range(0, image.height(), step)})


def test_screenshot_of_the_whole_window_after_a_build(xvfb_display: str, kernel_copy: Path,
                                                      private_data: Path,
                                                      tmp_path: Path) -> None:
    target = tmp_path / "shots" / "window.png"
    env = {**os.environ, "DISPLAY": xvfb_display, "QT_QPA_PLATFORM": "xcb",
           "KERNEL_STUDIO_DATA": str(private_data), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "app", "gui", str(kernel_copy), "--screenshot",
                           str(target)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    image = QImage(str(target))
    assert (image.width(), image.height()) == (1400, 900)
    assert distinct_colours(image) > 50
    assert target.stat().st_size < 300_000


def test_completion_popup_is_drawn_on_a_real_x_server(xvfb_display: str, kernel_copy: Path,
                                                      private_data: Path,
                                                      tmp_path: Path) -> None:
    shot = tmp_path / "popup.png"
    env = {**os.environ, "DISPLAY": xvfb_display, "QT_QPA_PLATFORM": "xcb",
           "KERNEL_STUDIO_DATA": str(private_data), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("popup_helper.py")),
                           str(kernel_copy), str(shot), str(tmp_path / "s.ini")], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["completion"] and report["calltip"]
    assert report["popups"], "the completion list is a window of its own"
    _, x, y, width, height = max(report["popups"], key=lambda p: p[3] * p[4])
    image = QImage(str(shot))
    inside = image.copy(x, y, width, height)
    assert width > 40 and height > 10 and distinct_colours(inside, step=2) > 3


def test_the_readme_pictures_are_taken_of_the_real_window(xvfb_display: str,
                                                          private_data: Path,
                                                          tmp_path: Path) -> None:
    out = tmp_path / "docs"
    env = {**os.environ, "DISPLAY": xvfb_display, "QT_QPA_PLATFORM": "xcb",
           "KERNEL_STUDIO_DATA": str(private_data), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("readme_shots.py")),
                           str(out)], cwd=Path(__file__).parent, env=env, capture_output=True,
                          text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    names = ["gui-assistant-diff.png", "gui-bench-refused.png", "gui-bundle-review.png",
             "gui-compare.png", "gui-diagnostics.png", "gui-first-open.png", "gui-sass.png",
             "gui-verify-failure.png", "gui-verify-pass.png"]
    assert sorted(p.name for p in out.iterdir()) == names
    readme = (ROOT / "README.md").read_text("utf-8")
    for name in names:
        image = QImage(str(out / name))
        assert (image.width(), image.height()) == (1400, 900)
        assert distinct_colours(image) > 50
        assert (out / name).stat().st_size < 160_000  # a palette of 256 colours
        assert f"](docs/{name})" in readme  # every picture is shown where its feature is
