"""One module per `kernel-studio` subcommand (discovered by app.cli)."""
