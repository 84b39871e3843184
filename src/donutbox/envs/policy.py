"""A small policy over the compact observation, in numpy (no torch needed).

Each legal action is scored from the part of the compact observation it
points at, so one small network serves every number of open places:

- a **placement** ``(k, slot, rotation, lock)``: row ``k`` of ``places``
  (31 numbers: where, what it must match, the runs it touches), the tray
  card of ``slot`` as the observation gives it (quadrant x letter), turned
  by the rotation (a re-indexing: quadrant ``q`` of the turned card is
  quadrant ``q - r`` of the printed one), and the lock;
- a **box-it** ``b``: row ``b`` of ``boxes``;
- a **swap** of ``slot``: that tray card; **pass** / overflow: their kind.

Every action also sees the game's ``features`` (scores, counts, phase).
These are slices of the observation, not judgements about moves: nothing
here knows what a move scores.  The network is ``score = v . tanh(W x +
c)``; the policy is the softmax of the scores over the legal actions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from .compact import RUN_FEATURES
from .encoding import CHANNELS, CHOICES, PLACE_FEATURES, CentredLayout, PlacesCodec

#: Numbers an action is described by (module doc): place row, turned card,
#: lock, box row, kind (place, box, swap, pass or overflow), and the features.
PLACE_ROW: Final = PLACE_FEATURES + RUN_FEATURES
CARD: Final = 20
LOCK: Final = 4
KINDS: Final = 4


def action_size(layout: CentredLayout) -> int:
    from .encoding import box_features

    return (
        PLACE_ROW
        + CARD
        + LOCK
        + box_features(layout.players)
        + KINDS
        + (layout.feature_layout.feature_size)
    )


def action_inputs(
    obs: np.ndarray, layout: CentredLayout, codec: PlacesCodec, actions: Sequence[int]
) -> np.ndarray:
    """``len(actions) x action_size``: each action's inputs (module doc)."""
    if layout.show_board:
        raise ValueError("the policy reads the compact observation (observation='compact')")
    places = layout.part(obs, "places")
    boxes = layout.part(obs, "boxes")
    feats = layout.part(obs, "features")
    tray = layout.feature(obs, "tray").reshape(4, 4, 5)
    nbox = boxes.shape[1]
    out = np.zeros((len(actions), action_size(layout)), dtype=np.float32)
    at_card = PLACE_ROW
    at_lock = at_card + CARD
    at_box = at_lock + LOCK
    at_kind = at_box + nbox
    out[:, at_kind + KINDS :] = feats
    for i, a in enumerate(actions):
        row = out[i]
        if a < codec.box_base:
            k, rest = divmod(a, CHANNELS)
            slot, choice = divmod(rest, CHOICES)
            rot, lock = divmod(choice, 4)
            row[:PLACE_ROW] = places[k]
            row[at_card:at_lock] = np.roll(tray[slot], rot, axis=0).ravel()
            row[at_lock + lock] = 1.0
            row[at_kind] = 1.0
        elif a < codec.swap_base:
            row[at_box:at_kind] = boxes[a - codec.box_base]
            row[at_kind + 1] = 1.0
        elif a < codec.pass_action:
            row[at_card:at_lock] = tray[a - codec.swap_base].ravel()
            row[at_kind + 2] = 1.0
        else:
            row[at_kind + 3] = 1.0
    return out


@dataclass
class Policy:
    """``score = v . tanh(W x + c)`` over each legal action's inputs, with
    Adam's moments for training."""

    inputs: int
    hidden: int = 64
    seed: int = 0
    params: dict[str, np.ndarray] = field(default_factory=dict)
    _m: dict[str, np.ndarray] = field(default_factory=dict)
    _v: dict[str, np.ndarray] = field(default_factory=dict)
    _t: int = 0

    def __post_init__(self) -> None:
        if not self.params:
            rng = np.random.default_rng(self.seed)
            self.params = {
                "W": rng.normal(0, 1 / np.sqrt(self.inputs), (self.hidden, self.inputs)),
                "c": np.zeros(self.hidden),
                "v": rng.normal(0, 1 / np.sqrt(self.hidden), self.hidden),
            }

    def probs(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The softmax over the actions ``x`` (rows) and the hidden layer."""
        h = np.tanh(x @ self.params["W"].T + self.params["c"])
        s = h @ self.params["v"]
        s -= s.max()
        e = np.exp(s)
        return e / e.sum(), h

    def grad(self, x: np.ndarray, taken: int, weight: float = 1.0) -> dict[str, np.ndarray]:
        """The gradient of ``weight * log p(taken)`` (to ascend)."""
        p, h = self.probs(x)
        ds = -p
        ds[taken] += 1.0
        ds *= weight
        v = self.params["v"]
        dh = np.outer(ds, v) * (1 - h * h)
        return {"W": dh.T @ x, "c": dh.sum(0), "v": h.T @ ds}

    def step(self, grads: dict[str, np.ndarray], lr: float = 1e-3) -> None:
        """One Adam step up the gradient."""
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
            self.params[name] += lr * mhat / (np.sqrt(vhat) + 1e-8)

    def save(self, path: str) -> None:
        arrays = {"hidden": np.array(self.hidden), "inputs": np.array(self.inputs), **self.params}
        np.savez(path, **arrays)  # type: ignore[arg-type]

    @classmethod
    def load(cls, path: str) -> Policy:
        data = np.load(path)
        params = {k: data[k] for k in ("W", "c", "v")}
        return cls(int(data["inputs"]), int(data["hidden"]), params=params)


def choose(
    policy: Policy,
    obs: np.ndarray,
    layout: CentredLayout,
    codec: PlacesCodec,
    actions: Sequence[int],
    rng: np.random.Generator | None = None,
) -> tuple[int, np.ndarray]:
    """An action (sampled with ``rng``, else the most likely) and its inputs."""
    x = action_inputs(obs, layout, codec, actions)
    p, _ = policy.probs(x)
    i = int(rng.choice(len(actions), p=p)) if rng is not None else int(np.argmax(p))
    return i, x


__all__: Any = ["Policy", "action_inputs", "action_size", "choose"]
