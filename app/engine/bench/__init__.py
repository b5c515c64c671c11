"""Timing: `runner` is the entry point (verify, then time interleaved variants), `points` times
one case, `stats` summarises samples, `reports` holds the typed reports and their text,
`assemble` adds peaks and flags, `peaks` and `roofline` say what the device could do."""
