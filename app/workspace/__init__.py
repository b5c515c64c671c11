"""The editor's files without Qt: kernel templates, autosave and crash recovery, and the private
copy a run of unsaved text works in.
"""

__all__ = ["cuda_language", "recovery", "snapshot", "templates"]
