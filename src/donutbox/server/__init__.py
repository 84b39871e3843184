"""The server: one authoritative session per game, stored through SQLAlchemy,
served over HTTP and WebSocket (FastAPI + uvicorn)."""
