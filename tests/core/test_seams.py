"""The core's seams: one move generator, one definition of a game's state,
and nobody outside ``Game`` touching its private fields."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import donutbox
from donutbox.ai.evaluate import expected_scores, margin
from donutbox.core import Game, GameState, Rules
from donutbox.core.record import dump
from donutbox.core.worlds import sample_world

SRC = Path(donutbox.__file__).parent


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found.add(node.module or "")
    return found


def test_view_and_move_generation_do_not_import_the_game() -> None:
    for name in ("view.py", "movegen.py", "state.py", "policy.py", "rules.py", "counter.py"):
        assert "game" not in _imports(SRC / "core" / name), name


def test_no_code_outside_game_sets_or_reads_its_private_fields() -> None:
    private = {s for s in Game.__slots__ if s.startswith("_")}
    for path in SRC.rglob("*.py"):
        if path == SRC / "core" / "game.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in private:
                raise AssertionError(f"{path.relative_to(SRC)}:{node.lineno} uses .{node.attr}")


def _midgame(seed: int, plies: int, rules: Rules | None = None) -> Game:
    game = Game.new(rules or Rules(), 2, seed)
    rng = random.Random(seed)
    for _ in range(plies):
        moves = game.legal_moves()
        game.play(moves[rng.randrange(len(moves))])
    return game


def test_state_lists_every_field_and_round_trips() -> None:
    # all but the derived _match and _scoring (the rules' policies)
    assert len(GameState._fields) == len(Game.__slots__) - 2
    game = _midgame(2, 15)
    again = Game.from_state(game.state())
    assert dump(again) == dump(game)
    assert again.legal_moves() == game.legal_moves()
    assert again.view(1).to_dict() == game.view(1).to_dict()


def test_state_and_copy_are_independent_of_the_game() -> None:
    game = _midgame(4, 10)
    before = dump(game)
    state = game.state()
    state.trays[0].clear()
    state.scores[0] = 99
    copy = game.copy()
    copy.play(copy.legal_moves()[0])
    assert dump(game) == before
    assert copy.ply == game.ply + 1


def test_a_view_and_a_game_give_the_same_legal_moves() -> None:
    for rules in Rules.all():
        game = _midgame(6, 12, rules)
        me = game.to_move
        assert me is not None
        assert game.view(me).legal_moves() == game.legal_moves()


def test_the_evaluation_reads_a_view_like_its_game() -> None:
    game = _midgame(8, 20)
    for p in (0, 1):
        view = game.view(p)
        assert expected_scores(view) == expected_scores(game)
        assert margin(view, p) == margin(game, p)
        world = sample_world(view, random.Random(p))
        assert expected_scores(world) == expected_scores(game)
