"""Kernel Studio's Qt widgets: the desktop front over the core in app/."""
