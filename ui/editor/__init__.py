"""The code editor: CUDA editing, file tabs, find and replace, autosave recovery, templates."""
