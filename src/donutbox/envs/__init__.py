"""Research environments: PettingZoo, Gymnasium and OpenSpiel (``donutbox[rl]``).

- ``aec_env(rules=..., players=2)``: a PettingZoo AEC environment;
- ``DonutboxEnv`` / ``gymnasium.make("donutbox/Donutbox-v0")``: one learner
  against agents from ``donutbox.ai``;
- ``register_openspiel()``: registers the OpenSpiel game ``python_donutbox``;
- ``PlacesCodec`` / ``Encoder``: the encoding all three share by default
  (``encoding.py``: actions against the open places, a board centred on the
  play, bounds checked and flagged in ``info``); ``ActionCodec`` /
  ``ObservationLayout``: the older fixed-window encoding (``codec.py``,
  ``observation.py``, ``encoding="window"``);
- ``max_game_length(players)``: the proven bound on a game's actions
  (``length.py``).

See docs/research.md.  Importing this package registers the Gymnasium
environment when Gymnasium is installed; the PettingZoo and OpenSpiel parts
load on first use, so each needs only its own library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .codec import DEFAULT_WINDOW, ActionCodec, OutsideWindow, default_window
from .common import outcome
from .encoding import CentredLayout, Encoder, PlacesCodec, default_board, default_boxes
from .length import max_game_length
from .observation import ObservationEncoder, ObservationLayout

if TYPE_CHECKING:
    from .gym_env import DonutboxEnv
    from .openspiel_game import register_openspiel
    from .pettingzoo_env import DonutboxAEC, aec_env

_LAZY = {
    "aec_env": ("pettingzoo_env", "pettingzoo"),
    "DonutboxAEC": ("pettingzoo_env", "pettingzoo"),
    "DonutboxEnv": ("gym_env", "gymnasium"),
    "register_openspiel": ("openspiel_game", "open_spiel"),
}

try:
    from .gym_env import register as _register_gym
except ImportError:  # gymnasium (or numpy) is not installed
    pass
else:
    _register_gym()


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, package = _LAZY[name]
    import importlib

    try:
        mod = importlib.import_module(f"{__name__}.{module}")
    except ImportError as err:
        raise ImportError(
            f"donutbox.envs.{name} needs {package}: pip install 'donutbox[rl]' ({err})"
        ) from err
    return getattr(mod, name)


__all__ = [
    "DEFAULT_WINDOW",
    "ActionCodec",
    "CentredLayout",
    "DonutboxAEC",
    "DonutboxEnv",
    "Encoder",
    "ObservationEncoder",
    "ObservationLayout",
    "OutsideWindow",
    "PlacesCodec",
    "aec_env",
    "default_board",
    "default_boxes",
    "default_window",
    "max_game_length",
    "outcome",
    "register_openspiel",
]
