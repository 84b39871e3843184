"""Game data for imitation: finished games as rows, written and loaded.

One row a finished game (a dict; a JSON line, or a Parquet row)::

    {"source": "lab" | "server", "rules": {...}, "players": 2,
     "decks": [[face, ...], ...], "moves": ["CCSS@2,0/90", ...],
     "scores": [..], "winners": [..], "seats": ["heuristic", "mcts:200"]}

``decks`` (top card first) and ``moves`` replay the game exactly
(``donutbox.core.Game.deal``); ``seats`` names who played each seat: the
agent for the lab's games, ``human`` or the agent for the server's.  No
row holds a player's name, an account, a game id or a date.

- ``rows_from_records(records, source)``: rows from game records
  (``donutbox/1``, e.g. the ``records.jsonl`` that ``donutbox sim`` and
  ``donutbox tournament`` write with ``--out``);
- ``server_rows(url)``: the server's finished, rated, not voided games from
  its database (read only);
- ``write(rows, path)`` / ``load(path)``: JSON lines (``.jsonl``) or Parquet
  (``.parquet``, needs pyarrow);
- ``steps(row, encoder)``: the row replayed as (observation, legal actions,
  action taken, seat) per move, in an environment's encoding.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..core.game import Game
from ..core.record import load as load_record
from ..core.rules import Rules
from .encoding import Encoder

#: The keys of a row, in order.
FIELDS = ("source", "rules", "players", "decks", "moves", "scores", "winners", "seats")


def row_from_record(record: Mapping[str, Any], source: str, seats: list[str]) -> dict[str, Any]:
    """A row of a finished dealt game's record (ValueError if it is not one)."""
    game = load_record(dict(record))
    if not game.finished or game.decks is None:
        raise ValueError("only finished dealt games make rows")
    return {
        "source": source,
        "rules": game.rules.to_dict(),
        "players": game.players,
        "decks": [list(d) for d in game.decks],
        "moves": [str(m) for m in game.history],
        "scores": list(game.scores),
        "winners": list(game.winners),
        "seats": list(seats),
    }


def rows_from_records(
    records: Iterable[Mapping[str, Any]], source: str = "lab"
) -> Iterator[dict[str, Any]]:
    """Rows of the finished dealt games among ``records`` (others are skipped);
    ``seats`` from a record's ``agents`` (the lab writes it), else ``?``."""
    for record in records:
        agents = record.get("agents")
        players = record.get("players") or []
        seats = [str(a) for a in agents] if isinstance(agents, list) else ["?"] * len(players)
        try:
            yield row_from_record(record, source, seats)
        except (ValueError, KeyError, TypeError):
            continue


def server_rows(url: str) -> Iterator[dict[str, Any]]:
    """The server database's finished, rated, not voided games (read only),
    as rows without names (module doc)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    query = text(
        "SELECT g.seats, g.record FROM games g JOIN community_games c ON c.game_id = g.id "
        "WHERE g.finished AND c.rated AND NOT c.voided AND c.ended IS NOT NULL "
        "ORDER BY c.ended, g.id"
    )
    try:
        with engine.connect() as conn:
            for seats_text, record_text in conn.execute(query):
                seats = [str(s) for s in json.loads(seats_text)]
                try:
                    yield row_from_record(json.loads(record_text), "server", seats)
                except (ValueError, KeyError, TypeError):
                    continue
    finally:
        engine.dispose()


def write(rows: Iterable[Mapping[str, Any]], path: Path) -> int:
    """Write ``rows`` to ``path`` (``.parquet``: Parquet; else JSON lines);
    the number written."""
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = [{**r, "rules": json.dumps(r["rules"], sort_keys=True)} for r in rows]
        pq.write_table(pa.Table.from_pylist(table), path)
        return len(table)
    count = 0
    with path.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps({k: r[k] for k in FIELDS}) + "\n")
            count += 1
    return count


def load(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a dataset file (JSON lines, or Parquet with pyarrow)."""
    path = Path(path)
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
        return [{**r, "rules": json.loads(r["rules"])} for r in rows]
    with path.open(encoding="utf-8") as fh:
        found: list[dict[str, Any]] = [json.loads(line) for line in fh if line.strip()]
    return found


def replay(row: Mapping[str, Any]) -> Game:
    """The row's game, dealt and not yet played."""
    return Game.deal(row["decks"], Rules.from_dict(row["rules"], "rules"), int(row["players"]))


def steps(
    row: Mapping[str, Any], encoder: Encoder
) -> Iterator[tuple[np.ndarray, list[int], int, int]]:
    """Per move of the row: the mover's observation, their legal actions,
    the action they took, and their seat (``encoder``: an environment's
    ``Encoder`` for the row's rules and players)."""
    game = replay(row)
    for text in row["moves"]:
        seat = game.to_move
        assert seat is not None
        legal = encoder.legal(game)
        action = encoder.encode(game, text)
        actions = getattr(legal, "actions", None)
        listed = list(actions()) if actions is not None else sorted(legal)
        yield encoder.observe(game, seat), listed, action, seat
        game.play(text)
