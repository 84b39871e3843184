"""Records stay readable across releases (docs/notation.md, "Compatibility").

Backward: records written by the first release (0.1.0, the project's first
commit) replay to the same outcome today.  ``tests/data/first-release``
holds three records its ``record.dump`` wrote, each beside the
``donutbox replay --json`` output that release printed for it
(``NAME.replay.json``).  The two short games' outcomes were also worked out
by hand from RULES.md (below); the seeded one is checked against the first
release's output.

Forward: a record leaves out the rule options at their default (the
defaults are part of the format, RULES.md section 9), so an option added
later does not make a standard-rules record unreadable by an older
release; a reader that meets an option it does not know refuses the record
in one line naming it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from donutbox.core import Game, RecordError, Rules, dump, load
from donutbox.summary import replay_summary

FIRST = Path(__file__).resolve().parents[1] / "data" / "first-release"
NAMES = ("dealt", "free", "seeded")


def _record(name: str) -> dict[str, Any]:
    record: dict[str, Any] = json.loads((FIRST / f"{name}.json").read_text(encoding="utf-8"))
    return record


def _end(size: int, to: list[int]) -> dict[str, Any]:
    return {"ply": None, "how": "end", "size": size, "points": size, "to": to}


def test_the_first_release_wrote_every_rule_option() -> None:
    """What makes these records the old format: ``rules`` lists all three
    options, defaults included."""
    for name in NAMES:
        assert set(_record(name)["rules"]) == {"match", "layout", "closers"}


def test_a_dealt_game_of_the_first_release_worked_out_by_hand() -> None:
    """Standard rules; start CCCC at (0,0) (neutral).  Ann CCSS@2,0: C at
    (2,0),(3,0) joins the start card's C run (6), S at (2,1),(3,1).  Bob
    CCBB@0,-2/180 (BBCC): C at (0,-1),(1,-1) joins it (8).  Ann SSHH@2,2: S
    at (2,2),(3,2) joins her S run (4), and her pile is empty: Final Lap.
    Bob CCSS@4,0: C run 10 (Ann 2, Bob 4, nobody 4), S run 6 (Ann 4, Bob
    2); the game ends.  End scoring, in reading order of first cells: the C
    run (first cell (0,-1)) 10 to Bob, the S run ((2,1)) 6 to Ann; the H
    and B pairs are no boxes.  6-10, no deliveries, Bob wins."""
    game = load(_record("dealt"))
    assert game.finished and game.ended_by == "final-lap"
    assert (game.scores, game.boxes_delivered, game.winners) == ([6, 10], [0, 0], [1])
    summary = replay_summary(game, None)
    assert summary["deliveries"] == [_end(10, [1]), _end(6, [0])]


def test_a_free_game_of_the_first_release_worked_out_by_hand() -> None:
    """Perfect Match, Splitzkies, Closers; start CCSS.  Ann CCSS@2,0: C run
    (0,0)..(3,0) of 4 (Ann 2), S run (0,1)..(3,1) of 4.  Bob SSHH@0,2: the
    S run grows to 6.  Ann boxes the C run (she holds 2 of 4): 4 to her,
    one delivery.  Bob SSHH@2,2: every S touches an S, the H at (2,3)
    touches the H at (1,3): S run 8 (Bob 4), H run 4 (Bob 4).  "end":
    both score to Bob at the end (Closers changes nothing: nothing was
    sealed).  4-12; delivered 1-0; Bob wins."""
    game = load(_record("free"))
    assert game.rules == Rules("perfect-match", "splitzkies", True)
    assert game.finished and game.ended_by == "record"
    assert (game.scores, game.boxes_delivered, game.winners) == ([4, 12], [1, 0], [1])
    summary = replay_summary(game, None)
    boxed = {"ply": 2, "how": "boxed", "size": 4, "points": 4, "to": [0]}
    assert summary["deliveries"] == [boxed, _end(8, [1]), _end(4, [1])]


@pytest.mark.parametrize("name", NAMES)
def test_first_release_records_replay_as_the_first_release_said(name: str) -> None:
    said = json.loads((FIRST / f"{name}.replay.json").read_text(encoding="utf-8"))
    now = replay_summary(load(_record(name)), None)
    for summary in (said, now):  # cells in any order (tests/data/README.md)
        summary["cells"].sort(key=lambda c: (c["y"], c["x"]))
    assert now == said


def test_a_record_leaves_out_the_rule_options_at_their_default() -> None:
    assert dump(Game.new(Rules(), 2, seed=1))["rules"] == {}
    assert dump(Game.new(Rules(match="perfect-match"), 2, seed=1))["rules"] == {
        "match": "perfect-match"
    }
    every = Rules("perfect-match", "splitzkies", True)
    assert dump(Game.free_game("CCSS", every))["rules"] == {
        "match": "perfect-match",
        "layout": "splitzkies",
        "closers": True,
    }
    for rules in Rules.all():  # and reads back as the same rules
        assert load(dump(Game.free_game("CCSS", rules))).rules == rules


def test_a_record_from_a_newer_release_is_refused_naming_the_option() -> None:
    record = dict(_record("dealt"), rules={"match": "one-good-match", "sprinkles": "double"})
    with pytest.raises(RecordError) as info:
        load(record)
    message = str(info.value)
    assert message.startswith("rules: unknown key 'sprinkles'")
    assert "newer release" in message and "\n" not in message
