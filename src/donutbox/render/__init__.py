"""Drawings of the counter and its cards: text for terminals, SVG and the print-and-play PDF."""
