"""The fitted leaf evaluation (ai/value.py): finished games, monotonicity in
the score, public information only, a proper distribution, the file loader."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import donutbox
from donutbox.ai import make_agent
from donutbox.ai.value import (
    BASE,
    FORMAT,
    NAMES,
    ValueModel,
    dot,
    features,
    load_weights,
    model,
    parse_weights,
    phase,
    win_values,
)
from donutbox.core import Game, InputError, Rules
from donutbox.core.worlds import sample_world


def _games(
    seed: int, players: int = 2, agents: tuple[str, ...] = ("heuristic", "greedy")
) -> Iterator[Game]:
    """Every position of a seeded game between the named agents."""
    game = Game.new(Rules(), players, seed=seed)
    rng = random.Random(seed)
    bots = [make_agent(a) for a in agents]
    yield game
    while not game.finished:
        p = game.to_move
        assert p is not None
        game.play(bots[p % len(bots)].choose(game.view(p), rng))
        yield game


def _with(game: Game, **fields: Any) -> Game:
    """The same game with some fields of its state replaced."""
    return Game.from_state(game.state()._replace(**fields))


def test_finished_games_give_exactly_one_to_the_winner() -> None:
    for seed in range(3):
        *_, last = _games(seed)
        assert last.finished
        values = win_values(last)
        (winner,) = last.winners  # no shared win in these games
        assert values[winner] == 1.0
        assert values[1 - winner] == 0.0


def test_a_tie_on_score_goes_to_more_boxes_delivered_then_is_shared() -> None:
    *_, last = _games(5)
    s = last.scores[0]
    # same score: the tie-break (boxes delivered) decides, as Game.winners does
    tied = _with(last, scores=[s, s], delivered=[3, 5])
    assert tied.winners == [1]
    assert win_values(tied) == [0.0, 1.0]
    shared = _with(last, scores=[s, s], delivered=[4, 4])
    assert shared.winners == [0, 1]
    assert win_values(shared) == [0.5, 0.5]
    three = Game.new(Rules(), 3, seed=1)
    done = _with(three, scores=[7, 9, 9], delivered=[5, 2, 2], finished=True)
    assert win_values(done) == [0.0, 0.5, 0.5]


def test_values_are_in_0_1_and_sum_to_1() -> None:
    for players in (2, 3, 4):
        for game in _games(11, players, ("greedy", "random")):
            values = win_values(game)
            assert len(values) == players
            assert math.isclose(sum(values), 1.0, abs_tol=1e-12)
            if not game.finished:
                assert all(0.0 < v < 1.0 for v in values)


@pytest.mark.parametrize("players", [2, 3])
def test_a_larger_score_lead_gives_a_larger_value(players: int) -> None:
    checked = 0
    agents = ("heuristic", "greedy") if players == 2 else ("greedy", "random")
    for seed in range(2):
        for game in _games(seed, players, agents):
            if game.finished:
                continue
            s = game.scores
            for p in range(players):
                more = list(s)
                more[p] += 5
                ahead = _with(game, scores=more)
                assert win_values(ahead)[p] > win_values(game)[p]
                checked += 1
    assert checked > 150


def test_a_lead_late_in_the_game_counts_more_than_the_same_lead_early() -> None:
    # the same counter and scores (player 0 ahead by 10), more or fewer cards
    # left: the nearer the end, the surer the win (and without the lead,
    # the nearer the end, the surer the loss)
    game = Game.new(Rules(), 2, seed=3)
    ahead = _with(game, scores=[10, 0])
    late = _with(ahead, piles=[p[:2] for p in ahead.piles])
    assert late.cards_left < ahead.cards_left
    assert win_values(late)[0] > win_values(ahead)[0] > win_values(game)[0]
    behind = _with(game, scores=[0, 10])
    late_behind = _with(behind, piles=[p[:2] for p in behind.piles])
    assert win_values(late_behind)[0] < win_values(behind)[0] < win_values(game)[0]


def test_hidden_cards_do_not_change_the_value() -> None:
    rng = random.Random(4)
    compared = 0
    for game in _games(7):
        if game.finished:
            continue
        view = game.view(game.to_move)  # type: ignore[arg-type]
        a = sample_world(view, rng)
        b = sample_world(view, rng)
        if a.trays == b.trays and a.piles == b.piles:
            continue
        assert win_values(a) == win_values(b) == win_values(game) == win_values(view)
        compared += 1
    assert compared > 40


def test_the_fast_path_equals_the_readable_model() -> None:
    m = model()
    for seed in (2, 9):
        for game in _games(seed):
            if game.finished:
                continue
            p = 1.0 / (1.0 + math.exp(-dot(m.weights, features(game), phase(game))))
            me = game.to_move
            assert me is not None
            assert win_values(game)[me] == pytest.approx(p, abs=1e-12)
            assert m.z(game) == pytest.approx(math.log(p / (1 - p)), abs=1e-9)


def test_features_by_hand_on_an_opening() -> None:
    # After the first move the counter holds the start card and one card:
    # the features are the runs' numbers, worked out from the counter here.
    game = Game.new(Rules(), 2, seed=12)
    game.play(make_agent("heuristic").choose(game.view(0), random.Random(0)))
    x = dict(zip(("bias", "seat", "lap", "banked", "delivered"), features(game), strict=False))
    assert x == {"bias": 1.0, "seat": -1.0, "lap": 0.0, "banked": 0.0, "delivered": 0.0}
    # player 1 to move holds nothing: every run with a holder is player 0's
    f = dict(zip(BASE, features(game), strict=True))
    assert f["mbox"] == f["m1"] == f["mbox_safe"] == f["tie"] == 0.0
    held = [r for r in game.counter.runs.values() if len(r.cells) >= 3 and r.held[0]]
    # a point a donut, doubled with a Cinnamon Roll (docs/spec.md, "Runs and boxes")
    boxable = sum(
        len(r.cells) * (2 if r.rolls else 1) for r in held if 2 * r.held[0] >= len(r.cells)
    )
    assert f["obox"] == boxable


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "value.json"
    path.write_text(json.dumps(data))
    return path


def test_a_weights_file_round_trips(tmp_path: Path) -> None:
    weights = {n: 0.01 * i for i, n in enumerate(NAMES)}
    m = load_weights(_write(tmp_path, {"format": FORMAT, "features": weights, "multi": {}}))
    assert isinstance(m, ValueModel)
    assert m.weights == weights
    assert m.multi == {"margin": 0.0, "margin*q": 0.0}


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ([], "the top level must be an object"),
        ({"format": "x", "features": {}, "multi": {}}, "format: must be"),
        ({"format": FORMAT, "multi": {}}, "features: must be an object"),
        ({"format": FORMAT, "features": {"banked": 1}, "multi": []}, "multi: must be an object"),
        ({"format": FORMAT, "features": {"score": 1}, "multi": {}}, "features.score: unknown"),
        ({"format": FORMAT, "features": {"banked": "1"}, "multi": {}}, "features.banked: a finite"),
        (
            {"format": FORMAT, "features": {"banked": True}, "multi": {}},
            "features.banked: a finite",
        ),
        ({"format": FORMAT, "features": {}, "multi": {"margin": None}}, "multi.margin: a finite"),
    ],
)
def test_a_malformed_weights_file_is_refused_with_one_line(
    tmp_path: Path, data: object, reason: str
) -> None:
    with pytest.raises(InputError) as e:
        load_weights(_write(tmp_path, data))
    assert reason in str(e.value)
    assert "\n" not in str(e.value)


def test_unreadable_or_broken_json_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        load_weights(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": ')
    with pytest.raises(InputError, match="not JSON"):
        load_weights(bad)
    # infinities are not numbers a model can use
    with pytest.raises(InputError, match=r"features\.banked"):
        parse_weights({"format": FORMAT, "features": {"banked": math.inf}, "multi": {}})


def test_the_shipped_weights_load_and_say_where_they_came_from() -> None:
    from importlib import resources

    data = json.loads((resources.files("donutbox.ai") / "data" / "value.json").read_text())
    assert data["provenance"]["games"] > 0
    assert data["held_out"]["fitted"]["log_loss"] < data["held_out"]["squash20"]["log_loss"]
    parse_weights(data)


def test_state_of_a_view_and_of_its_game_agree_on_every_rule_set() -> None:
    # every variant: the values read only public fields, so a view and the
    # game give the same numbers
    for rules in donutbox.Rules.all():
        game = Game.new(rules, 2, seed=21)
        rng = random.Random(0)
        bot = make_agent("greedy")
        while not game.finished:
            p = game.to_move
            assert p is not None
            assert win_values(game.view(p)) == win_values(game)
            game.play(bot.choose(game.view(p), rng))
