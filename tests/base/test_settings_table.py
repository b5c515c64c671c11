"""The settings table (app.base.settings): every entry complete, the environment parsed and
checked in one place with a clear error, and the command line showing the table's numbers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.base import settings
from app.base.settings import Kind, SettingError
from app.engine.verify import reference
from app.engine.worker.backends.cpu import backend as cpu_backend

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m app ARGS` in a child, wide enough that argparse wraps no help line."""
    environment = {**os.environ, "COLUMNS": "400", **env}
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True,
                          timeout=120, check=False, env=environment, cwd=ROOT)


@pytest.mark.parametrize("entry", settings.TABLE, ids=lambda entry: entry.name)
def test_every_entry_has_a_type_a_default_and_help(entry: settings.Setting) -> None:
    assert isinstance(entry.kind, Kind)
    assert entry.help.strip() and not entry.help.endswith(" ")
    assert entry.default is not None or entry.default_note, "say what the default is"
    if entry.default is not None:
        # The default is one of the values the setting may take, in its own type.
        assert entry.parse(str(entry.default)) == entry.default
    if entry.kind in (Kind.INT, Kind.FLOAT):
        assert entry.minimum is not None and entry.maximum is not None
    if entry.kind is Kind.CHOICE:
        assert entry.choices
    if entry.variable:
        assert entry.variable.startswith("KERNEL_STUDIO_")


def test_names_and_variables_are_declared_once() -> None:
    names = [entry.name for entry in settings.TABLE]
    variables = [entry.variable for entry in settings.TABLE if entry.variable]
    assert len(set(names)) == len(names) and len(set(variables)) == len(variables)
    assert settings.ALL == tuple(e for e in settings.TABLE if e.variable)


def test_a_good_environment_value_is_read_in_its_type(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNEL_STUDIO_CPU_THREADS", "4")
    monkeypatch.setenv("KERNEL_STUDIO_REFERENCE_TIMEOUT", "2.5")
    monkeypatch.setenv("KERNEL_STUDIO_DECODE", " GRAPH ")
    assert settings.integer(settings.CPU_THREADS) == 4
    assert settings.value("reference_timeout") == 2.5
    assert settings.text(settings.DECODE) == "graph"
    assert settings.effective(settings.CPU_THREADS).origin == (
        "environment variable KERNEL_STUDIO_CPU_THREADS")
    # The callers read the table: the reference's limit, the CPU backend's threads.
    assert reference.time_limit() == 2.5
    assert cpu_backend.cpu_threads() == 4


def test_unset_or_empty_gives_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KERNEL_STUDIO_REFERENCE_TIMEOUT", raising=False)
    monkeypatch.setenv("KERNEL_STUDIO_NF4_KERNEL", "")
    assert settings.number(settings.REFERENCE_TIMEOUT) == settings.REFERENCE_TIME_LIMIT_S
    assert settings.text(settings.NF4_KERNEL) == "auto"
    assert settings.effective(settings.REFERENCE_TIMEOUT).origin == "default"


@pytest.mark.parametrize("variable, text, says", [
    ("KERNEL_STUDIO_CPU_THREADS", "0", ["out of range", "from 1 to 1024"]),
    ("KERNEL_STUDIO_CPU_THREADS", "four", ["not a whole number", "from 1 to 1024"]),
    ("KERNEL_STUDIO_REFERENCE_TIMEOUT", "1e9", ["out of range", "from 0.1 to 86400", "(120)"]),
    ("KERNEL_STUDIO_REFERENCE_TIMEOUT", "nan", ["not a finite number"]),
    ("KERNEL_STUDIO_REFERENCE_TIMEOUT", "2 s", ["not a number"]),
    ("KERNEL_STUDIO_DECODE", "fast", ["one of auto, graph, static, generate"]),
])
def test_a_bad_environment_value_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, variable: str,
                                                  text: str, says: list[str]) -> None:
    monkeypatch.setenv(variable, text)
    entry = next(e for e in settings.TABLE if e.variable == variable)
    with pytest.raises(SettingError) as raised:
        entry.value()
    message = str(raised.value)
    assert message.startswith(f"{variable}={text!r}")
    for words in says:
        assert words in message
    assert settings.environment_problems() == [message]


def test_more_threads_than_the_backend_uses_are_clamped_not_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNEL_STUDIO_CPU_THREADS", "64")
    assert cpu_backend.cpu_threads() == cpu_backend.MAX_THREADS


def test_verify_help_shows_the_tables_default_and_bounds() -> None:
    done = _cli("verify", "--help")
    assert done.returncode == 0, done.stderr
    limit, seeds = settings.TIME_LIMIT, settings.RANDOM_SEED_COUNT
    assert f"{limit.help} (default {limit.default:g}; {limit.bounds()})" in done.stdout
    assert f"(default {seeds.default}; {seeds.bounds()})" in done.stdout
    assert "{" + ",".join(settings.BACKEND.choices) + "}" in done.stdout
    assert f"(default {settings.BACKEND.default})" in done.stdout


def test_a_bad_environment_value_stops_a_command_with_its_message(tmp_path: Path) -> None:
    done = _cli("verify", str(tmp_path / "absent.toml"), KERNEL_STUDIO_CPU_THREADS="four")
    assert done.returncode == 2
    assert "KERNEL_STUDIO_CPU_THREADS='four': 'four' is not a whole number" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_doctor_lists_each_setting_and_where_it_came_from() -> None:
    done = _cli("doctor", "--settings", "--json", KERNEL_STUDIO_REFERENCE_TIMEOUT="7",
                KERNEL_STUDIO_DECODE="fast")
    assert done.returncode == 1  # one value is bad
    found = {row["name"]: row for row in json.loads(done.stdout)["settings"]}
    assert list(found) == [entry.name for entry in settings.TABLE]
    assert found["reference_timeout"]["value"] == "7"
    assert found["reference_timeout"]["origin"] == (
        "environment variable KERNEL_STUDIO_REFERENCE_TIMEOUT")
    assert found["time_limit"] == {"name": "time_limit", "variable": "",
                                   "value": f"{settings.TIME_LIMIT_S:g}",
                                   "origin": "default", "problem": ""}
    assert "KERNEL_STUDIO_DECODE='fast'" in found["decode"]["problem"]
