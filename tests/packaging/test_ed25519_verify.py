"""The installer's standard-library Ed25519 check agrees with `cryptography` (which signs)."""

from __future__ import annotations

import os

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from tinybundle import load

ed25519 = load("ed25519_verify")


def _raw(key: Ed25519PrivateKey) -> bytes:
    """The raw public key."""
    return key.public_key().public_bytes(serialization.Encoding.Raw,
                                         serialization.PublicFormat.Raw)


def test_valid_signatures_verify_and_any_change_fails() -> None:
    for length in (0, 1, 31, 64, 1000):
        key = Ed25519PrivateKey.generate()
        message = os.urandom(length)
        signature = key.sign(message)
        assert ed25519.verify(_raw(key), message, signature)
        assert not ed25519.verify(_raw(key), message + b"!", signature)
        assert not ed25519.verify(_raw(Ed25519PrivateKey.generate()), message, signature)
        for position in (0, 31, 32, 63):
            bent = bytearray(signature)
            bent[position] ^= 0x04
            assert not ed25519.verify(_raw(key), message, bytes(bent))


def test_malformed_input_is_rejected_not_raised() -> None:
    key = Ed25519PrivateKey.generate()
    signature = key.sign(b"m")
    assert not ed25519.verify(_raw(key)[:31], b"m", signature)
    assert not ed25519.verify(_raw(key), b"m", signature[:63])
    # S at or above the group order is refused (a malleated signature)
    s = int.from_bytes(signature[32:], "little") + ed25519.ORDER
    if s < 2**256:
        assert not ed25519.verify(_raw(key), b"m", signature[:32] + s.to_bytes(32, "little"))
    assert not ed25519.verify(b"\xff" * 32, b"m", signature)  # not a point on the curve
