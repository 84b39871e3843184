"""Moderation: bans, voids and reports (``service.py``) and their tables
(``rows.py``); the operator's command is ``admin_cmd.py``."""
