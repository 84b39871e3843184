"""``python -m donutbox``: the ``donutbox`` command."""

import sys

from .cli import main

sys.exit(main())
