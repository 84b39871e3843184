"""A value network over the compact observation, in numpy (no torch needed).

``ValueNet`` reads one compact observation (``encoding.py``,
``observation="compact"``) as three parts, the way the observation is laid
out:

- the **places** block: one row per candidate place (what it must match,
  the run summaries of ``compact.py``), a set whose size changes every turn;
- the **boxes** block: one row per open box (size, roll, donuts held by the
  observer and by the other player), another set;
- the **features**: tray, scores, counts, phase.

Each place row and each box row goes through its own small layers (with
a few numbers of the position: cards left, Final Lap, score difference, who
moves): one tanh layer, or with ``row_layers=2`` two (``tanh(W' tanh(W x +
b) + b')``, as DeepSets' per-element network); the rows' outputs are
summed (a set does not depend on the order of its rows), joined to the
features and read by two hidden layers:

    value = v . tanh(W2 tanh(W1 [features, sum places, sum boxes] + b1) + b2)
            + c + (my score - the other's score) / 10

The last term carries the score difference straight through, so the layers
learn what the position adds to it.  Nothing here knows a rule of the game
or what a move scores: the inputs are slices of the observation, scaled.
The value is in tens of points, from the observer's side.  Two players only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np

from .encoding import CentredLayout

#: Scale of each feature (``observation.py``'s order, two players): tray 80,
#: to_move 2, scores 2, delivered 2, tray_sizes 2, pile_sizes 2, unseen 10,
#: final_lap, final_lap_turns, swap_streak, cards_left.
_FEATURE_SCALE: Final = np.array(
    [1.0] * 80
    + [1.0] * 2
    + [20.0] * 2
    + [5.0] * 2
    + [4.0] * 2
    + [20.0] * 2
    + [20.0] * 10
    + [1.0, 4.0, 4.0, 60.0],
    dtype=np.float32,
)
FEATURES: Final = len(_FEATURE_SCALE)
#: Columns of a place row kept: the requirement bits and the run summaries
#: (present, row and column are dropped: only what the place touches counts).
_PLACE_COLUMNS: Final = slice(3, None)
#: Columns of a box row kept: size, roll, held by the observer, by the other.
_BOX_COLUMNS: Final = slice(3, None)
#: Numbers of the position added to every row (``context``).
CONTEXT: Final = 5
PLACE_INPUTS: Final = 28 + CONTEXT
BOX_INPUTS: Final = 4 + CONTEXT
_PLACE_POOL: Final = 10.0  # sums divided by: keeps them near 1
_BOX_POOL: Final = 5.0


@dataclass
class Sample:
    """One observation cut into the network's inputs (module doc)."""

    features: np.ndarray  # FEATURES, scaled
    places: np.ndarray  # (open places, PLACE_INPUTS)
    boxes: np.ndarray  # (open boxes, BOX_INPUTS)
    lead: float  # (my score - the other's) / 10


def cut(obs: np.ndarray, layout: CentredLayout) -> Sample:
    """The network's inputs of one compact observation (two players)."""
    if layout.show_board or layout.players != 2:
        raise ValueError("the value network reads the two-player compact observation")
    raw = layout.part(obs, "features")
    feats = raw / _FEATURE_SCALE
    places = layout.part(obs, "places")
    boxes = layout.part(obs, "boxes")
    lead = float(raw[82] - raw[83]) / 10.0
    context = np.array(
        [feats[103], feats[100], feats[101], lead, raw[80]], dtype=np.float32
    )  # cards left, Final Lap, its turns, lead, observer to move
    p = places[places[:, 0] > 0, _PLACE_COLUMNS]
    b = boxes[boxes[:, 0] > 0, _BOX_COLUMNS]
    xp = np.empty((len(p), PLACE_INPUTS), dtype=np.float32)
    xp[:, : PLACE_INPUTS - CONTEXT] = p
    xp[:, PLACE_INPUTS - CONTEXT :] = context
    xb = np.empty((len(b), BOX_INPUTS), dtype=np.float32)
    xb[:, : BOX_INPUTS - CONTEXT] = b
    xb[:, BOX_INPUTS - CONTEXT :] = context
    return Sample(feats.astype(np.float32), xp, xb, lead)


@dataclass
class Batch:
    """Samples padded to the batch's largest sets, with masks."""

    features: np.ndarray  # (N, FEATURES)
    places: np.ndarray  # (N, P, PLACE_INPUTS)
    place_mask: np.ndarray  # (N, P)
    boxes: np.ndarray  # (N, B, BOX_INPUTS)
    box_mask: np.ndarray  # (N, B)
    lead: np.ndarray  # (N,)


def batch(samples: Sequence[Sample]) -> Batch:
    n = len(samples)
    p = max(1, max(len(s.places) for s in samples))
    b = max(1, max(len(s.boxes) for s in samples))
    xp = np.zeros((n, p, PLACE_INPUTS), dtype=np.float32)
    mp = np.zeros((n, p), dtype=np.float32)
    xb = np.zeros((n, b, BOX_INPUTS), dtype=np.float32)
    mb = np.zeros((n, b), dtype=np.float32)
    for i, s in enumerate(samples):
        k = len(s.places)
        xp[i, :k] = s.places
        mp[i, :k] = 1.0
        k = len(s.boxes)
        xb[i, :k] = s.boxes
        mb[i, :k] = 1.0
    feats = np.stack([s.features for s in samples])
    lead = np.array([s.lead for s in samples], dtype=np.float32)
    return Batch(feats, xp, mp, xb, mb, lead)


_NAMES: Final = ("Wp", "bp", "Wb", "bb", "W1", "b1", "W2", "b2", "v", "c")
#: The second row layers' parameters (``row_layers=2``).
_ROW2: Final = ("Wp2", "bp2", "Wb2", "bb2")


@dataclass
class ValueNet:
    """The network of the module doc, with Adam's moments for training."""

    place_hidden: int = 64
    box_hidden: int = 32
    hidden: int = 128
    seed: int = 0
    #: Layers each place and box row goes through before the sum (1 or 2).
    row_layers: int = 1
    params: dict[str, np.ndarray] = field(default_factory=dict)
    _m: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    _v: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    _t: int = 0

    def __post_init__(self) -> None:
        if self.row_layers not in (1, 2):
            raise ValueError(f"row_layers must be 1 or 2, not {self.row_layers!r}")
        if self.params:
            return
        rng = np.random.default_rng(self.seed)

        def init(fan_in: int, shape: tuple[int, ...]) -> np.ndarray:
            return rng.normal(0.0, 1.0 / np.sqrt(fan_in), shape)

        joined = FEATURES + self.place_hidden + self.box_hidden
        self.params = {
            "Wp": init(PLACE_INPUTS, (PLACE_INPUTS, self.place_hidden)),
            "bp": np.zeros(self.place_hidden),
            "Wb": init(BOX_INPUTS, (BOX_INPUTS, self.box_hidden)),
            "bb": np.zeros(self.box_hidden),
            "W1": init(joined, (joined, self.hidden)),
            "b1": np.zeros(self.hidden),
            "W2": init(self.hidden, (self.hidden, self.hidden)),
            "b2": np.zeros(self.hidden),
            "v": init(self.hidden, (self.hidden,)) * 0.1,
            "c": np.zeros(1),
        }
        if self.row_layers == 2:
            ph, bh = self.place_hidden, self.box_hidden
            self.params |= {
                "Wp2": init(ph, (ph, ph)),
                "bp2": np.zeros(ph),
                "Wb2": init(bh, (bh, bh)),
                "bb2": np.zeros(bh),
            }

    def _forward(self, x: Batch) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        P = self.params
        a: dict[str, np.ndarray] = {}
        hp = a["hp"] = np.tanh(x.places @ P["Wp"] + P["bp"])
        hb = a["hb"] = np.tanh(x.boxes @ P["Wb"] + P["bb"])
        if self.row_layers == 2:
            hp = a["hp2"] = np.tanh(hp @ P["Wp2"] + P["bp2"])
            hb = a["hb2"] = np.tanh(hb @ P["Wb2"] + P["bb2"])
        sp = np.einsum("npk,np->nk", hp, x.place_mask) / _PLACE_POOL
        sb = np.einsum("nbk,nb->nk", hb, x.box_mask) / _BOX_POOL
        z = a["z"] = np.concatenate([x.features, sp, sb], axis=1)
        h1 = a["h1"] = np.tanh(z @ P["W1"] + P["b1"])
        h2 = a["h2"] = np.tanh(h1 @ P["W2"] + P["b2"])
        y = h2 @ P["v"] + P["c"][0] + x.lead
        return y, a

    def value(self, x: Batch) -> np.ndarray:
        """The value of each sample (tens of points, the observer's side)."""
        return self._forward(x)[0]

    def loss_grad(
        self,
        x: Batch,
        target: np.ndarray,
        groups: np.ndarray | None = None,
        within: float = 0.0,
    ) -> tuple[float, dict[str, np.ndarray]]:
        """Mean of ``(value - target)^2 / 2`` and its gradient (to descend).

        ``groups`` (a group number per sample: the moves of one position)
        adds ``within`` times the same loss on the errors less their group's
        mean: what tells the moves of a position apart, which is all that
        choosing among them needs, weighs that much more than the level
        they share."""
        P = self.params
        y, a = self._forward(x)
        err = y - target
        n = len(target)
        loss = float(0.5 * np.mean(err * err))
        dy = err / n
        if groups is not None and within:
            counts = np.bincount(groups)
            centred = err - (np.bincount(groups, weights=err) / np.maximum(counts, 1))[groups]
            loss += within * float(0.5 * np.mean(centred * centred))
            # d/dy_i of sum_j centred_j^2 / 2 is centred_i: the group means
            # of centred are 0
            dy = dy + within * centred / n
        h1, h2, z = a["h1"], a["h2"], a["z"]
        g: dict[str, np.ndarray] = {"v": h2.T @ dy, "c": np.array([dy.sum()])}
        d2 = np.outer(dy, P["v"]) * (1 - h2 * h2)
        g["W2"] = h1.T @ d2
        g["b2"] = d2.sum(0)
        d1 = (d2 @ P["W2"].T) * (1 - h1 * h1)
        g["W1"] = z.T @ d1
        g["b1"] = d1.sum(0)
        dz = d1 @ P["W1"].T
        at = FEATURES
        dsp = dz[:, at : at + self.place_hidden] / _PLACE_POOL
        dsb = dz[:, at + self.place_hidden :] / _BOX_POOL
        # the gradient at each row's output (before the sum), per row
        dp = dsp[:, None, :] * x.place_mask[:, :, None]
        db = dsb[:, None, :] * x.box_mask[:, :, None]
        hp, hb = a["hp"], a["hb"]
        if self.row_layers == 2:
            ph, bh = self.place_hidden, self.box_hidden
            dp = dp * (1 - a["hp2"] ** 2)
            g["Wp2"] = hp.reshape(-1, ph).T @ dp.reshape(-1, ph)
            g["bp2"] = dp.sum((0, 1))
            dp = dp @ P["Wp2"].T
            db = db * (1 - a["hb2"] ** 2)
            g["Wb2"] = hb.reshape(-1, bh).T @ db.reshape(-1, bh)
            g["bb2"] = db.sum((0, 1))
            db = db @ P["Wb2"].T
        dp = dp * (1 - hp**2)
        g["Wp"] = x.places.reshape(-1, PLACE_INPUTS).T @ dp.reshape(-1, self.place_hidden)
        g["bp"] = dp.sum((0, 1))
        db = db * (1 - hb**2)
        g["Wb"] = x.boxes.reshape(-1, BOX_INPUTS).T @ db.reshape(-1, self.box_hidden)
        g["bb"] = db.sum((0, 1))
        return loss, g

    def step(self, grads: dict[str, np.ndarray], lr: float = 1e-3) -> None:
        """One Adam step down the gradient."""
        self._t += 1
        for name, g in grads.items():
            m = self._m.setdefault(name, np.zeros_like(g))
            v = self._v.setdefault(name, np.zeros_like(g))
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            mhat = m / (1 - 0.9**self._t)
            vhat = v / (1 - 0.999**self._t)
            self.params[name] -= lr * mhat / (np.sqrt(vhat) + 1e-8)

    def save(self, path: str) -> None:
        sizes = np.array([self.place_hidden, self.box_hidden, self.hidden, self.row_layers])
        names = _NAMES + (_ROW2 if self.row_layers == 2 else ())
        arrays = {"sizes": sizes, **{k: self.params[k].astype(np.float32) for k in names}}
        np.savez_compressed(path, **arrays)  # type: ignore[arg-type]

    @classmethod
    def load(cls, path: str) -> ValueNet:
        with np.load(path) as data:
            missing = [k for k in ("sizes", *_NAMES) if k not in data]
            if missing:
                raise ValueError(f"{path}: not a value network (no {', '.join(missing)})")
            # a network saved before ``row_layers`` has three sizes
            ph, bh, h, rows = (*(int(s) for s in data["sizes"]), 1)[:4]
            names = _NAMES + (_ROW2 if rows == 2 else ())
            missing = [k for k in names if k not in data]
            if missing:
                raise ValueError(f"{path}: not a value network (no {', '.join(missing)})")
            params = {k: data[k].astype(np.float64) for k in names}
        return cls(ph, bh, h, row_layers=rows, params=params)


__all__ = ["Batch", "Sample", "ValueNet", "batch", "cut"]
