"""``python -m fbgfx``: the command-line tools."""

import sys

from .cli import main

sys.exit(main())
