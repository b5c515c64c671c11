"""Verification: where a verdict is decided. `verifier` is the entry point, `runs` runs every case
and seed, `checks` judges one output image, `buffers` lays out guard zones and poison, `reference`
computes expected values, `results` holds the typed verdicts, `sanitizer`/`sanitized` run under
compute-sanitizer."""
