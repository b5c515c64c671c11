"""Ed25519 signature verification (RFC 8032) in plain Python, standard library only.

The installer checks a bundle's signature with the system's Python before anything from the
bundle is installed, so it cannot use the `cryptography` wheel the bundle carries. Only
verification lives here (signing uses `cryptography` on the build machine); it handles public
data only, so constant-time arithmetic is not needed. One verification takes a few milliseconds.
"""

from __future__ import annotations

import hashlib

P = 2**255 - 19
ORDER = 2**252 + 27742317777372353535851937790883648493  # the base point's prime order
D = -121665 * pow(121666, P - 2, P) % P
SQRT_MINUS_ONE = pow(2, (P - 1) // 4, P)

Point = tuple[int, int, int, int]  # extended coordinates (X, Y, Z, T), x = X/Z, y = Y/Z, xy = T/Z


def _add(a: Point, b: Point) -> Point:
    """Sum of two points (the unified addition formula for twisted Edwards curves, a = -1)."""
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    e1 = (y1 - x1) * (y2 - x2) % P
    e2 = (y1 + x1) * (y2 + x2) % P
    c = 2 * D * t1 * t2 % P
    dz = 2 * z1 * z2 % P
    e, f, g, h = e2 - e1, dz - c, dz + c, e2 + e1
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def _multiply(scalar: int, point: Point) -> Point:
    """scalar * point by double-and-add (inputs are public, so timing does not matter)."""
    result: Point = (0, 1, 1, 0)
    while scalar:
        if scalar & 1:
            result = _add(result, point)
        point = _add(point, point)
        scalar >>= 1
    return result


def _recover_x(y: int, sign: int) -> int | None:
    """The x coordinate of the curve point with this y and x's low bit, or None if none."""
    if y >= P:
        return None
    x2 = (y * y - 1) * pow(D * y * y + 1, P - 2, P) % P
    if x2 == 0:
        return None if sign else 0
    x = pow(x2, (P + 3) // 8, P)
    if (x * x - x2) % P:
        x = x * SQRT_MINUS_ONE % P
    if (x * x - x2) % P:
        return None
    return P - x if (x & 1) != sign else x


def _decode(encoded: bytes) -> Point | None:
    """A 32-byte point encoding as a point, or None when it is not one."""
    if len(encoded) != 32:
        return None
    value = int.from_bytes(encoded, "little")
    y, sign = value & ((1 << 255) - 1), value >> 255
    x = _recover_x(y, sign)
    return None if x is None else (x, y, 1, x * y % P)


def _same(a: Point, b: Point) -> bool:
    """Whether two points in extended coordinates are equal."""
    return (a[0] * b[2] - b[0] * a[2]) % P == 0 and (a[1] * b[2] - b[1] * a[2]) % P == 0


BASE_Y = 4 * pow(5, P - 2, P) % P
_BASE_X = _recover_x(BASE_Y, 0)
assert _BASE_X is not None
BASE: Point = (_BASE_X, BASE_Y, 1, _BASE_X * BASE_Y % P)


def verify(public_key: bytes, message: bytes, signature: bytes) -> bool:
    """Whether `signature` is a valid Ed25519 signature of `message` under `public_key`."""
    if len(public_key) != 32 or len(signature) != 64:
        return False
    key, r_point = _decode(public_key), _decode(signature[:32])
    s = int.from_bytes(signature[32:], "little")
    if key is None or r_point is None or s >= ORDER:
        return False
    digest = hashlib.sha512(signature[:32] + public_key + message).digest()
    h = int.from_bytes(digest, "little") % ORDER
    return _same(_multiply(s, BASE), _add(r_point, _multiply(h, key)))
