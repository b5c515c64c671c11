"""Hypothesis profiles for the fuzz tests: "ci" (the default: few, fixed examples, so `make test`
stays quick and repeatable) and "deep" (HYPOTHESIS_PROFILE=deep: many fresh examples, for long
runs by hand)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow], database=None)
settings.register_profile("deep", max_examples=3000, deadline=None, derandomize=False,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
