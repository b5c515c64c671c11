"""The Eval view: evaluations of the local model (kernel-studio eval) from the results store."""
