"""`python -m app` runs the command line."""

import sys

from app.cli.entry import main

sys.exit(main())
