"""Every IllegalMove names the rule it breaks (in one line), and changes nothing.

Positions are worked by hand: start CCSS is (0,0) C, (1,0) C, (1,1) S, (0,1) S.
"""

from __future__ import annotations

import pytest

import donutbox
from donutbox.core.record import dump
from donutbox.core.record import replay_partial as replay


def free(start: str, *moves: str, **rules: object) -> donutbox.Game:
    game = donutbox.Game.free_game(start, donutbox.Rules(**rules), 2)  # type: ignore[arg-type]
    for move in moves:
        game.play(move)
    return game


def deal(*decks: list[str], **rules: object) -> donutbox.Game:
    return donutbox.Game.deal(list(decks), donutbox.Rules(**rules), len(decks))  # type: ignore[arg-type]


def message(game: donutbox.Game, move: str) -> str:
    before = dump(game)
    with pytest.raises(donutbox.IllegalMove) as info:
        game.play(move)
    text = str(info.value)
    assert "\n" not in text and text.strip()
    assert dump(game) == before  # an illegal move changes nothing
    return text.lower()


STUCK = (["BBBB"] * 4 + ["CCCC", "BBBB"], ["BBBB"] * 5)
CAN_PLACE = (["CCSS", "BBBB", "BBBB", "BBBB", "CCCC", "BBBB"], ["BBBB"] * 5)

CASES = [
    # (name, game builder, move, words the message must contain)
    ("odd x", lambda: free("CCSS"), "CCSS@1,0/0", ["squared away"]),
    ("odd y", lambda: free("CCSS"), "CCSS@2,1/0", ["squared away"]),
    ("no pair", lambda: free("CCSS"), "HHHH@2,0/0", ["one good match"]),
    (
        "no pair, Splitzkies",
        lambda: free("CCSS", layout="splitzkies"),
        "HHHH@2,1/0",
        ["one good match"],
    ),
    (
        "perfect: SW H vs S",
        lambda: free("CCSS", match="perfect-match"),
        "CHHH@2,0/0",
        ["perfect match"],
    ),
    (
        "perfect: no pair at all",
        lambda: free("CCSS", match="perfect-match"),
        "HHHH@2,0/0",
        ["perfect match"],
    ),
    (
        "roll lock missing",
        lambda: free("CCSS", "CCCC@2,0/0", "SSSS@0,2/0"),
        "RBBB@2,2/0",
        ["cinnamon roll"],
    ),
    (
        "roll lock not touched",
        lambda: free("CCSS", "CCCC@2,0/0", "SSSS@0,2/0"),
        "RBBB@2,2/0=H",
        ["cinnamon roll"],
    ),
    ("roll lock automatic but wrong", lambda: free("CCSS"), "RHHH@2,0/0=S", ["cinnamon roll"]),
    ("roll lock, own card", lambda: free("CCSS"), "CRSS@2,0/0", ["cinnamon roll"]),
    ("box it: run of 2", lambda: free("CCSS"), "box@0,0", ["box it"]),
    ("box it: empty cell", lambda: free("CCSS"), "box@7,7", ["box it"]),
    (
        "box it: less than half",
        lambda: free("CCSS", "CSSS@2,0/0", "HCCH@-2,0/0"),
        "box@0,0",
        ["box it"],
    ),
    ("box it: not yours", lambda: free("CCSS", "CCSS@2,0/0"), "box@0,0", ["box it"]),
    (
        "box it: delivered",
        lambda: free("CCSS", "CCSS@2,0/0", "HSSH@-2,0/0", "box@0,0", "SCCS@4,0/0"),
        "box@1,0",
        ["box it"],
    ),
    ("swap when able to place", lambda: deal(*CAN_PLACE), "swap BBBB", ["swap"]),
    ("swap a card not held", lambda: deal(*STUCK), "swap CCSS", ["swap"]),
    ("pass when able to place", lambda: deal(*CAN_PLACE), "pass", ["pass"]),
    ("pass with cards in the pile", lambda: deal(*STUCK), "pass", ["pass"]),
    ("swap in a free game", lambda: free("CCSS"), "swap CCSS", ["swap"]),
    ("pass in a free game", lambda: free("CCSS"), "pass", ["pass"]),
    ("overlap", lambda: free("CCSS"), "CCSS@0,0/0", ["overlap"]),
    ("corner only", lambda: free("CCSS"), "CCCC@2,2/0", ["edge"]),
    ("far away", lambda: free("CCSS"), "CCCC@40,40/0", ["touch"]),
    (
        "only delivered contact",
        lambda: free("CCSS", "CCSS@2,0/0", "HSSH@-2,0/0", "box@0,0"),
        "CCCC@0,-2/0",
        ["delivered"],
    ),
    ("card not in tray", lambda: deal(*CAN_PLACE), "CCCC@2,0/0", ["tray"]),
]


@pytest.mark.parametrize(("name", "build", "move", "words"), CASES, ids=[c[0] for c in CASES])
def test_illegal_move_names_the_rule(name: str, build, move: str, words: list[str]) -> None:
    text = message(build(), move)
    for word in words:
        assert word in text, f"{name}: {text!r} does not mention {word!r}"


def test_game_over_after_the_final_lap() -> None:
    game = deal(["CCSS", "BBBB", "BBBB", "BBBB", "CCCC", "BBBB"], ["CCHH", *["BBBB"] * 4])
    game.play("CCSS@2,0/0")
    game.play("CCHH@-2,0/0")
    for move in ("BBBB@0,2/0", "swap BBBB", "pass", "box@0,0"):
        assert "the game is over" in message(game, move)


def test_game_over_after_end() -> None:
    game = free("CCSS")
    game.end()
    assert "the game is over" in message(game, "CCSS@2,0/0")


def test_replay_reports_the_rule_and_the_state_before() -> None:
    record = {
        "format": "donutbox/1",
        "players": ["A", "B"],
        "rules": {"match": "perfect-match"},
        "start": "CCSS",
        "moves": ["CHHS@2,0/0", "SSSS@0,2/0", "HSSS@4,0/0"],  # SW S (4,1) vs H (3,1)
        "end": True,
    }
    game, error = replay(record)
    assert error is not None
    ply, move, reason = error
    assert (ply, move) == (2, "HSSS@4,0/0")
    assert "perfect match" in reason.lower()
    assert game.ply == 2 and not game.finished  # "end" not applied after an error
    with pytest.raises(donutbox.IllegalMove, match="Perfect Match"):
        donutbox.load(record)


def test_record_errors_are_not_illegal_moves() -> None:
    bad = {"format": "donutbox/1", "players": ["A", "B"], "start": "CCSS", "rules": {"x": 1}}
    with pytest.raises(donutbox.RecordError) as info:
        donutbox.load(bad)
    assert not isinstance(info.value, donutbox.IllegalMove)
    assert "x" in str(info.value)


# -- the core raises only its own errors --------------------------------------------


def test_the_core_raises_only_donutbox_errors() -> None:
    import ast
    from pathlib import Path

    import donutbox.core as core
    import donutbox.core.decks  # noqa: F401  (its DeckError is a subclass too)

    def family(cls: type) -> set[str]:
        return {cls.__name__}.union(*(family(sub) for sub in cls.__subclasses__()))

    allowed = family(core.DonutboxError)
    assert "RecordError" in allowed and "ValueError" not in allowed
    allowed.add("NotImplementedError")  # abstract methods of the rule policies
    for path in Path(core.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) and node.exc is not None:
                exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                name = exc.id if isinstance(exc, ast.Name) else ast.unparse(exc)
                assert name in allowed, f"{path.name}:{node.lineno} raises {name}"


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: donutbox.Game.new(players=5), "2 to 4 players"),
        (lambda: donutbox.Game.new(players=True), "players"),
        (lambda: donutbox.Game.new(players=["a", 3]), "names must be strings"),
        (lambda: donutbox.Game.new(seed=-1), "seed"),
        (lambda: donutbox.Game.new(seed=1 << 64), "seed"),
        (lambda: donutbox.Game.deal([["CCSS"] * 6]), "2 to 4 players"),
        (lambda: donutbox.Game.deal([["CCSS"] * 5, ["CCSS"] * 5]), "deck 0 has 5 cards"),
        (lambda: donutbox.Game.new(seed=1).view(2), "no player 2"),
        (lambda: donutbox.core.perft(donutbox.Game.new(seed=1), -1), "depth"),
        (lambda: donutbox.core.divide(donutbox.Game.new(seed=1), 0), "depth"),
        (lambda: donutbox.core.perft(free("CCSS"), 1), "free game"),
    ],
)
def test_bad_arguments_raise_an_input_error_naming_them(call: object, words: str) -> None:
    with pytest.raises(donutbox.core.InputError) as info:
        call()  # type: ignore[operator]
    assert words in str(info.value) and "\n" not in str(info.value)
    assert isinstance(info.value, donutbox.DonutboxError) and isinstance(info.value, ValueError)


def test_sampling_a_move_of_a_finished_game_is_an_illegal_move() -> None:
    import random

    from donutbox.core.sampling import sample_move

    game = free("CCSS")
    game.end()
    with pytest.raises(donutbox.IllegalMove, match="the game is over"):
        sample_move(game, random.Random(1))
