"""``server/bots/store.py`` on its own (an SQLite file migrated by the app):
challenges expire after a minute and are deleted after a day."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from community_helpers import running_app, signed_up
from sqlalchemy import update
from sqlalchemy.orm import Session

from donutbox.server.bots.store import BotStore, ChallengeRow
from donutbox.server.errors import Conflict


def test_challenges_expire_after_a_minute_and_go_after_a_day(tmp_path: Path) -> None:
    with running_app(f"sqlite:///{tmp_path / 'g.db'}") as app:
        store = BotStore(app.state.hub.store.engine)
        signed_up(app, "ann")
        owner = app.state.community.accounts.find("ann")
        bot = store.create_bot(owner, "robo")
        clock = {"minutes": 5.0, "increment": 3.0}

        def challenge() -> str:
            return store.challenge(owner, bot, {}, "ogm-sa", "label", clock, True).id

        def age(challenge_id: str, seconds: float) -> None:
            with Session(store.engine) as db, db.begin():
                row = db.get(ChallengeRow, challenge_id)
                assert row is not None
                db.execute(
                    update(ChallengeRow)
                    .where(ChallengeRow.id == challenge_id)
                    .values(created=row.created - timedelta(seconds=seconds))
                )

        first = challenge()
        age(first, 61)
        assert store.get_challenge(first, owner).status == "expired"
        with pytest.raises(Conflict, match="challenge: expired"):
            store.answer(first, bot, "accepted", None)
        age(first, 86400)
        second = challenge()  # the old one is deleted on the way
        with Session(store.engine) as db:
            assert db.get(ChallengeRow, first) is None
            assert db.get(ChallengeRow, second) is not None
