"""The command line's own error, in a module of its own.

``python -m donutbox.cli`` runs the command as ``__main__`` while other
modules (``render/commands.py``) import ``donutbox.cli``: two copies of that
module, two different ``UsageError`` classes, and an error raised through one
would not be caught by the other.  Defined here, there is one class.
"""

from __future__ import annotations


class UsageError(Exception):
    """Bad command-line arguments: exit status 2."""
