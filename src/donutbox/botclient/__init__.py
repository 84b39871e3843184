"""A client of the Bot API (docs/bots.md): ``donutbox bot`` connects any
agent of the catalogue to a server with a bot token (client.py); view.py
turns the game stream's state back into the engine's ``PlayerView``."""
