"""The base of the core: settings, paths, atomic file writes, facts about this machine and
text made safe to show. Imports nothing else of Kernel Studio.
"""

__all__ = ["fsutil", "paths", "plaintext", "settings", "system"]
