"""``python -m whirgpu`` runs the CLI."""

import sys

from .cli.commands import main

sys.exit(main())
