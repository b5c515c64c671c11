"""The window's commands that span several panes: build, verify, bench, ask and apply."""
