"""The HTTP and WebSocket routes, one module per area (local games, online
games, the lobby, accounts and the community, analysis, meta), and what
they share (``common.py``)."""
