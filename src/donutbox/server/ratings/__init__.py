"""Ratings: the model and the scale players see (``model.py``), settling
lobby games, the history and the leaderboard (``service.py``), every rating
recomputed without a voided game (``replay.py``)."""
