"""Lets `python -m iorelay` behave like the `iorelay` command."""

import sys

from iorelay.cli import main

sys.exit(main())
