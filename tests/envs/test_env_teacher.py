"""The two-ply teacher of the afterstate learner (envs/teacher.py): what a
label is, what it may read, and that games played on other processes give
the same labels."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from env_helpers import position

from donutbox.ai import make_agent
from donutbox.ai.evaluate import margin
from donutbox.ai.mcts import MctsAgent
from donutbox.core import Game
from donutbox.envs import afterstate
from donutbox.envs.afterstate import afterstate_values, observe
from donutbox.envs.teacher import (
    GameOrder,
    Generator,
    label_turn,
    play_and_label,
    search_labels,
    two_ply_value,
)
from donutbox.envs.valuenet import Sample, ValueNet


def _same(a: Sample, b: Sample) -> bool:
    return (
        np.array_equal(a.features, b.features)
        and np.array_equal(a.places, b.places)
        and np.array_equal(a.boxes, b.boxes)
    )


def _hidden_changed(game: Game, other: int) -> Game:
    """``game`` with ``other``'s tray and pile dealt again from the same cards."""
    changed = game.copy()
    hidden = game.trays[other] + game.piles[other]
    random.Random(9).shuffle(hidden)
    size = len(game.trays[other])
    changed.trays[other][:] = hidden[:size]
    changed.piles[other][:] = hidden[size:]
    assert changed.trays[other] != game.trays[other]
    return changed


def test_a_label_is_the_margin_after_the_heuristics_reply() -> None:
    game = position(seed=4, plies=10)
    me = game.to_move
    assert me is not None
    heuristic = make_agent("heuristic")
    for move in game.legal_moves()[:5]:
        sample, value = two_ply_value(game, me, move, heuristic, random.Random(3))
        # by hand: play the move, let the other player answer as the
        # heuristic does with the same random draws, value it with the
        # reference evaluation (ai/evaluate.py), in tens of points
        after = game.copy()
        after.play(move)
        assert sample is not None and _same(sample, observe(after, me))
        other = after.to_move
        assert other == 1 - me
        after.play(heuristic.choose(after.view(other), random.Random(3)))
        assert after.to_move == me
        assert value == pytest.approx(margin(after, me) / 10.0, abs=1e-9)


def test_a_move_that_ends_the_game_is_its_final_score_difference() -> None:
    game = Game.new(seed=21)
    greedy = make_agent("greedy")
    rng = random.Random(21)
    while True:
        p = game.to_move
        assert p is not None
        ending = []
        for move in game.legal_moves():
            after = game.copy()
            after.play(move)
            if after.finished:
                ending.append((move, after))
        if ending:
            break
        game.play(greedy.choose(game.view(p), rng))
    move, after = ending[0]
    sample, value = two_ply_value(game, p, move, greedy, rng)
    assert sample is None
    assert value == (after.scores[p] - after.scores[1 - p]) / 10.0


def test_the_inputs_do_not_depend_on_the_other_players_hidden_cards() -> None:
    game = position(seed=5, plies=12)
    me = game.to_move
    assert me is not None
    changed = _hidden_changed(game, 1 - me)
    heuristic = make_agent("heuristic")
    net = ValueNet(seed=1)
    first = label_turn(game, heuristic, random.Random(2), 4, 2, net, 2)
    second = label_turn(changed, heuristic, random.Random(2), 4, 2, net, 2)
    assert len(first) == len(second) >= 6
    assert all(_same(a, b) for (a, _), (b, _) in zip(first, second, strict=True))


def test_the_moves_the_learner_values_most_are_labelled() -> None:
    game = position(seed=6, plies=14)
    me = game.to_move
    assert me is not None
    net = ValueNet(seed=7)
    moves = game.legal_moves()
    values = afterstate_values(net, game, me, moves)
    favourites = [moves[i] for i in np.argsort(-values)[:2]]
    heuristic = make_agent("heuristic")
    boxes = sum(1 for m in moves if m.kind == "box")
    without = label_turn(game, heuristic, random.Random(1), 1, 0)
    labels = label_turn(game, heuristic, random.Random(1), 1, 0, net, 2)
    assert len(without) in (1 + boxes, boxes)  # the best (maybe a box-it) and the box-its
    for move in favourites:
        after = game.copy()
        after.play(move)
        assert any(_same(observe(after, me), s) for s, _ in labels)
    assert len(without) < len(labels) <= len(without) + 2


def test_every_box_it_is_labelled() -> None:
    heuristic = make_agent("heuristic")
    for seed in range(3, 40):
        game = position(seed=seed, plies=16)
        me = game.to_move
        assert me is not None
        boxes = [m for m in game.legal_moves() if m.kind == "box"]
        if len(boxes) >= 2:
            break
    assert len(boxes) >= 2, "no position with two box-its in the seeds tried"
    labels = label_turn(game, heuristic, random.Random(1), 1, 0)
    # without them: the heuristic's best move only
    assert len(label_turn(game, heuristic, random.Random(1), 1, 0, box_its=False)) == 1
    for move in boxes:
        after = game.copy()
        after.play(move)
        if not after.finished:
            assert any(_same(observe(after, me), s) for s, _ in labels), move


def test_games_on_other_processes_give_the_same_labels() -> None:
    orders = [GameOrder(seed, ("behaviour", "behaviour"), "greedy", 0.1, 1, 1) for seed in (1, 2)]
    here = [play_and_label(o) for o in orders]
    generator = Generator(2)
    try:
        there = generator.start(orders).get()
    finally:
        generator.close()
    for (mine, _), (theirs, cpu) in zip(here, there, strict=True):
        assert cpu > 0.0  # another process's time, for the budget
        assert len(mine) == len(theirs) > 20  # turns with two labels or more
        for turn, other in zip(mine, theirs, strict=True):
            assert len(turn) == len(other) >= 2  # the best, one other, the box-its
            for (a, va), (b, vb) in zip(turn, other, strict=True):
                assert _same(a, b) and va == vb
    # in this process the time is this process's own: reported as none
    assert all(cpu == 0.0 for _, cpu in Generator(1).start(orders[:1]).get())


def test_an_evaluation_on_two_processes_plays_the_same_games(tmp_path: Path) -> None:
    path = tmp_path / "v.npz"
    ValueNet(seed=8).save(str(path))
    one, _ = afterstate.evaluate_file(str(path), "greedy", 3, 1)
    two, cpu = afterstate.evaluate_file(str(path), "greedy", 3, 2)
    direct = afterstate.evaluate(afterstate.make(str(path)), "greedy", 3)
    assert one.games == two.games == direct.games == 6
    assert one.wins == two.wins == direct.wins
    assert cpu > 0.0
    # deals 2 to 4 (--first-deal 2): the same games as evaluate's from 500,002
    later, _ = afterstate.evaluate_file(str(path), "greedy", 3, 2, first=2)
    assert later.wins == afterstate.evaluate(afterstate.make(str(path)), "greedy", 3, 500_002).wins


def _searcher() -> MctsAgent:
    hard = make_agent("hard", iterations=60, seconds=None, stop_z=None)
    assert isinstance(hard, MctsAgent)
    return hard


def test_search_labels_are_the_roots_values_as_margins() -> None:
    game = position(seed=6, plies=14)
    me = game.to_move
    assert me is not None
    labels = search_labels(game, _searcher(), random.Random(4))
    root = _searcher().search(game.view(me), random.Random(4))
    assert len(labels) == len(root) > 1
    for (sample, value), (move, _visits, mean) in zip(labels, root, strict=True):
        after = game.copy()
        after.play(move)
        assert _same(sample, observe(after, me))
        # by hand: the search squashes a margin m (points) into
        # 1 / (1 + exp(-m / 20)); the label is m in tens of points
        assert 1.0 / (1.0 + np.exp(-value * 10.0 / 20.0)) == pytest.approx(mean, abs=1e-9)


def test_search_labels_include_the_move_the_learner_values_most() -> None:
    game = position(seed=3, plies=14)
    me = game.to_move
    assert me is not None
    net = ValueNet(seed=3)
    moves = game.legal_moves()
    favourite = moves[int(np.argmax(afterstate_values(net, game, me, moves)))]
    root = [m for m, _, _ in _searcher().search(game.view(me), random.Random(4))]
    assert favourite not in root  # the search alone would not value it
    labels = search_labels(game, _searcher(), random.Random(4), net)
    after = game.copy()
    after.play(favourite)
    assert len(labels) == len(root) + 1
    assert any(_same(sample, observe(after, me)) for sample, _ in labels)


def test_search_labels_do_not_read_the_other_players_hidden_cards() -> None:
    game = position(seed=7, plies=12)
    me = game.to_move
    assert me is not None
    changed = _hidden_changed(game, 1 - me)
    first = search_labels(game, _searcher(), random.Random(5))
    second = search_labels(changed, _searcher(), random.Random(5))
    assert len(first) == len(second) > 1
    for (a, x), (b, y) in zip(first, second, strict=True):
        assert _same(a, b) and x == y


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["--search-seconds", "0"], "--search-seconds must be above 0"),
        (["--evaluate", "x.npz", "--first-deal", "-1"], "--first-deal must be from 0"),
        (["--jobs", "0"], "--jobs must be from 1 to 64"),
        (["--top", "0", "--extra", "0", "--student", "0"], "label no move"),
        (["--target", "luck"], "invalid choice"),
    ],
)
def test_bad_teacher_options_get_one_line(
    argv: list[str], reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if argv[0] == "--target":  # argparse's own refusal: usage and the reason
        with pytest.raises(SystemExit):
            afterstate.main(argv)
    else:
        assert afterstate.main(argv) == 2
    err = capsys.readouterr().err
    assert reason in err
