"""The PTX / SASS pane and the data behind it (instruction to source line, instruction mix)."""
