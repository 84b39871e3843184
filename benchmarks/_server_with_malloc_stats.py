"""``donutbox serve`` with one addition for ``abuse.py --malloc-stats``: on
SIGUSR1 the server appends CPython's allocator statistics
(``sys._debugmallocstats()``: object arenas allocated, bytes in used and
in free blocks) to the file named by ``DONUTBOX_MALLOC_STATS``.  A
measuring aid only: nothing of it is in the product."""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

from donutbox.cli import main


def _stats(_signum: int, _frame: FrameType | None) -> None:
    # _debugmallocstats writes to the C stderr: point fd 2 at the file a moment.
    sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(os.environ["DONUTBOX_MALLOC_STATS"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.dup2(fd, 2)
        os.write(2, b"--- malloc stats ---\n")
        sys._debugmallocstats()
        os.write(2, b"--- end ---\n")
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)


if __name__ == "__main__":
    signal.signal(signal.SIGUSR1, _stats)
    raise SystemExit(main(sys.argv[1:]))
