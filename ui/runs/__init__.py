"""Build, verify and bench: the job process, the run controller and the panes showing results."""
