"""What keeps code from elsewhere contained: the bubblewrap sandbox, the trust rule (which specs
may run their kernel and reference, and where) and the offline guard.
"""

__all__ = ["offline", "sandbox", "trust"]
