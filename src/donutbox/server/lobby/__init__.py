"""The lobby: tables, quick match, invitations and presence
(``service.py``), its tables in the database (``store.py``), and the bus
that tells the other server processes of a change (``bus.py``)."""
