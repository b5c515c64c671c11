"""The app's wheel stands alone: templates, skills, prompts, themes and tasks travel in it as
package data, and an installed copy reads them (and keeps models) away from any checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from tinybundle import load

PROBE = """
import json
from app.base import paths
from app.assist.prompting import prompts
from app.assist.prompting import skills
from app.assist.tasks import suite as tasks
print(json.dumps({"resources": str(paths.RESOURCES), "models": str(paths.models_dir()),
                  "checkout": paths.is_checkout(), "prompt": len(prompts.template("explain")),
                  "skills": len(skills.load_skills()[0]), "tasks": len(tasks.load_suite().tasks)}))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The app's wheel, built by the bundle builder from a copy of this checkout."""
    return load("bundle_build").app_wheel(tmp_path_factory.mktemp("wheels"))


def test_the_wheel_carries_the_resources(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    for folder in ("kernels/vector_add", "skills", "prompts", "themes", "tasks", "bench"):
        assert any(n.startswith(f"app/resources/{folder}/") for n in names), folder
    assert "app/resources/kernels/vector_add/vector_add.toml" in names
    assert not any("__pycache__" in n for n in names)


def test_an_installed_copy_reads_its_own_resources(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile",
                    "--target", str(target), str(wheel)], check=True,
                   env={**os.environ, "PIP_CONFIG_FILE": os.devnull})
    env = {k: v for k, v in os.environ.items() if not k.startswith("KERNEL_STUDIO_")}
    env.update(PYTHONPATH=str(target), KERNEL_STUDIO_DATA=str(tmp_path / "data"))
    output = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, env=env, check=True,
                            capture_output=True, text=True).stdout
    found = json.loads(output)
    assert found["resources"] == str(target / "app" / "resources")
    assert found["models"] == str(tmp_path / "data" / "models")
    assert not found["checkout"]
    assert found["prompt"] > 0 and found["skills"] > 0 and found["tasks"] > 0
