"""The project's own seeded generator (docs/spec.md, 'Game records and
notation', ``seed``).

SplitMix64 with rejection sampling for bounded integers: tiny, fast enough
for shuffling decks, and fully specified here, so that a seed gives the same
decks on every Python version and platform (``random.Random`` promises no
such thing across versions).
"""

from __future__ import annotations

from typing import Final, TypeVar

from .errors import InputError

_MASK: Final = (1 << 64) - 1
_T = TypeVar("_T")

#: Seeds are integers in [0, SEED_LIMIT).
SEED_LIMIT: Final = 1 << 64


class SplitMix64:
    """A deterministic 64-bit generator.  Not for secrets."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        if not 0 <= seed < SEED_LIMIT:
            raise InputError(f"seed must be an integer from 0 to {SEED_LIMIT - 1}")
        self.state = seed

    def next64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """A uniform integer in [0, n), n >= 1, without modulo bias."""
        if n <= 0:
            raise InputError("n must be positive")
        limit = SEED_LIMIT - SEED_LIMIT % n
        while True:
            v = self.next64()
            if v < limit:
                return v % n

    def shuffle(self, items: list[_T]) -> None:
        """Fisher-Yates, in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


def shuffled_decks(seed: int, decks: list[list[str]]) -> list[list[str]]:
    """Each deck shuffled in turn by one generator seeded with ``seed``."""
    gen = SplitMix64(seed)
    out = []
    for deck in decks:
        d = list(deck)
        gen.shuffle(d)
        out.append(d)
    return out
