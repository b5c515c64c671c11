"""Kernel Studio's core: everything the GUI and the CLI share. Never imports Qt."""

__version__ = "0.1.0"
