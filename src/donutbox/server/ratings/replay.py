"""Every rating recomputed from the games (after a game is voided): each
settled, rated, not voided lobby game replayed in the order the games ended
with the same rules as settling (``ratings.model``), from new ratings.

The result is exactly what settling those games one after the other would
have given: the same functions on the same numbers in the same order.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from itertools import combinations

from sqlalchemy import delete, select, text
from sqlalchemy.orm import Session

from ..accounts import now
from ..ratings.model import MU, PAIR_WINDOW_DAYS, SIGMA, Skill, rate, seat_weights
from ..ratings.service import CommunityGameRow, CommunitySeatRow, RatingRow

NEW = Skill(MU, SIGMA)


def recompute(db: Session) -> int:
    """Replay every counted game in ``db``'s transaction: the seats' rating
    before, after and weight, and every rating row.  How many games."""
    if db.get_bind().dialect.name == "postgresql":
        # A game settling meanwhile (another process) waits for this.
        db.execute(text("LOCK TABLE ratings, community_games IN EXCLUSIVE MODE"))
    games = list(
        db.scalars(
            select(CommunityGameRow)
            .where(
                CommunityGameRow.rated.is_(True),
                CommunityGameRow.settled.is_(True),
                CommunityGameRow.voided.is_(False),
            )
            .order_by(CommunityGameRow.ended, CommunityGameRow.game_id)
        )
    )
    seats: dict[str, list[CommunitySeatRow]] = {}
    for s in db.scalars(select(CommunitySeatRow).order_by(CommunitySeatRow.seat)):
        seats.setdefault(s.game_id, []).append(s)
    skills: dict[tuple[int, str], Skill] = {}
    met: dict[tuple[int, str], set[int]] = {}
    together: dict[frozenset[int], list[datetime]] = {}
    window = timedelta(days=PAIR_WINDOW_DAYS)
    counted = {g.game_id for g in games}
    for gid, rows in seats.items():  # voided or unrated: no rating change
        if gid not in counted:
            for s in rows:
                s.mu_before = s.sigma_before = s.mu_after = s.sigma_after = s.weight = None
    for g in games:
        assert g.ended is not None
        rows = seats.get(g.game_id, [])
        users = [s.user_id for s in rows]
        before = [skills.get((u, g.rules_key), NEW) for u in users]
        since = g.ended - window
        earlier = {
            pair: sum(1 for t in together.get(pair, []) if t >= since)
            for pair in (frozenset(p) for p in combinations(users, 2))
        }
        weights = seat_weights(users, earlier, before)
        after = rate(before, [s.place or 1 for s in rows], weights)
        for s, b, w, (mu, sigma) in zip(rows, before, weights, after, strict=True):
            s.mu_before, s.sigma_before = b.mu, b.sigma
            s.mu_after, s.sigma_after = mu, sigma
            s.weight = w
            games_played, opponents = b.games, b.opponents
            if w > 0:
                mine = met.setdefault((s.user_id, g.rules_key), set())
                mine.update(u for u in users if u != s.user_id)
                games_played, opponents = games_played + 1, len(mine)
            skills[(s.user_id, g.rules_key)] = Skill(mu, sigma, games_played, opponents)
        for pair in combinations(users, 2):
            together.setdefault(frozenset(pair), []).append(g.ended)
    db.execute(delete(RatingRow))
    at = now()
    for (user_id, key), sk in skills.items():
        db.add(
            RatingRow(
                user_id=user_id,
                rules_key=key,
                mu=sk.mu,
                sigma=sk.sigma,
                games=sk.games,
                opponents=sk.opponents,
                updated=at,
            )
        )
    db.flush()
    return len(games)
