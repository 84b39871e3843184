"""``donutbox serve``: the web server, its listening socket and its database
trouble in one line."""

from __future__ import annotations

import argparse
import errno
from typing import Any

from ..usage import UsageError, printable


def _listen(host: str, port: int) -> Any:
    """A listening socket on ``host``:``port``, or a UsageError saying in one
    line why there cannot be one (port in use, unknown or foreign address):
    checked before the server says it is serving."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as err:
        reason = getattr(err, "strerror", None) or str(err)
        raise UsageError(f"--host '{host}': not an address to listen on ({reason})") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(address)
        sock.listen(2048)
    except OSError as err:
        sock.close()
        reason = err.strerror or str(err)
        if err.errno == errno.EADDRINUSE:
            reason += "; is another server running there? choose another --port"
        elif err.errno == errno.EADDRNOTAVAIL:
            reason += "; --host must be an address of this machine, e.g. 127.0.0.1 or 0.0.0.0"
        elif err.errno == errno.EACCES:
            reason += "; ports below 1024 need privileges"
        raise UsageError(f"cannot listen on {host} port {port}: {reason}") from None
    sock.set_inheritable(True)
    return sock


def _database_trouble(db: str | None, err: Exception) -> str:
    """One line on why ``serve`` cannot use its database.  A locked SQLite
    file is another server holding it (a server locks its SQLite file
    exclusively, docs/online.md): the line names the file and both ways out."""
    reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
    if "database is locked" not in reason:
        return f"cannot use the database: {reason}"
    from sqlalchemy.engine import make_url

    from ..server.storage import default_url

    where = make_url(db or default_url()).database or "?"
    return (
        f"cannot use the database {where}: another donutbox serve is using it "
        "(an SQLite file serves one server); stop that server, or give this one "
        "a file of its own with --db sqlite:///PATH"
    )


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from ..server import limits
    from ..server.app import create_app

    if not 0 < args.port < 65536:
        raise UsageError("--port must be from 1 to 65535")
    if not 1 <= args.workers <= 16:
        raise UsageError("--workers must be from 1 to 16")
    sock = _listen(args.host, args.port)
    try:
        try:
            host = f"[{args.host}]" if ":" in args.host else args.host
            app = create_app(
                args.db,
                workers=args.workers,
                broker_url=args.broker or None,
                smtp_url=args.smtp or None,
                public_url=args.public_url or f"http://{host}:{args.port}",
            )
        except ValueError as err:
            if str(err).startswith(("--broker", "--smtp")):  # not Redis; a bad SMTP URL
                raise UsageError(str(err)) from None
            raise UsageError(_database_trouble(args.db, err)) from None
        except Exception as err:  # a bad database URL or file: say so in one line
            raise UsageError(_database_trouble(args.db, err)) from None
        host = f"[{args.host}]" if ":" in args.host else args.host
        url = f"http://{host}:{args.port}/"
        print(
            printable(f"donutbox is serving at {url} (API docs at {url}docs); Ctrl-C stops it"),
            flush=True,
        )
        if args.open:
            import threading
            import webbrowser

            threading.Timer(1.0, lambda: webbrowser.open(url)).start()
        # ws_max_size: the transport refuses huge frames before the app reads
        # them (the app itself refuses messages over 2,048 characters).
        # No per-message deflate: a state is about 20 KB, small for any network,
        # and compressing every state for every reader was a tenth of the
        # server's time per move (docs/performance.md, online play load).
        config = uvicorn.Config(
            app,
            log_level="warning",
            ws_max_size=65536,
            ws_per_message_deflate=False,
            **limits.uvicorn_options(),  # header deadline, per-address cap (issue 12)
        )
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
    return 0
