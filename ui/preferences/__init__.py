"""The GUI's settings: declared once (table.py), edited in one dialog (dialog.py)."""
