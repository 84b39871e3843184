"""A slow, deliberately naive reference implementation of docs/spec.md (test oracle only)."""
