"""``python -m donutbox.cli``: the ``donutbox`` command."""

import sys

from . import main

sys.exit(main())
