"""Review stations and side-by-side variants: compare, review bundles, the audit trail and
self-contained HTML reports. No Qt here; the CLI (app/cli/commands) and the GUI (ui/compare) are
fronts over it."""
