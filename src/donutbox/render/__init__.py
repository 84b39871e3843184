"""Drawings of the counter: text for terminals (SVG and PDF come later)."""
