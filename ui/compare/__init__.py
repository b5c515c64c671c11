"""Compare in the GUI: kernels side by side, their verdicts, resources and timing (the CLI's
`kernel-studio compare` in a process of its own), and review bundles opened the same way."""
