"""Review bundles' manifest.json and manifest.sig as read before anything runs
(app.review.bundle): any bytes are a manifest or a BundleError, quickly, nesting included."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.review import bundle
from app.review.bundle import BundleError
from tests.fuzz.bounds import bounded, grows_linearly

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                        st.text(max_size=8), inner, max_size=4), max_leaves=15)


def _manifest(data: bytes) -> object:
    """The manifest read, then checked against an empty bundle holding only it."""
    manifest = bundle._manifest(data)
    bundle._check_sums(manifest, {bundle.MANIFEST: data})
    return manifest


def _signed(data: bytes) -> object:
    """A signature member read against a manifest."""
    return bundle._signer({bundle.MANIFEST: b"{}", bundle.SIGNATURE: data})


def _good(**fields: Any) -> bytes:
    """A manifest with the right kind and format, and these fields."""
    return json.dumps({"kind": bundle.KIND, "format": bundle.FORMAT, "files": {}, "specs": [],
                       **fields}).encode()


@given(st.binary(max_size=300))
def test_any_bytes_are_a_manifest_or_refused(data: bytes) -> None:
    """Bytes that are not JSON, or not a manifest: BundleError."""
    bounded(_manifest, data, (BundleError,))
    bounded(_signed, data, (BundleError,))


@given(st.sampled_from(["files", "specs", "note", "format", "kind", "environment"]), JSON)
def test_any_value_of_a_manifest_field_is_read_or_refused(field: str, value: Any) -> None:
    """Whatever one field holds."""
    bounded(_manifest, _good(**{field: value}), (BundleError,))


@pytest.mark.parametrize("make", [lambda k: b"[" * k, lambda k: b'{"a":' * k,
                                  lambda k: _good(specs=["x" * k]),
                                  lambda k: _good(format="f" * k)],
                         ids=["deep-list", "deep-object", "long-spec", "long-format"])
def test_deep_or_long_manifests_are_refused_linearly(make: object) -> None:
    """Nesting past the JSON reader's stack is 'not JSON', not a RecursionError; long values
    are cut short in the message."""
    grows_linearly(_manifest, make, 50_000, (BundleError,))  # type: ignore[arg-type]
    grows_linearly(_signed, make, 50_000, (BundleError,))  # type: ignore[arg-type]
    assert len(bounded(_manifest, make(100_000), (BundleError,)).message) < 300  # type: ignore[operator]
