"""Core values, errors and seams shared by every layer; depends on nothing else in raggity."""
