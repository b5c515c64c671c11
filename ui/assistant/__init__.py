"""The local model's pane and the thread it answers on."""
