"""`donutbox play` through a real pseudo-terminal (pexpect)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from donutbox.core.record import dump, load

pexpect = pytest.importorskip("pexpect")

# The console script of this interpreter (a virtualenv run without
# activating it has another `donutbox` first on PATH, or none), else
# `python -m donutbox.cli`.
_BESIDE = Path(sys.executable).with_name("donutbox")
DONUTBOX = str(_BESIDE) if _BESIDE.exists() else None


def _env() -> dict[str, str]:
    """A plain terminal's environment; PYTHONPATH is kept, so that the tree
    under test (not some other installed copy) is the one that runs."""
    import os

    env = {"NO_COLOR": "1", "TERM": "dumb", "PATH": "/usr/bin:/bin"}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def _spawn(*args: str):  # type: ignore[no-untyped-def]
    cmd = DONUTBOX or sys.executable
    argv = list(args) if DONUTBOX else ["-m", "donutbox.cli", *args]
    child = pexpect.spawn(
        cmd,
        argv,
        encoding="utf-8",
        timeout=60,
        dimensions=(50, 160),
        env=_env(),
    )
    return child


def test_a_game_against_an_agent_in_a_terminal(tmp_path: Path) -> None:
    child = _spawn("play", "--vs", "random", "--seed", "3", "--no-color")
    child.expect("You> ")
    # Seed 3 deals player 0 RSHB CCSS CCBB CCBB and start card RBHC (see
    # `donutbox new --seed 3`): the start's R locks to B.
    child.sendline("flip")
    child.expect("not allowed: bad move 'flip'")
    child.expect("You> ")
    child.sendline("CCSS@1,0/0")
    child.expect("Squared Away")
    child.expect("You> ")
    child.sendline("moves 2")
    child.expect("CCSS@")
    child.expect("You> ")
    child.sendline("2 -2,0 90")  # tray card 2 (CCSS) at (-2,0) turned 90: S S / C C ... next to B,C
    index = child.expect([r"random \(AI\) plays", "not allowed"])
    if index == 1:
        child.expect("You> ")
        child.sendline("2 0,2 0")
        child.expect(r"random \(AI\) plays")
    child.expect("You> ")
    child.sendline("undo")
    child.expect(r"took back 2 moves\r?\n")
    child.expect("You> ")
    save = tmp_path / "game.json"
    child.sendline(f"save {save}")
    child.expect("saved to")
    child.expect("You> ")
    child.sendline("quit")
    child.expect(pexpect.EOF)
    record = json.loads(save.read_text())
    assert record["format"] == "donutbox/1"
    assert record["moves"] == []
    assert record["agents"] == ["human", "random"]


def test_resume_and_play_to_the_end_hotseat(tmp_path: Path) -> None:
    import donutbox

    game = donutbox.Game.new(donutbox.Rules(), 2, seed=12)
    import random

    rng = random.Random(0)
    while game.cards_left > 12 and not game.finished:
        game.play(rng.choice(game.legal_moves()))
    record = dump(game)
    record["agents"] = ["human", "human"]
    path = tmp_path / "saved.json"
    path.write_text(json.dumps(record))
    child = _spawn("play", "--resume", str(path), "--no-color")
    while True:
        index = child.expect([r"Player \d> ", "press Enter to see your cards", "Game over: "])
        if index == 2:
            break
        if index == 1:  # hotseat: the next player takes the keyboard
            child.sendline("")
            continue
        moves = game.legal_moves()
        move = moves[0]
        child.sendline(str(move))
        game.play(move)
    child.expect(pexpect.EOF)
    assert game.finished


def test_hotseat_shows_no_tray_until_the_next_player_has_the_keyboard() -> None:
    import donutbox

    game = donutbox.Game.new(donutbox.Rules(), 2, seed=12)
    first_tray = " ".join(game.trays[0])
    child = _spawn("play", "--vs", "hotseat", "--seed", "12", "--no-color")
    child.expect(f"Tray of Player 1 \\(1\\): {first_tray}")
    child.expect("Player 1> ")
    move = game.legal_moves()[0]
    game.play(move)
    child.sendline(str(move))
    child.expect("press Enter to see your cards")
    # Between Player 1's move and the hand-over, no tray is on the screen.
    assert "Tray of" not in child.before and "Pass the keyboard to Player 2" in child.before
    child.sendline("")
    child.expect(f"Tray of Player 2 \\(2\\): {' '.join(game.trays[1])}")
    child.expect("Player 2> ")
    # Player 2 takes back Player 1's move: it is Player 1's turn, but Player 2
    # still has the keyboard, so the screen asks for a hand-over again.
    child.sendline("undo")
    child.expect(r"took back 1 move\r?\n")  # one move, not "1 move(s)"
    child.expect("press Enter to see your cards")
    assert "Tray of" not in child.before
    child.sendline("")
    child.expect(f"Tray of Player 1 \\(1\\): {first_tray}")
    child.expect("Player 1> ")
    child.sendline("quit")
    child.expect(pexpect.EOF)


def test_an_agents_swapped_card_is_not_shown(tmp_path: Path) -> None:
    import io

    from rich.console import Console

    from donutbox.play import Session

    # Start card CCCC; Ann lays CCCC beside it; the agent holds only BBBB
    # cards, none fits, so it must swap one: the face it sends under its pile
    # is secret (docs/spec.md, "Components": trays and piles are hidden), so
    # the line says only "swap".
    game = load(
        {
            "format": "donutbox/1",
            "players": ["Ann", "Bot"],
            "decks": [["CCCC", "BBBB", "BBBB", "BBBB", "CCCC", "BBBB", "BBBB"], ["BBBB"] * 6],
        }
    )
    out = io.StringIO()
    answers = iter(["CCCC@2,0/0", "save /nonexistent-dir/x.json"])

    def ask(_prompt: str) -> str:
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None

    session = Session(game, ["human", "random"], 1.0, Console(file=out, width=120), ask)
    assert session.run() == 0
    text = out.getvalue()
    assert "Bot plays swap\n" in text and "swap BBBB" not in text
    # A save that cannot be written is answered in one line; the game goes on.
    assert "cannot save to /nonexistent-dir/x.json" in text
