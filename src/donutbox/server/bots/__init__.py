"""The Bot API (docs/bots.md): bot accounts and their tokens (store.py), the
event and game streams (streams.py) and the routes (routes.py)."""
