"""Email for turn-based play (docs/community.md, "Email"; docs/deploy.md,
"Email: --smtp"): an account's confirmed address, its reminders (your
turn, invitation, game over), the outbox and its sender.

- ``config``: the ``--smtp`` URL.
- ``rows``: the tables (``email_addresses``, ``email_outbox``, ``mail_keys``).
- ``tokens``: signed links (confirm an address, unsubscribe) that work
  without signing in.
- ``compose``: each email's plain text and HTML, and the message sent.
- ``outbox``: what is stored to be sent, with its limits.
- ``sender``: the background task that sends what is stored, with retries.
- ``notify``: what a game's change or an invitation puts in the outbox.
- ``routes``: the account's email settings over HTTP, the confirm and
  unsubscribe pages.

Nothing here runs without ``--smtp``: no row is stored, nothing is sent,
and ``GET /api/account/email`` says ``enabled: false`` (the page then offers
no email).
"""
