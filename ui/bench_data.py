"""Timing results (the engine's JSON) turned into the plain arrays the charts take.

The charts never import the engine; this adapter reads the JSON a bench job returns. It reads
the fields it knows and says what it showed, so a result with fewer fields still draws.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np


class ChartsLike(Protocol):
    """The charts pane's feeding surface."""

    samples: Any
    variants: Any
    sweep: Any
    roofline: Any


def _number(value: Any, default: float = float("nan")) -> float:
    """A float from JSON, NaN when missing."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def _variants(data: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Each timed variant: a 'variants' list, or the result itself as one variant."""
    variants = data.get("variants")
    if isinstance(variants, list) and variants:
        return [v for v in variants if isinstance(v, Mapping)]
    return [data] if data.get("samples_ms") or data.get("median_ms") is not None else []


def _samples(variant: Mapping[str, Any]) -> np.ndarray:
    """A variant's per-sample times in milliseconds."""
    return np.asarray(variant.get("samples_ms") or [], dtype=float)


def _name(variant: Mapping[str, Any], index: int) -> str:
    """A variant's label."""
    return str(variant.get("name") or variant.get("entry") or f"variant {index + 1}")


def feed_samples_and_variants(charts: ChartsLike, variants: Sequence[Mapping[str, Any]]) -> None:
    """Strip plot of samples and bars with confidence intervals."""
    names = [_name(v, i) for i, v in enumerate(variants)]
    samples = [_samples(v) for v in variants]
    charts.samples.set_samples(names, samples)
    medians = [_number(v.get("median_ms"), float(np.median(s)) if s.size else np.nan)
               for v, s in zip(variants, samples, strict=True)]
    low = [_number(v.get("ci_low_ms"), m) for v, m in zip(variants, medians, strict=True)]
    high = [_number(v.get("ci_high_ms"), m) for v, m in zip(variants, medians, strict=True)]
    charts.variants.set_variants(names, medians, low, high)


def feed_sweep(charts: ChartsLike, sweep: Mapping[str, Any]) -> bool:
    """Time and GB/s against size, when the result holds a sweep."""
    sizes = sweep.get("sizes") or []
    series = sweep.get("series") or {}
    if not sizes or not isinstance(series, Mapping):
        return False
    charts.sweep.set_sweep(sizes, {name: (s.get("time_ms") or [], s.get("gbps") or [])
                                   for name, s in series.items() if isinstance(s, Mapping)})
    return True


def feed_roofline(charts: ChartsLike, data: Mapping[str, Any],
                  variants: Sequence[Mapping[str, Any]]) -> bool:
    """Kernels under the measured roofs, when the result names the roofs."""
    roofs = data.get("roofs") or data.get("device_roofs") or {}
    peak_gflops = _number(roofs.get("gflops"))
    peak_gbps = _number(roofs.get("gbps"))
    if not (peak_gflops > 0 and peak_gbps > 0):
        return False
    points = [(_name(v, i), _number(v.get("intensity")), _number(v.get("gflops")))
              for i, v in enumerate(variants)]
    points = [p for p in points if p[1] > 0 and p[2] > 0]
    charts.roofline.set_roofline(peak_gflops, peak_gbps, [p[0] for p in points],
                                 [p[1] for p in points], [p[2] for p in points])
    return True


def feed_charts(charts: ChartsLike, data: Mapping[str, Any]) -> str:
    """Feed every chart the result has data for; returns what was shown, in words."""
    shown = []
    variants = _variants(data)
    if variants:
        feed_samples_and_variants(charts, variants)
        shown.append(f"{len(variants)} variant(s)")
    if isinstance(data.get("sweep"), Mapping) and feed_sweep(charts, data["sweep"]):
        shown.append("size sweep")
    if feed_roofline(charts, data, variants):
        shown.append("roofline")
    return ", ".join(shown) or "no timing data in the result"
