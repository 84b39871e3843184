"""A scoring variant defined here alone is scored alike by every part.

``TripleRolls`` ("a box with a Cinnamon Roll scores x3") and ``Everyone``
("a box scores for every player holding a donut of it; only a sole owner
may box it") are ``ScoringRule`` subclasses of this module, handed to
``Rules(scoring=...)``; nothing else in the source names them.  The engine,
the AI's evaluations (``evaluate``, ``fasteval``, ``value``, ``ppo``'s
features), the server's state and move preview and the lab's accounting must
each give the values worked out by hand below (docs/spec.md, 'Runs and
boxes', with the variant's change), and the fast evaluations must agree
with playing the moves on many positions of real games.
"""

from __future__ import annotations

import copy
import math
import pickle
import random
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from donutbox.ai import make_agent
from donutbox.ai.evaluate import expected_scores, margin
from donutbox.ai.fasteval import PlaceEvaluator, box_margin, fast_margin, fast_scores
from donutbox.ai.ppo import action_features, global_features
from donutbox.ai.value import BASE, features, model
from donutbox.core import Game, IllegalMove, RecordError, Rules
from donutbox.core.record import dump
from donutbox.core.scoring import CLOSERS, ScoringRule
from donutbox.core.worlds import sample_world
from donutbox.lab.match import result_of
from donutbox.server.session import GameSession
from donutbox.server.storage import Store, make_engine


class TripleRolls(ScoringRule):
    """A box with a Cinnamon Roll scores three times its donuts."""

    __slots__ = ()

    def value(self, size: int, roll: bool) -> int:
        return size * 3 if roll else size


class Everyone(ScoringRule):
    """A box (sealed or at the end) scores for every player holding one of
    its donuts; a player may box only a box all of whose donuts they hold
    (start-card donuts count in the size)."""

    __slots__ = ()

    def sealed_to(self, held: Sequence[int], players: int, closer: int) -> tuple[int, ...]:
        return tuple(p for p in range(players) if held[p])

    def end_to(self, held: Sequence[int], players: int) -> tuple[int, ...]:
        return tuple(p for p in range(players) if held[p])

    def need(self, size: int) -> int:
        return size


TRIPLE = Rules(scoring=TripleRolls("triple-rolls", "Triple Rolls", "x3 with an R.", "x3"))
EVERYONE = Rules(scoring=Everyone("everyone", "Everyone", "Every holder scores.", "all"))


def free(rules: Rules, start: str, *moves: str) -> Game:
    game = Game.free_game(start, rules, 2)
    for move in moves:
        game.play(move)
    return game


def scored(game: Game) -> list[tuple[int | None, str, int, int, list[int]]]:
    return [(d.ply, d.how, d.size, d.points, sorted(d.to)) for d in game.deliveries]


# Start RCSH: (0,0) R locked C, (1,0) C, (1,1) S, (0,1) H.  A's RCSS at (2,0):
# its R (2,0) touches (1,0) C and locks C.  C run (0,0),(1,0),(2,0),(3,0): 4
# donuts with two R, A 2, start 2; open edges: (0,0) 2, (1,0) 1, (2,0) 1,
# (3,0) 2 = 6.  S run (1,1),(2,1),(3,1): 3 donuts, A 2, start 1; open edges
# (1,2), (2,2), (3,2), (4,1) = 4.  B to move.
ROLL_POSITION = ("RCSH", "RCSS@2,0/0")
# Then B's HHHH at (-2,0) covers (-1,0), beside (0,0): the C run has 5 open
# edges; B's H's join (0,1) H (a run of 5, B 4, no R).  A to move.
ROLL_BOX_POSITION = (*ROLL_POSITION, "HHHH@-2,0/0")
# The seal example of tests/core/test_rules_delivery.py with an R: the H run
# of 4 (A's R locked H and A's H, the start card's two H) seals at ply 5.
ROLL_SEAL = (
    "SHHS",
    "RHCC@2,0/270",
    "SSSS@0,2/0",
    "SSSS@0,-2/0",
    "CCCC@2,2/0",
    "SSSS@-2,0/0",
)
ROLL_SEAL_MOVE = "CCCC@2,-2/0"


# -- the engine ------------------------------------------------------------------


def test_the_engine_scores_a_roll_box_three_times_sealed_boxed_and_at_the_end() -> None:
    game = free(TRIPLE, *ROLL_SEAL, ROLL_SEAL_MOVE)
    assert scored(game) == [(5, "sealed", 4, 12, [0])]
    assert game.deliveries[0].roll
    game = free(TRIPLE, *ROLL_BOX_POSITION, "box@0,0")
    assert scored(game) == [(2, "boxed", 4, 12, [0])]
    game = free(TRIPLE, *ROLL_POSITION)
    game.end()
    # the C run with its R: 4 x 3; the S run without: 3
    assert scored(game) == [(None, "end", 4, 12, [0]), (None, "end", 3, 3, [0])]
    assert game.scores == [15, 0]
    assert [d.roll for d in game.deliveries] == [True, False]


def test_the_engine_asks_the_variant_who_scores_and_who_may_box() -> None:
    # Start CCSS, A's CCSS at (2,0): C run (0,0)..(3,0) (start 2, A 2).  A may
    # not box it under Everyone (A holds 2 of 4, not all).
    game = free(EVERYONE, "CCSS", "CCSS@2,0/0", "HSSH@-2,0/0")
    assert "box@0,0" not in {str(m) for m in game.legal_moves()}
    with pytest.raises(IllegalMove, match="you hold 2 of its 4 donuts; you need at least 4"):
        game.play("box@0,0")
    # A plays CCCS at (4,0) instead: the C run grows to (0,0)..(5,0),(5,1):
    # start 2, A 5; the S run (-1,0),(-1,1),(0,1),(1,1),(2,1),(3,1),(4,1):
    # B 2 (HSSH), start 2, A 3.
    game.play("CCCS@4,0/0")
    game.end()
    # In reading order: the S run (first cell (-1,0)) to both holders, the C
    # run (first cell (0,0)) to A alone.
    assert scored(game) == [(None, "end", 7, 7, [0, 1]), (None, "end", 7, 7, [0])]
    assert game.scores == [14, 7]


def test_the_standard_rules_travel_by_name_and_copy_as_themselves() -> None:
    # A view's rules are pickled to the AI's worker processes: the rule goes
    # as its name (not its tables) and comes back as the same object.
    rules = Rules(closers=True)
    data = pickle.dumps(rules)
    assert len(data) < 300
    again = pickle.loads(data)
    assert again == rules and again.scoring_rule is CLOSERS
    assert copy.deepcopy(rules).scoring_rule is CLOSERS


def test_a_game_with_its_own_scoring_rule_is_refused_as_a_record() -> None:
    game = free(TRIPLE, *ROLL_POSITION)
    with pytest.raises(RecordError, match="triple-rolls"):
        dump(game)
    with pytest.raises(RecordError, match="closers"):
        Rules(closers=True, scoring=TRIPLE.scoring)


# -- the AI's evaluations ----------------------------------------------------------


def test_the_evaluations_value_a_roll_box_three_times() -> None:
    game = free(TRIPLE, *ROLL_POSITION)
    # A free game counts 20 turns left: risk = open x 0.08 + 0.1.  A leads
    # both runs by 2 (margin 2), B is to move.
    c_run = 12 * (1 - (6 * 0.08 + 0.1) / 3)  # 4 x 3
    s_run = 3 * (1 - (4 * 0.08 + 0.1) / 3)
    want = [c_run + s_run, 0.0]
    for got in (expected_scores(game), fast_scores(game)):
        assert got == pytest.approx(want, abs=1e-12)
    assert fast_margin(game, 0) == pytest.approx(c_run + s_run, abs=1e-12)
    # The fitted evaluation, from B's side: both runs are A's and A could box
    # them (obox), by 2 or more (obox_safe): 12 + 3.
    x = dict(zip(BASE, features(game), strict=True))
    assert x["obox"] == x["obox_safe"] == 15.0
    fitted = model()
    v = 1 / (1 + math.exp(-fitted.z(game)))
    assert fitted.win_values(game) == pytest.approx([1 - v, v], abs=1e-12)


def test_the_evaluations_value_a_sealing_box_it_and_the_end_by_the_variant() -> None:
    game = free(TRIPLE, *ROLL_BOX_POSITION)
    # A boxes the C run (12): the heuristic's margin is that of the game after it
    after = game.copy()
    after.play("box@0,0")
    assert after.scores == [12, 0]
    assert box_margin(game, game.check("box@0,0"), 0) == margin(after, 0)
    # PPO's features: a box-it's points / 10; open boxes A / B could box now:
    # A the C run (12) and the S run (3), B the H run of 5 (B 4 of 5)
    box = next(m for m in game.legal_moves() if str(m) == "box@0,0")
    assert action_features(game.view(0), [box])[0][3] == pytest.approx(1.2)
    g = global_features(game.view(0))
    assert (g[3], g[4]) == (pytest.approx(15 / 20), pytest.approx(5 / 20))


def _positions(rules: Rules, seed: int) -> Iterator[Game]:
    """Every position of a game between greedy (boxes often) and random agents."""
    game = Game.new(rules, 2, seed=seed)
    rng = random.Random(seed)
    agents = [make_agent("greedy"), make_agent("random")]
    yield game
    while not game.finished:
        p = game.to_move
        assert p is not None
        game.play(agents[p % 2].choose(game.view(p), rng))
        yield game


@pytest.mark.parametrize("rules", [TRIPLE, EVERYONE], ids=["triple-rolls", "everyone"])
def test_the_fast_evaluations_agree_with_playing_the_moves(rules: Rules) -> None:
    """On real games under the variant: ``fast_scores`` is the heuristic
    evaluation; ``box_margin`` and the placement evaluator (margin and gain,
    also in the Final Lap where a move ends the game) are what copying and
    playing the move gives."""
    rng = random.Random(2)
    placed = boxed = last = 0
    for seed in range(2):
        for i, game in enumerate(_positions(rules, seed)):
            assert fast_scores(game) == expected_scores(game)
            if game.finished:
                continue
            me = game.to_move
            assert me is not None
            world = sample_world(game.view(me), rng)
            assert fast_scores(world) == expected_scores(world)
            for box in game.box_moves():
                after = game.copy()
                after.play(box)
                assert box_margin(game, box, me) == margin(after, me)
                boxed += 1
            if i % 3 and game.final_lap_turns is None:
                continue
            places = PlaceEvaluator(game, me)
            assert places.applies
            last += game.final_lap_turns is not None
            for move in game.legal_moves()[::2]:
                if move.kind != "place":
                    continue
                after = game.copy()
                after.play(move)
                assert places.margin(move) == fast_margin(after, me), move
                assert places.gain(move) == float(after.scores[me] - game.scores[me]), move
                placed += 1
    assert placed > 200 and boxed > 0 and last > 0


# -- the server's state and preview ------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(make_engine(f"sqlite:///{tmp_path / 'games.db'}"))
    yield s
    s.close()


def _session(store: Store, game: Game) -> GameSession:
    """A hot-seat session holding ``game``.  No record can name a rule of a
    test's own, so the session is made from the same moves under the
    standard rules and then given the variant's game."""
    standard = Game.free_game(game.start, Rules(), 2)
    for move in game.history:
        standard.play(move)
    stored = store.create("t", "hotseat", ["human", "human"], {}, dump(standard))
    session = GameSession(stored, store)
    session.game = game
    return session


def test_the_server_state_and_preview_score_by_the_variant(store: Store) -> None:
    session = _session(store, free(TRIPLE, *ROLL_POSITION))
    state = session.state(0)
    boxes = {(b["x"], b["y"]): b for b in state["boxes"]}
    # the C run (first cell (0,0)): 4 with an R -> 12, to A at the end; the
    # S run (first cell (1,1)): 3 -> 3, to A
    assert boxes[(0, 0)]["points"] == 12 and boxes[(0, 0)]["end_to"] == [0]
    assert boxes[(1, 1)]["points"] == 3 and boxes[(1, 1)]["end_to"] == [0]
    assert state["if_ended"] == [15, 0]
    # The preview of the sealing move: 12 to A.
    session = _session(store, free(TRIPLE, *ROLL_SEAL))
    preview = session.preview(ROLL_SEAL_MOVE, 1)
    assert preview["deliveries"] == [
        {"ply": 5, "how": "sealed", "size": 4, "points": 12, "to": [0]}
    ]
    assert preview["scores"] == [12, 0]


def test_the_server_state_says_who_scores_by_the_variant(store: Store) -> None:
    # Everyone: of the example above, the S run of 7 would score for both
    # players at the end, the C run of 7 for A.
    game = free(EVERYONE, "CCSS", "CCSS@2,0/0", "HSSH@-2,0/0", "CCCS@4,0/0")
    state = _session(store, game).state(0)
    ends = {(b["x"], b["y"]): (b["size"], b["points"], b["end_to"]) for b in state["boxes"]}
    assert ends == {(-1, 0): (7, 7, [0, 1]), (0, 0): (7, 7, [0])}
    assert state["if_ended"] == [14, 7]


# -- the lab ---------------------------------------------------------------------------


def test_the_lab_counts_roll_points_by_the_variant() -> None:
    game = free(TRIPLE, *ROLL_POSITION)
    game.end()
    result = result_of(game, seed=0, seats=["a", "b"], swaps=0, passes=0, seconds=0.0, record={})
    assert result.points_by_source["end"] == [15, 0]
    assert result.roll_points == [12, 0]  # the C run's 12 (x3, not the x2 of the rules)
