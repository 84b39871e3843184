"""A slow, deliberately naive reference implementation of RULES.md (test oracle only)."""
