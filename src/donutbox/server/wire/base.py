"""The base of every wire model: unknown fields are an error (a field the
server sends must be documented), and values are checked strictly (no
``"1"`` for 1, no ``"yes"`` for true)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Wire(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
