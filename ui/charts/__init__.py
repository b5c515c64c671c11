"""Timing charts (pyqtgraph, imported only when the Charts pane is first shown or fed) and the
adapter that feeds them a timing report."""
