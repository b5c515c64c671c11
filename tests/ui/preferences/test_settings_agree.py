"""The GUI's settings and the command line read one declaration (app.base.settings): the same
backend choices and the same bounds for the time limit."""

from __future__ import annotations

import argparse

import pytest

from app.base import settings
from app.cli import flags as cli_flags
from ui.preferences.table import BY_KEY


def test_the_backend_choices_are_the_command_lines() -> None:
    parser = argparse.ArgumentParser()
    cli_flags.add_backend(parser, "where")
    assert BY_KEY["run/backend"].choices == settings.BACKEND_CHOICES
    for choice in settings.BACKEND_CHOICES:
        assert parser.parse_args(["--backend", choice]).backend == choice
        assert BY_KEY["run/backend"].convert(choice) == choice


@pytest.mark.parametrize("value, kept", [("0.1", True), ("86400", True), ("0.05", False),
                                         ("86401", False)])
def test_a_time_limit_is_taken_or_refused_alike(value: str, kept: bool) -> None:
    preference = BY_KEY["run/time_limit"]
    assert (preference.convert(value) == float(value)) is kept
    try:
        cli_flags.seconds(value)
        taken = True
    except argparse.ArgumentTypeError:
        taken = False
    assert taken is kept
