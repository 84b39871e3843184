"""The OpenSpiel game ``python_donutbox``, registered from Python.

>>> from donutbox.envs import register_openspiel
>>> import pyspiel
>>> game = pyspiel.load_game(register_openspiel(), {"players": 2, "layout": "splitzkies"})
>>> state = game.new_initial_state()

Parameters (all optional): ``players`` (2-4), one per rule option of
``donutbox.core.RULE_OPTIONS`` (``match``: ``one-good-match`` or
``perfect-match``; ``layout``: ``squared-away`` or ``splitzkies``;
``closers``: bool), ``encoding`` (``places``, the default, or ``window``: see
``encoding.py``), ``observation`` (``compact``, the default, or ``board``)
and ``window`` (the board width in cells; 0 for the default).

**Chance.** Shuffling is modelled by drawing cards one at a time, uniformly
from what is left of the player's deck, at the moment a card is first seen:
the deal (each player's four tray cards in turn, then the start card from
player 0's deck) and every later draw from a pile.  A chance outcome is the
index of a face in ``FACES`` (the 24 distinct faces of the standard deck),
with probability (copies left) / (cards left).  Drawing lazily is exactly a
uniform shuffle, because nobody sees a pile's order before its cards are
drawn; a card put back by ``swap`` goes to the bottom, below every card not
yet drawn, so it comes back without a chance node once they are gone.

**Information.** ``information_state_string(p)`` is everything player ``p``
has seen, in order (perfect recall): their own draws by face, other players'
draws as ``?``, the start card, and every move in notation except other
players' swapped faces.  ``observation_string`` / ``observation_tensor`` are
the current view only: the tensor of ``encoding.py``, shaped as ``places``,
``boxes`` and ``features`` (with ``board``, planes x W x W, first under
``observation="board"``).
``information_state_tensor`` is that observation plus a ``history`` block
(per seat: placements, box-its, swaps and passes made; the ply; the faces
the player has drawn so far): it summarises the information state (two
histories with the same counter, tray, counts and draws give the same
tensor), while the string is the exact perfect-recall state.  None of them
reads another tray or any pile.

``resample_from_infostate(player, sampler)`` deals a world the player
cannot tell from this one: everything the player has seen is kept, and the
cards hidden from them (the faces every other player drew, and so their
trays and the cards they swapped back) are redrawn consistently with the
history (``resample.py``): every card they placed was in their tray then,
and at each of their swaps and passes no card of their tray fitted the
counter.  Undrawn cards stay chance outcomes.  Each other player's own
record of their draws and swaps is rewritten to the redrawn faces, so their
information state in that world determines their legal actions there, as
OpenSpiel's IS-MCTS (at its default ``allow_inconsistent_action_sets=False``)
requires.  Should no consistent redraw be found for a player (``TRIES``
attempts), that player's real cards are kept.

**Actions** are those of the encoding (``encoding.py``);
``max_game_length`` is the proven bound of ``length.py`` (4,003 actions for
two players); ``returns()`` is the zero-sum outcome of ``common.outcome``
(+1 / -1 for two players, 0 each on a full tie).
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter as Multiset
from collections.abc import Callable, Mapping
from typing import Any, Final

import numpy as np
import pyspiel

from ..core.cards import STANDARD_DECK
from ..core.game import Game
from ..core.moves import PASS, SWAP, Move
from ..core.rules import GAME_INFO, RULE_OPTIONS, Rules
from ..core.view import PlayerView
from ..render.text import counter_text
from .codec import ActionCodec
from .common import outcome
from .encoding import Encoder, PlacesCodec, box_features, tray_only
from .length import max_game_length
from .resample import placeable_faces, sample_hidden

SHORT_NAME: Final = "python_donutbox"
#: Chance outcomes: the distinct faces of the standard deck, sorted.
FACES: Final[tuple[str, ...]] = tuple(sorted(set(STANDARD_DECK)))
FACE_INDEX: Final = {f: i for i, f in enumerate(FACES)}
#: A card in a pile that nobody has seen yet (its face is drawn when it is drawn).
HIDDEN: Final = "????"
TRAY: Final = GAME_INFO.tray_size
DECK: Final = GAME_INFO.deck_size

#: The game's parameters: the player count, every rule option of
#: ``RULE_OPTIONS`` with its default, and the action window.
DEFAULT_PARAMS: Final[dict[str, Any]] = {
    "players": 2,
    **{option.name: option.default for option in RULE_OPTIONS},
    "encoding": "places",
    "observation": "compact",
    "window": 0,
}

GAME_TYPE: Final = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="donutbox (Python)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=GAME_INFO.max_players,
    min_num_players=GAME_INFO.min_players,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=DEFAULT_PARAMS,
)


@dataclasses.dataclass(frozen=True)
class _Config:
    rules: Rules
    players: int
    window: int
    encoding: Encoder

    @property
    def codec(self) -> PlacesCodec | ActionCodec:
        return self.encoding.codec

    @property
    def history_size(self) -> int:
        """The ``history`` block of the information-state tensor."""
        return 4 * self.players + 1 + len(FACES)

    def shapes(self) -> dict[str, tuple[int, ...]]:
        """The observation tensor's named parts, in order."""
        enc = self.encoding
        n = self.players
        if enc.name == "places":
            lay = enc.centred.layout
            board = {"board": lay.board_shape} if lay.show_board else {}
            return {
                **board,
                "places": (lay.places, lay.place_features),
                "boxes": (lay.boxes, box_features(n)),
                "features": (lay.feature_layout.feature_size,),
            }
        wl = enc.window_encoder.layout
        return {"board": wl.board_shape, "features": (wl.feature_size,)}


_CONFIGS: dict[tuple[Rules, int, str, int, str], _Config] = {}


def _config(
    rules: Rules, players: int, encoding: str, window: int, observation: str = "compact"
) -> _Config:
    key = (rules, players, encoding, window, observation)
    found = _CONFIGS.get(key)
    if found is None:
        enc = Encoder(rules, players, encoding, window or None, observation=observation)
        found = _CONFIGS[key] = _Config(rules, players, enc.board, enc)
    return found


class DonutboxGame(pyspiel.Game):  # type: ignore[misc]
    """The game for one parameter set (see module doc)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        p = {**DEFAULT_PARAMS, **(params or {})}
        players = int(p["players"])
        if not GAME_INFO.min_players <= players <= GAME_INFO.max_players:
            raise ValueError(f"a game has 2 to 4 players, not {players}")
        rules = Rules.from_dict({o.name: p[o.name] for o in RULE_OPTIONS}, where="params")
        encoding = str(p["encoding"])
        if encoding not in ("places", "window"):
            raise ValueError(f"params.encoding must be places or window, not {encoding!r}")
        observation = str(p["observation"])
        if observation not in ("compact", "board"):
            raise ValueError(f"params.observation must be compact or board, not {observation!r}")
        cfg = _config(rules, players, encoding, int(p["window"]), observation)
        info = pyspiel.GameInfo(
            num_distinct_actions=cfg.codec.size,
            max_chance_outcomes=len(FACES),
            num_players=players,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=max_game_length(players),
        )
        super().__init__(GAME_TYPE, info, p)
        self.config = cfg

    def new_initial_state(self) -> DonutboxState:
        return DonutboxState(self)

    def max_chance_nodes_in_history(self) -> int:
        # Every card of every deck is drawn by chance at most once.
        return DECK * self.config.players

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: Any = None
    ) -> DonutboxObserver:
        return DonutboxObserver(self.config, iig_obs_type, params)


class _Core:
    """The mutable part of a state, copied quickly by ``State.clone``."""

    def __init__(self, players: int) -> None:
        self.setup: list[str] = []  # faces dealt: trays in turn order, then the start card
        self.game: Game | None = None  # once the start card is down
        per_face = Multiset(STANDARD_DECK)
        self.undrawn = [[per_face[f] for f in FACES] for _ in range(players)]
        self.pending = -1  # the player whose tray ends in a card still to draw
        #: What happened, as (player, text for that player, text for the others).
        self.events: list[tuple[int, str, str]] = []
        self.legal_at: tuple[int, Mapping[int, Move]] | None = None
        #: By ply of each swap and pass: the faces that fitted the counter
        #: then (public; what a resample of that player must respect).
        self.placeable: dict[int, frozenset[str]] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> _Core:
        new = _Core.__new__(_Core)
        new.setup = self.setup[:]
        new.game = None if self.game is None else self.game.copy()
        new.undrawn = [u[:] for u in self.undrawn]
        new.pending = self.pending
        new.events = self.events[:]
        new.legal_at = None
        new.placeable = dict(self.placeable)
        return new

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["legal_at"] = None
        return state


class DonutboxState(pyspiel.State):  # type: ignore[misc]
    """A position: the deal so far, or a game of the engine with hidden piles."""

    def __init__(self, game: DonutboxGame) -> None:
        super().__init__(game)
        cfg = game.config
        self._key = (
            cfg.rules,
            cfg.players,
            cfg.encoding.name,
            cfg.window,
            cfg.encoding.observation,
        )
        self._core = _Core(cfg.players)

    @property
    def config(self) -> _Config:
        return _config(*self._key)

    # -- whose turn ------------------------------------------------------------

    def current_player(self) -> int:
        core = self._core
        if core.game is None or core.pending >= 0:
            return int(pyspiel.PlayerId.CHANCE)
        if core.game.finished:
            return int(pyspiel.PlayerId.TERMINAL)
        to_move = core.game.to_move
        assert to_move is not None
        return to_move

    def is_terminal(self) -> bool:
        game = self._core.game
        return game is not None and game.finished

    def _drawer(self) -> int:
        core = self._core
        if core.game is None:
            k = len(core.setup)
            return k // TRAY if k < TRAY * self.config.players else 0
        return core.pending

    def chance_outcomes(self) -> list[tuple[int, float]]:
        counts = self._core.undrawn[self._drawer()]
        total = sum(counts)
        return [(i, c / total) for i, c in enumerate(counts) if c]

    # -- player actions ----------------------------------------------------------

    def legal(self) -> Mapping[int, Move]:
        """The player to move's legal actions as ``action -> Move``."""
        core = self._core
        game = core.game
        if game is None or core.pending >= 0 or game.finished:
            return {}
        if core.legal_at is None or core.legal_at[0] != game.ply:
            to_move = game.to_move
            assert to_move is not None
            codec = self.config.codec
            if isinstance(codec, PlacesCodec):
                legal: Mapping[int, Move] = codec.legal_actions(
                    game, codec.turn(game.counter, game.trays[to_move])
                )[0]
            else:
                legal = codec.legal(game.legal_moves(), game.trays[to_move])
            core.legal_at = (game.ply, legal)
        return core.legal_at[1]

    def _legal_actions(self, player: int) -> list[int]:
        if player != self.current_player():
            return []
        legal = self.legal()
        actions = getattr(legal, "actions", None)
        return list(actions()) if actions is not None else sorted(legal)

    def _apply_action(self, action: int) -> None:
        core = self._core
        if self.is_chance_node():
            self._draw(int(action))
            return
        game = core.game
        assert game is not None
        move = self.legal().get(int(action))
        if move is None:
            raise ValueError(f"illegal action {action} ({self.config.codec.describe(action)})")
        me = game.to_move
        assert me is not None
        if move.kind in (SWAP, PASS):
            core.placeable[game.ply] = placeable_faces(game.counter, game.rules.match_rule, FACES)
        played = game.play(move)
        text = str(played)
        core.events.append(
            (me, f"{me}:{text}", f"{me}:swap" if played.kind == SWAP else f"{me}:{text}")
        )
        if not game.finished and HIDDEN in game.trays[me]:
            core.pending = me

    def _draw(self, outcome_index: int) -> None:
        core = self._core
        p = self._drawer()
        counts = core.undrawn[p]
        if not 0 <= outcome_index < len(FACES) or not counts[outcome_index]:
            raise ValueError(f"chance outcome {outcome_index} is not possible here")
        counts[outcome_index] -= 1
        face = FACES[outcome_index]
        if core.game is None:
            players = self.config.players
            core.setup.append(face)
            if len(core.setup) <= TRAY * players:
                core.events.append((p, f"{p}+{face}", f"{p}+?"))
            else:
                core.events.append((-1, f"start {face}", f"start {face}"))
                self._start()
            return
        tray = core.game.trays[p]
        tray[tray.index(HIDDEN)] = face
        core.pending = -1
        core.events.append((p, f"{p}+{face}", f"{p}+?"))

    def _start(self) -> None:
        """Build the engine's game once every tray and the start card are known."""
        core = self._core
        cfg = self.config
        decks = []
        for p in range(cfg.players):
            known = core.setup[TRAY * p : TRAY * (p + 1)]
            if p == 0:
                known.append(core.setup[-1])
            decks.append(known + [STANDARD_DECK[0]] * (DECK - len(known)))
        game = Game.deal(decks, cfg.rules, cfg.players)
        for pile in game.piles:
            pile[:] = [HIDDEN] * len(pile)
        game.decks = None  # the filler cards above are not the real decks
        game.meta["openspiel"] = True
        core.game = game

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"draw {FACES[action]}"
        codec = self.config.codec
        if player == self.current_player():
            move = self.legal().get(action)
            if move is not None:
                last = codec.size - 1  # the overflow / outside action
                return str(move) if action != last else f"overflow {move}"
        return codec.describe(action)

    # -- results -----------------------------------------------------------------

    def returns(self) -> list[float]:
        game = self._core.game
        if game is None:
            return [0.0] * self.config.players
        return outcome(game)

    # -- what a player knows -------------------------------------------------------

    def view(self, player: int) -> PlayerView | None:
        """Player's view of the engine's game (None during the deal), with
        ``unseen`` counted from the cards not drawn yet."""
        core = self._core
        game = core.game
        if game is None:
            return None
        view = game.view(player)
        unseen = []
        for p in range(self.config.players):
            hidden: list[str] = []
            for i, count in enumerate(core.undrawn[p]):
                hidden.extend([FACES[i]] * count)
            hidden.extend(f for f in game.piles[p] if f != HIDDEN)
            if p != player:
                hidden.extend(f for f in game.trays[p] if f != HIDDEN)
            unseen.append(tuple(sorted(hidden)))
        return dataclasses.replace(view, unseen=tuple(unseen))

    def information_string(self, player: int, private: bool = True) -> str:
        """Everything ``player`` has seen, in order (see module doc)."""
        parts = [f"p{player}"]
        for who, own, public in self._core.events:
            parts.append(own if private and who == player else public)
        return " ".join(parts)

    def observation_string_for(self, player: int, private: bool = True) -> str:
        """The current view of ``player`` as text."""
        core = self._core
        view = self.view(player)
        if view is None:
            mine = core.setup[TRAY * player : TRAY * (player + 1)] if private else []
            return f"p{player} dealing; tray {' '.join(mine) or '-'}"
        lines = [
            f"p{player} to_move {'-' if view.to_move is None else view.to_move}",
            "scores " + " ".join(map(str, view.scores)),
            "delivered " + " ".join(map(str, view.boxes_delivered)),
            "trays " + " ".join(map(str, view.tray_sizes)),
            "piles " + " ".join(map(str, view.pile_sizes)),
            f"final_lap {'-' if view.final_lap_turns is None else view.final_lap_turns}",
            f"streak {view.swap_streak}",
        ]
        if private:
            lines.append("tray " + (" ".join(view.tray) or "-"))
        lines.append(counter_text(view.donuts()).plain.rstrip("\n"))
        return "\n".join(lines)

    def observation_array(self, player: int, private: bool = True) -> np.ndarray:
        """The observation tensor of ``player`` (``encoding.py``), flat."""
        enc = self.config.encoding
        view = self.view(player)
        if view is None:
            core = self._core
            mine = core.setup[TRAY * player : TRAY * (player + 1)] if private else []
            return tray_only(enc, mine)
        if enc.name == "places":
            return enc.centred.encode(view, private=private)[0]
        return enc.window_encoder.encode(view, private)

    def history_array(self, player: int, private: bool = True) -> np.ndarray:
        """The ``history`` block of the information-state tensor (module doc)."""
        cfg = self.config
        n = cfg.players
        out = np.zeros(cfg.history_size, dtype=np.float32)
        counts = out[: 4 * n].reshape(n, 4)
        plies = 0
        drawn = out[4 * n + 1 :]
        for who, own, public in self._core.events:
            if who < 0:
                continue
            if ":" in public:
                plies += 1
                text = public.split(":", 1)[1]
                if text.startswith("box@"):
                    kind = 1
                elif text.startswith("swap"):
                    kind = 2
                elif text == "pass":
                    kind = 3
                else:
                    kind = 0
                counts[(who - player) % n, kind] += 1
            elif private and who == player and "+" in own:
                drawn[FACE_INDEX[own.split("+", 1)[1]]] += 1
        out[4 * n] = plies / 100
        return out

    def resample_from_infostate(
        self, player_id: int, probability_sampler: Callable[[], float] | Any = None
    ) -> DonutboxState:
        """A state ``player_id`` cannot tell from this one (module doc)."""
        seed = None
        if callable(probability_sampler):
            seed = int(float(probability_sampler()) * 2**52)
        return self._resample(int(player_id), random.Random(seed))

    def _resample(self, player: int, rng: random.Random) -> DonutboxState:
        new: DonutboxState = self.clone()
        core = new._core
        for q in range(self.config.players):
            if q != player:
                _redraw(core, q, self.config.players, rng)
        core.legal_at = None
        return new

    def __str__(self) -> str:
        core = self._core
        cfg = self.config
        lines = [f"{cfg.players} players; {cfg.rules.label()}", "setup " + " ".join(core.setup)]
        game = core.game
        if game is not None:
            lines.append("moves " + " ".join(str(m) for m in game.history))
            for p in range(cfg.players):
                known = " ".join(f for f in game.piles[p] if f != HIDDEN)
                lines.append(
                    f"player {p}: score {game.scores[p]}, tray {' '.join(game.trays[p]) or '-'}, "
                    f"pile {len(game.piles[p])} (bottom: {known or '-'})"
                )
            if core.pending >= 0:
                lines.append(f"player {core.pending} draws")
            lines.append(counter_text(game.counter.donuts()).plain.rstrip("\n"))
        return "\n".join(lines)


def _redraw(core: _Core, q: int, players: int, rng: random.Random) -> None:
    """Redraw the faces ``q`` drew (``resample.py``) in ``core``, in place."""
    game = core.game
    pool = Multiset(STANDARD_DECK)
    if game is None:
        dealt = len(core.setup[TRAY * q : TRAY * (q + 1)])
        moves: list[Move] = []
        pile_start = 0
    else:
        dealt = TRAY
        moves = game.history
        pile_start = DECK - TRAY - (1 if q == 0 else 0)
        if q == 0:
            pool[game.start] -= 1
    found = sample_hidden(
        q, players, moves, core.placeable, dealt, pile_start, core.pending == q, pool, rng, HIDDEN
    )
    if found is None:
        return  # keep q's real cards (module doc)
    draws = iter(found.draws)
    ply = 0
    events = []
    for who, own, public in core.events:
        if who == q and public == f"{q}+?":
            own = f"{q}+{next(draws)}"
        elif who == q and public == f"{q}:swap":
            own = f"{q}:swap {found.swaps[ply]}"
        if who >= 0 and ":" in public:
            ply += 1
        events.append((who, own, public))
    core.events = events
    core.setup[TRAY * q : TRAY * q + dealt] = found.draws[:dealt]
    core.undrawn[q] = [found.undrawn[f] for f in FACES]
    if game is not None:
        game.trays[q] = list(found.tray)
        game.piles[q] = list(found.pile)
        for at, face in found.swaps.items():
            game.history[at] = Move.swap(face)


class DonutboxObserver:
    """OpenSpiel's PyObserver for this game: the information state (perfect
    recall: the exact string, and the observation tensor plus ``history``)
    or the current observation (string and tensor)."""

    def __init__(
        self, cfg: _Config, iig_obs_type: pyspiel.IIGObservationType | None, params: Any
    ) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported: {params}")
        self.perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        private_info = (
            pyspiel.PrivateInfoType.SINGLE_PLAYER
            if iig_obs_type is None
            else iig_obs_type.private_info
        )
        if private_info == pyspiel.PrivateInfoType.ALL_PLAYERS:
            raise ValueError("donutbox has no observation of every player's private cards")
        if iig_obs_type is not None and not iig_obs_type.public_info:
            raise ValueError("donutbox observations always include the public information")
        self.private = private_info == pyspiel.PrivateInfoType.SINGLE_PLAYER
        shapes = dict(cfg.shapes())
        self.obs_size = int(sum(int(np.prod(shape)) for shape in shapes.values()))
        if self.perfect_recall:
            shapes["history"] = (cfg.history_size,)
        size = int(sum(int(np.prod(shape)) for shape in shapes.values()))
        self.tensor = np.zeros(size, np.float32)
        self.dict: dict[str, np.ndarray] = {}
        at = 0
        for name, shape in shapes.items():
            k = int(np.prod(shape))
            self.dict[name] = self.tensor[at : at + k].reshape(shape)
            at += k

    def set_from(self, state: DonutboxState, player: int) -> None:
        self.tensor[: self.obs_size] = state.observation_array(player, self.private)
        if self.perfect_recall:
            self.tensor[self.obs_size :] = state.history_array(player, self.private)

    def string_from(self, state: DonutboxState, player: int) -> str:
        if self.perfect_recall:
            return state.information_string(player, self.private)
        return state.observation_string_for(player, self.private)


def register_openspiel() -> str:
    """Make sure ``python_donutbox`` is registered (it is, on import of this
    module); returns the name to give ``pyspiel.load_game``."""
    return SHORT_NAME


pyspiel.register_game(GAME_TYPE, DonutboxGame)

__all__ = ["FACES", "SHORT_NAME", "DonutboxGame", "DonutboxState", "register_openspiel"]
