"""``donutbox serve`` with one addition for ``abuse.py --malloc-stats``: on
SIGUSR1 the server appends CPython's allocator statistics
(``sys._debugmallocstats()``: object arenas allocated, bytes in used and
in free blocks) to the file named by ``DONUTBOX_MALLOC_STATS``, and every
full garbage collection adds a line there (``gc2``: its wall and CPU
seconds, the objects it freed).  A measuring aid only: nothing of it is in
the product.  ``DONUTBOX_TRY_CAP=N`` tries another per-address connection
cap (``limits.GuardedHttpProtocol.max_per_address``) for the run;
``DONUTBOX_TRY_LOOP=asyncio`` runs uvicorn on asyncio's own event loop
instead of uvloop; ``DONUTBOX_TRY_IDLE=N`` lets games leave memory after
N idle seconds (``hub.IDLE_SECONDS``) instead of 300."""

from __future__ import annotations

import gc
import os
import signal
import sys
import time
from types import FrameType
from typing import Any

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


_started: list[float] = [0.0, 0.0]


def _gc(phase: str, info: dict[str, Any]) -> None:
    if info.get("generation") != 2:
        return
    if phase == "start":
        _started[:] = [time.perf_counter(), time.process_time()]
        return
    wall, cpu = time.perf_counter() - _started[0], time.process_time() - _started[1]
    line = f"gc2 wall={wall:.4f} cpu={cpu:.4f} collected={info.get('collected')}\n"
    with open(os.environ["DONUTBOX_MALLOC_STATS"], "a") as out:
        out.write(line)


if __name__ == "__main__":
    if os.environ.get("DONUTBOX_TRY_CAP"):
        from donutbox.server import limits

        limits.GuardedHttpProtocol.max_per_address = int(os.environ["DONUTBOX_TRY_CAP"])
    if os.environ.get("DONUTBOX_TRY_IDLE"):  # games leave memory after N idle seconds
        from donutbox.server import hub

        hub.IDLE_SECONDS = float(os.environ["DONUTBOX_TRY_IDLE"])
        hub.SWEEP_SECONDS = min(hub.SWEEP_SECONDS, hub.IDLE_SECONDS)
    if os.environ.get("DONUTBOX_TRY_LOOP"):  # e.g. asyncio instead of uvloop
        import uvicorn

        _init = uvicorn.Config.__init__

        def _with_loop(self: Any, *args: Any, **kwargs: Any) -> None:
            kwargs["loop"] = os.environ["DONUTBOX_TRY_LOOP"]
            _init(self, *args, **kwargs)

        uvicorn.Config.__init__ = _with_loop  # type: ignore[method-assign]
    signal.signal(signal.SIGUSR1, _stats)
    gc.callbacks.append(_gc)
    raise SystemExit(main(sys.argv[1:]))
