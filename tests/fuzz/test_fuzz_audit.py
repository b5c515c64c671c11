"""The audit log's line reader (app.review.audit.parse_entry, check_log): a log may have been
edited by anyone; any line is an entry, a malformed one or none, and any file is checked or
refused (AuditError), quickly."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.review import audit
from app.review.audit import AuditError
from tests.fuzz.bounds import bounded, grows_linearly

FIELDS = ["seq", "prev", "hash", "action", "outcome", "time", "user", "subject", "signature"]
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                        st.sampled_from(FIELDS) | st.text(max_size=5), inner, max_size=9),
                    max_leaves=20)


def _check(data: bytes) -> object:
    """check_log on a file holding `data`."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "audit.jsonl"
        path.write_bytes(data)
        return audit.check_log(path)


@given(st.binary(max_size=300))
def test_any_line_is_read_without_raising(line: bytes) -> None:
    """Bytes of any kind: an entry, a malformed entry, or no entry."""
    bounded(audit.parse_entry, line, ())
    bounded(_check, line, (AuditError,))


@given(JSON)
def test_any_json_line_is_read_without_raising(value: object) -> None:
    """JSON of any shape, with the entry's field names likely."""
    line = json.dumps(value).encode()
    bounded(audit.parse_entry, line, ())
    bounded(_check, line + b"\n" + line, (AuditError,))


@pytest.mark.parametrize("make", [lambda k: b"[" * k, lambda k: b'{"a":' * k,
                                  lambda k: b"\n" * k, lambda k: b"{}\n" * k],
                         ids=["deep-list", "deep-object", "blank-lines", "many-lines"])
def test_the_work_grows_linearly(make: object) -> None:
    """Four times the bytes cost about four times the work; deep nesting is no entry."""
    grows_linearly(audit.parse_entry, make, 20_000, ())  # type: ignore[arg-type]
    grows_linearly(_check, make, 20_000, (AuditError,))  # type: ignore[arg-type]
