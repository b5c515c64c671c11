"""The GUI's settings and the command line read one declaration (app.base.settings): the same
backend choices and the same bounds for the time limit; every preference that is a setting is
made from its table entry (type, default, bounds, help) and refuses what the table refuses."""

from __future__ import annotations

import argparse

import pytest

from app.base import settings
from app.cli import flags as cli_flags
from ui.preferences.table import ASSISTANT_ADAPTER, BY_KEY, PREFERENCES


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


ROWS = (*PREFERENCES, ASSISTANT_ADAPTER)
# The rows whose key ends in a table setting's name, or that name a setting with its own words.
STANDS_FOR = {"run/backend": settings.BACKEND, "run/time_limit": settings.TIME_LIMIT}


def test_every_preference_has_a_kind_of_the_tables_vocabulary() -> None:
    for row in ROWS:
        assert isinstance(row.kind, settings.Kind), row.key


@pytest.mark.parametrize("key, setting", STANDS_FOR.items())
def test_a_preference_that_is_a_setting_is_made_from_its_table_entry(
        key: str, setting: settings.Setting) -> None:
    row = BY_KEY[key]
    assert row.setting is setting
    assert (row.kind, row.default, row.meaning, row.choices) == (
        setting.kind, setting.default, setting.help, setting.choices)
    assert (row.minimum, row.maximum) == (setting.minimum or 0, setting.maximum or 0)


def test_no_row_declares_a_table_setting_by_hand() -> None:
    names = {entry.name for entry in settings.TABLE}
    for row in ROWS:
        if row.key.rsplit("/", 1)[-1] in names or row.setting is not None:
            assert row.key in STANDS_FOR and row.setting is STANDS_FOR[row.key], row.key


@pytest.mark.parametrize("key", STANDS_FOR)
def test_the_dialog_and_the_environment_refuse_the_same_values(key: str) -> None:
    row, setting = BY_KEY[key], STANDS_FOR[key]
    low = setting.minimum if setting.minimum is not None else 0
    for text in [*setting.choices, "bogus", "nan", str(low), str(low / 2),
                 str((setting.maximum or 0) * 2)]:
        try:
            expected = setting.parse(text)
        except settings.SettingError:
            expected = row.default
        assert row.convert(text) == expected, text
