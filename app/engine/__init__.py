"""The engine: worker processes that run kernels, and the verifier and timer around them."""
