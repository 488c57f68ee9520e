"""Judging a codec: the vectors, their runner, differential properties."""
