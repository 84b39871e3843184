"""Game data: lab and server games exported without names, loaded back,
replayed in the compact observation; the policy's inputs and the
behaviour-cloning and training recipes."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

np = pytest.importorskip("numpy", reason="the rl extra is not installed: pip install '.[rl]'")

from donutbox.cli import main  # noqa: E402
from donutbox.core import Game, Rules  # noqa: E402
from donutbox.core.record import dump  # noqa: E402
from donutbox.envs import dataset  # noqa: E402
from donutbox.envs.encoding import Encoder  # noqa: E402
from donutbox.lab.match import play_game  # noqa: E402


def _lab_file(tmp_path: Path, games: int = 3) -> Path:
    path = tmp_path / "records.jsonl"
    with path.open("w") as fh:
        for seed in range(games):
            fh.write(json.dumps(play_game(["greedy", "random"], Rules(), seed).record) + "\n")
    return path


def test_lab_games_export_load_and_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lab = _lab_file(tmp_path)
    out = tmp_path / "games.jsonl"
    assert main(["dataset", "export", "--lab", str(lab), "--out", str(out)]) == 0
    assert "wrote 3 games (3 from the lab, 0 from the server)" in capsys.readouterr().out
    rows = dataset.load(out)
    records = [json.loads(line) for line in lab.read_text().splitlines()]
    assert len(rows) == 3
    for row, record in zip(rows, records, strict=True):
        assert row["seats"] == ["greedy", "random"] and row["source"] == "lab"
        assert "players" in record and all(n not in json.dumps(row) for n in record["players"])
        game = dataset.replay(row)
        for move in row["moves"]:
            game.play(move)
        assert game.finished and game.scores == row["scores"] == record["result"]["scores"]
    # every step's action is one of its legal actions, and decodes to the move
    enc = Encoder(Rules(), 2)
    game = dataset.replay(rows[0])
    count = 0
    for obs, actions, taken, seat in dataset.steps(rows[0], enc):
        assert obs.shape == (4632,) and taken in actions and seat == game.to_move
        assert str(enc.decode(game, taken)) == str(game.check(rows[0]["moves"][count]))
        game.play(rows[0]["moves"][count])
        count += 1
    assert count == len(rows[0]["moves"])


def _server_db(tmp_path: Path) -> str:
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session

    from donutbox.server.accounts import CommunityBase, UserRow
    from donutbox.server.ratings.service import CommunityGameRow
    from donutbox.server.storage import Base, GameRow

    url = f"sqlite:///{tmp_path / 'server.db'}"
    engine = create_engine(url)
    Base.metadata.create_all(engine)
    CommunityBase.metadata.create_all(engine)
    now = datetime.now(UTC)
    with Session(engine) as s:
        s.add(UserRow(name="Alice", name_key="alice", password_hash="x", created=now))
        for gid, finished, rated, voided, ended in (
            ("rated1", True, True, False, now),  # the one to export
            ("casual", True, False, False, now),
            ("voided", True, True, True, now),
            ("running", False, True, False, None),
        ):
            game = Game.new(Rules(), ["Alice", "Bob"], seed=len(gid))
            while finished and not game.finished:
                game.play(game.legal_moves()[0])
            s.add(
                GameRow(
                    id=gid,
                    created=now,
                    updated=now,
                    version=1,
                    title="Alice vs Bob",
                    mode="online",
                    seats=json.dumps(["human", "human"]),
                    options="{}",
                    finished=finished,
                    record=json.dumps(dump(game)),
                )
            )
            s.add(
                CommunityGameRow(
                    game_id=gid,
                    rules_key="x",
                    rules_label="x",
                    rated=rated,
                    settled=True,
                    created=now,
                    ended=ended,
                    voided=voided,
                )
            )
        s.commit()
    engine.dispose()
    return url


def test_server_games_need_include_server_and_lose_their_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = _server_db(tmp_path)
    out = tmp_path / "server.jsonl"
    assert main(["dataset", "export", "--server", url, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--include-server" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
    assert main(["dataset", "export", "--server", url, "--include-server", "--out", str(out)]) == 0
    text = out.read_text()
    rows = dataset.load(out)
    assert len(rows) == 1  # finished, rated, not voided
    assert rows[0]["source"] == "server" and rows[0]["seats"] == ["human", "human"]
    assert "Alice" not in text and "Bob" not in text and "rated1" not in text


def test_a_bad_database_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    out = tmp_path / "x.jsonl"
    assert main(["dataset", "export", "--server", url, "--include-server", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "cannot read the games" in err and len(err.strip().splitlines()) == 1


def test_policy_inputs_point_at_the_place_row_and_the_turned_card() -> None:
    from donutbox.envs.policy import CARD, PLACE_ROW, action_inputs

    game = Game.deal([["CCSS"] * 6, ["HHBB"] * 5], Rules(), 2)
    enc = Encoder(Rules(), 2)
    lay = enc.centred.layout
    obs = enc.observe(game, 0)
    legal = enc.legal(game)
    # CCSS turned 90 degrees clockwise reads SCCS (NW S, NE C, SE C, SW S)
    a = next(a for a, m in legal.items() if m.kind == "place" and m.rot == 90)
    k = a // 64
    x = action_inputs(obs, lay, enc.codec, [a])[0]  # type: ignore[arg-type]
    assert np.array_equal(x[:PLACE_ROW], lay.part(obs, "places")[k])
    card = x[PLACE_ROW : PLACE_ROW + CARD].reshape(4, 5)  # quadrant x C S H B R
    assert [int(np.argmax(q)) for q in card] == [1, 0, 0, 1]


def test_bc_and_train_run_from_the_package(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from donutbox.envs import bc, train

    out = tmp_path / "games.jsonl"
    assert main(["dataset", "export", "--lab", str(_lab_file(tmp_path, 4)), "--out", str(out)]) == 0
    assert bc.main(["--data", str(out), "--epochs", "1", "--holdout", "0.25"]) == 0
    text = capsys.readouterr().out
    assert "4 games:" in text and "epoch 1: held-out moves matched" in text
    policy = tmp_path / "p.npz"
    args = ["--teacher-games", "1", "--rl-games", "2", "--eval-games", "2", "--eval-every", "2"]
    assert train.main([*args, "--opponent", "random", "--out", str(policy)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2].startswith("reinforce      2 games") and policy.exists()
    assert train.main(["--opponent", "nobody"]) == 2
